/**
 * A hand-edited plan's expressions are checked on load (plan/expr-check.ts, TC7001 with the JSON
 * path and a hint): a node param `{ "expr": NAME }` naming no expression of `plan.exprs` was an
 * internal error (a stack trace) in `tcod export trinity`, and an operator with the wrong number of
 * arguments (`add` of one) loaded, evaluated to NaN and exported without a word. A plan nested
 * thousands of levels deep ran zod's stack out: an internal error in `tcod run`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatUserError } from "../../plan/errors.js";
import { PlanError, parsePlan } from "../../plan/schema.js";

const PLAN = JSON.parse(readFileSync("test/fixtures/plans/texthouse-f2b-small.json", "utf8"));

function planError(edit: (p: any) => void): PlanError {
  const p = structuredClone(PLAN);
  edit(p);
  try { parsePlan(p); } catch (e) { if (e instanceof PlanError) return e; throw e; }
  throw new Error("expected a PlanError");
}

describe("plan expressions on load", () => {
  it("the compiled plan loads", () => {
    expect(() => parsePlan(structuredClone(PLAN))).not.toThrow();
  });

  it("a node param referring to a missing expression names the param and the expressions there are", () => {
    const e = planError((p) => { p.graph.nodes[1].params.horizon = { expr: "missing" }; });
    expect(e.issues.map((i) => i.path)).toEqual(["$.graph.nodes[1].params.horizon.expr"]);
    expect(e.issues[0]!.message).toBe('the EpisodePlanner node "planner" refers to expression "missing", which is not in $.exprs (it has "horizon")');
    const text = formatUserError(new PlanError(e.message, e.issues, "p.json"));
    expect(text).toMatch(/^p\.json error TC7001: .* \(at \$\.graph\.nodes\[1\]\.params\.horizon\.expr\)\n  hint: .*tcod compile/);
  });

  it("an operator with the wrong number of arguments names its tree path", () => {
    const e = planError((p) => {
      p.exprs.horizon.tree.args[0] = { op: "add", args: [{ op: "const", value: 1 }] };
      p.exprs.horizon.tree.args[1] = { op: "clamp", args: [{ op: "const", value: 1 }, { op: "const", value: 1 }] };
    });
    expect(e.issues.map((i) => [i.path, i.message])).toEqual([
      ["$.exprs.horizon.tree.args[1].args", "operator clamp takes 3 arguments, got 2"],
      ["$.exprs.horizon.tree.args[0].args", "operator add takes 2 arguments, got 1"],
    ]);
  });

  it("a stateful feedback operator without its arguments is refused (it would read args[2] of nothing at run time)", () => {
    const e = planError((p) => { p.exprs.horizon.tree = { op: "ema", args: [{ op: "const", value: 1 }] }; });
    expect(e.issues.map((i) => [i.path, i.message])).toEqual([["$.exprs.horizon.tree.args", "operator ema takes 3 arguments, got 1"]]);
  });
});

describe("a plan nested too deeply", () => {
  it("is TC7001 with the path where it goes deep, not an internal stack overflow (RangeError from the schema)", () => {
    const e = planError((p) => {
      let t: any = { op: "const", value: 1 };
      for (let i = 0; i < 20_000; i++) t = { op: "neg", args: [t] };
      p.exprs.horizon.tree = t;
    });
    expect(e.issues).toHaveLength(1);
    expect(e.issues[0]!.path).toBe("$.exprs.horizon.tree.args[0].args[0].args[0].args[0].args…");
    expect(e.issues[0]!.message).toBe("the plan is nested 40,004 levels deep here, deeper than tcod can read");
    expect(e.issues[0]!.hint).toMatch(/tcod compile/);
  });
});

describe("an unknown operator or variable", () => {
  it("is named at its path, with the ones there are (was: zod's bare 'Invalid input' at the tree)", () => {
    const op = planError((p) => { p.exprs.horizon.tree.args[0] = { op: "bogus", args: [] }; });
    expect(op.issues.map((i) => i.path)).toEqual(["$.exprs.horizon.tree.args[0].op"]);
    expect(op.issues[0]!.message).toMatch(/'const' \| 'var' \| 'add'/);
    const v = planError((p) => { p.exprs.horizon.tree.args[0] = { op: "var", name: "nope" }; });
    expect(v.issues.map((i) => i.path)).toEqual(["$.exprs.horizon.tree.args[0].name"]);
    expect(v.issues[0]!.message).toMatch(/expected one of "step"\|"total_steps"/);
  });
});
