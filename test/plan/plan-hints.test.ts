/**
 * Every TC7001 problem of a plan .json carries a hint. A problem the zod schema found (a wrong type,
 * a value not allowed, a bound, an unknown key) printed none: its hint now says what the field takes,
 * from the zod issue, in the words of the catalogue (plan/errors.ts PLAN_HINTS, PLAN_EXPECTS); graph
 * problems and constants out of range have theirs too. No call site of a TC7001 problem writes a hint as
 * a literal.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatUserError, PLAN_EXPECTS, PLAN_HINTS, planExpects, planHint } from "../../plan/errors.js";
import { PlanError, parsePlan } from "../../plan/schema.js";

// The fixture is a tcod.plan/1 file: loaded (converted to tcod.plan/2) once, then edited.
const PLAN = JSON.parse(JSON.stringify(parsePlan(JSON.parse(readFileSync("test/fixtures/plans/texthouse-f2b-small.json", "utf8")))));

function planError(edit: (p: any) => void): PlanError {
  const p = structuredClone(PLAN);
  edit(p);
  try { parsePlan(p); } catch (e) { if (e instanceof PlanError) return e; throw e; }
  throw new Error("expected a PlanError");
}

const takes = (expected: string) => planHint("takes", { expected });
const update = (p: any) => p.graph.nodes[6].params;

describe("TC7001 hints: what a field takes, from the zod issue", () => {
  const cases: [string, (p: any) => void, string, string][] = [
    ["a string for a number", (p) => { p.clock.steps = "ten"; }, "$.clock.steps", takes("a number")],
    ["a missing field", (p) => { delete p.clock.seed; }, "$.clock.seed", takes("a number")],
    ["a fraction for an integer", (p) => { p.clock.steps = 1.5; }, "$.clock.steps", takes("an integer")],
    ["below a bound", (p) => { p.clock.steps = 0; }, "$.clock.steps", takes("a number ≥ 1")],
    ["above a bound", (p) => { p.graph.nodes[0].params.tasksPerStep = 1e9; }, "$.graph.nodes[0].params.tasksPerStep", takes("a number ≤ 65536")],
    ["a value not allowed", (p) => { update(p).optimizer.kind = "adam"; }, "$.graph.nodes[6].params.optimizer.kind", takes('one of "adamw"')],
    ["an unknown node kind", (p) => { p.graph.nodes[9].kind = "Checkpointer"; }, "$.graph.nodes[9].kind",
      takes('one of "TaskSampler", "EpisodePlanner", "Probe", "DepthRule", "Demonstrations", "Rollout", "TeacherScore", "TurnStats", "TurnWeights", "GroupAdvantage", "Advantage", "Update", "WeightSync", "Evaluate", "Checkpoint"')],
    ["a string where a number or an expression goes", (p) => { update(p).optimizer.lr = "0.01"; }, "$.graph.nodes[6].params.optimizer.lr", takes("a number or an object")],
    ["an expression reference misspelt", (p) => { update(p).optimizer.lr = { exp: "lr" }; }, "$.graph.nodes[6].params.optimizer.lr", takes('a number or an object with "expr" (a string)')],
    ["a string not of its pattern", (p) => { p.sources.push({ path: "c.tcod", sha256: "abc" }); }, "$.sources[0].sha256", takes("a string matching /^[0-9a-f]{64}$/")],
    ["an unknown key", (p) => { update(p).optimiser = {}; }, "$.graph.nodes[6].params", planHint("noSuchField", { keys: '"optimiser"' })],
  ];
  for (const [name, edit, path, hint] of cases) {
    it(name, () => {
      const e = planError(edit);
      expect(e.issues.map((i) => [i.path, i.hint])).toEqual([[path, hint]]);
    });
  }

  it("prints as `FILE error TC7001: message (at PATH)` and `hint: …`", () => {
    const e = planError((p) => { p.clock.steps = "ten"; });
    expect(formatUserError(new PlanError(e.message, e.issues, "p.json"))).toBe(
      "p.json error TC7001: Invalid input: expected number, received string (at $.clock.steps)\n"
      + "  hint: This field takes a number; plans the compiler writes always load: recompile it from its source with `tcod compile FILE.tcod` rather than editing the .json by hand.");
  });
});

describe("TC7001 hints of the checks after the schema", () => {
  it("a graph problem", () => {
    const e = planError((p) => { p.graph.edges[0].from = "nowhere.tasks"; });
    expect(e.issues.length).toBeGreaterThan(0);
    for (const i of e.issues) expect(i.hint).toBe(planHint("graph"));
  });

  it("a constant out of its range: the range to choose from", () => {
    const e = planError((p) => { update(p).optimizer.lr = -0.1; });
    expect(e.issues.map((i) => [i.message, i.hint])).toEqual([["lr must be > 0, got -0.1", planHint("range", { range: "> 0" })]]);
    expect(planHint("range", { range: "> 0" })).toBe("Choose a value > 0: the range the compiler checks in the source (plan/ranges.ts).");
  });
});

describe("the catalogue of plan hints", () => {
  const root = join(__dirname, "..", "..");
  // The files whose problems are TC7001: the schema, the graph, expression and range checks, v1 conversion.
  const sources = ["schema.ts", "graph.ts", "expr-check.ts", "ranges.ts", "convert.ts"].map((f) => join(root, "plan", f));

  it("no call site of a TC7001 problem writes a hint as a string literal", () => {
    const offenders = sources.flatMap((f) => readFileSync(f, "utf8").split("\n").map((l, n) => [f, n + 1, l] as const))
      .filter(([, , l]) => /\bhint: ["'`]/.test(l) && !/^\s*(\/\/|\*)/.test(l)).map(([f, n]) => `${f}:${n}`);
    expect(offenders).toEqual([]);
  });

  it("every template is used, and fills its parameters", () => {
    const text = sources.map((f) => readFileSync(f, "utf8")).join("\n");
    for (const name of Object.keys(PLAN_HINTS)) expect(text, name).toMatch(new RegExp(`planHint\\("${name}"`));
    for (const name of Object.keys(PLAN_EXPECTS)) {
      const used = new RegExp(`planExpects\\("${name}"`).test(text) || new RegExp(`case "${name}"`).test(text);
      expect(used, name).toBe(true);
    }
    expect(planExpects("atLeast", { what: "a number", bound: 1 })).toBe("a number ≥ 1");
    expect(planExpects("either", { first: "a number", second: "an object" })).toBe("a number or an object");
  });
});
