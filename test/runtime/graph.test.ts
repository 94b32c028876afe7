/**
 * The execution graph is what runs: a plan whose graph is edited is refused on load with a message
 * naming the edge (or node), or runs as the edited graph says. Also: plan/1 files load through the
 * conversion and equal what the compiler writes today.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePlan, PlanError, stringifyPlan, type Plan } from "../../plan/schema.js";
import { checkGraph, topoOrder } from "../../plan/graph.js";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics, type TrainRowMetrics } from "../../runtime/metrics.js";
import { CounterEnv, ScriptedStudent, ScriptedTeacher } from "./doubles.js";
import { testPlan } from "./plans.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const fixture = (name: string): unknown => JSON.parse(readFileSync(join(__dirname, "..", "fixtures", "lower", name, "plan.json"), "utf8"));
const edit = (plan: unknown, f: (g: { nodes: { id: string; kind: string; params: Record<string, unknown> }[]; edges: { from: string; to: string; clock?: boolean }[] }) => void): unknown => {
  const p = structuredClone(plan) as { graph: Parameters<typeof f>[0] };
  f(p.graph);
  return p;
};
const refusal = (plan: unknown): string => {
  try { parsePlan(plan); } catch (e) { if (e instanceof PlanError) return e.message; throw e; }
  throw new Error("the plan was accepted");
};

describe("plan graph checks on load", () => {
  it("a compiled plan loads as it is", () => {
    for (const c of ["atod-tdur", "turnopd-progressive", "tcod-b2f", "tcod-f2b"]) expect(checkGraph(parsePlan(fixture(c)))).toEqual([]);
  });

  it("removing a node is refused, naming the edges left dangling and the inputs left unfed", () => {
    const msg = refusal(edit(fixture("tcod-f2b"), (g) => { g.nodes = g.nodes.filter((n) => n.id !== "teacher"); }));
    expect(msg).toContain("edge rollout.episodes → teacher.episodes: there is no node \"teacher\"");
    expect(msg).toContain("edge teacher.scores → stats.scores: there is no node \"teacher\"");
    const unfed = refusal(edit(fixture("tcod-f2b"), (g) => {
      g.nodes = g.nodes.filter((n) => n.id !== "sync");
      g.edges = g.edges.filter((e) => !e.from.startsWith("sync.") && !e.to.startsWith("sync."));
    }));
    expect(unfed).toContain(`Rollout node "rollout": required input rollout.policy (Weights) has no edge`);
  });

  it("rewiring an edge between ports of different types is refused, naming the edge and both types", () => {
    const msg = refusal(edit(fixture("tcod-f2b"), (g) => { g.edges.find((e) => e.to === "stats.scores")!.from = "rollout.episodes"; }));
    expect(msg).toContain("edge rollout.episodes → stats.scores: rollout.episodes carries Episodes but stats.scores takes TeacherScores");
  });

  it("a cycle that does not pass through the step clock is refused, naming its edges", () => {
    const back = refusal(edit(fixture("tcod-f2b"), (g) => { for (const e of g.edges) delete e.clock; }));
    expect(back).toContain(`edge sync.policy → rollout.policy: the learner's output reaches the explorer in the next step; mark the edge "clock": true`);
    // TurnOPD's cap computed from the very episodes it caps: depth → planner → rollout → teacher → depth
    const cycle = refusal(edit(fixture("turnopd-progressive"), (g) => { g.edges.find((e) => e.to === "depth.scores")!.from = "teacher.scores"; }));
    expect(cycle).toContain("the graph has a cycle that does not pass through the step clock: planner.plans → rollout.plans, rollout.episodes → teacher.episodes, teacher.scores → depth.scores, depth.depth → planner.depth");
  });

  it("unknown ports, doubly fed inputs and learner → explorer edges without the clock are refused by name", () => {
    const msg = refusal(edit(fixture("tcod-f2b"), (g) => {
      g.edges.push({ from: "planner.plans", to: "rollout.plan" });
      g.edges.push({ from: "tasks.tasks", to: "planner.tasks" });
    }));
    expect(msg).toContain(`edge planner.plans → rollout.plan: Rollout node "rollout" has no input "plan" (inputs: plans: EpisodePlans, policy: Weights)`);
    expect(msg).toContain("edge tasks.tasks → planner.tasks: input planner.tasks is already fed by edge tasks.tasks → planner.tasks");
  });

  it("loss terms and method nodes agree: a grpo term without its GroupAdvantage branch is refused", () => {
    const msg = refusal(edit(fixture("atod-tdur"), (g) => {
      g.nodes = g.nodes.filter((n) => n.kind !== "GroupAdvantage");
      g.edges = g.edges.filter((e) => !e.from.startsWith("grpo.") && !e.to.startsWith("grpo."));
    }));
    expect(msg).toContain(`Advantage node "advantage" has a grpo term but its input advantage.grpo has no edge`);
  });

  it("a gkd term, like opd \"full\", needs the teacher's full distributions: a TeacherScore without them is refused", () => {
    expect(checkGraph(parsePlan(fixture("embedded-options")))).toEqual([]);
    const msg = refusal(edit(fixture("embedded-options"), (g) => { g.nodes.find((n) => n.id === "teacher")!.params.distributions = false; }));
    expect(msg).toContain(`the gkd term needs the teacher's full distributions, but TeacherScore node "teacher" (edge teacher.scores → stats.scores) has distributions: false`);
  });

  it("the scheduling order is topological, ties broken by the plan's node order", () => {
    const plan = parsePlan(fixture("turnopd-progressive"));
    const explore = plan.graph.nodes.filter((n) => ["TaskSampler", "EpisodePlanner", "Probe", "Rollout", "TeacherScore", "DepthRule"].includes(n.kind));
    expect(topoOrder(explore, plan.graph.edges).map((n) => n.id))
      .toEqual(["tasks", "probe", "probe-rollout", "probe-teacher", "depth", "planner", "rollout", "teacher"]);
  });
});

describe("the run follows the edited graph", () => {
  const run = async (plan: Plan) => {
    const student = new ScriptedStudent(), teacher = new ScriptedTeacher();
    const runDir = mkdtempSync(join(tmpdir(), "tcod-graph-"));
    await runPlan(plan, { runDir, faults: { maxRetries: 2, backoffMs: 0 }, models: async () => ({ student, teacher, tokenizer: student.tokenizer }), envFactory: () => new CounterEnv() });
    return readMetrics(join(runDir, "metrics.jsonl")).filter((r): r is TrainRowMetrics => r.kind === "train");
  };
  const adaptive = { probeEvery: 2, probeEpisodes: 4, rule: { kind: "coverage" as const, keep: 0.6 }, initial: 2, min: 1 };

  it("TurnOPD without the edge depth.depth → planner.depth: the probes still run, the cap no longer binds the episodes", async () => {
    const plan = testPlan({ steps: 4, maxTurns: 8, adaptive });
    const withCap = await run(plan);
    expect(withCap.map((r) => r.horizon)).toEqual(withCap.map((r) => r.adaptiveCap));
    const cut = parsePlan(edit(JSON.parse(stringifyPlan(plan)), (g) => { g.edges = g.edges.filter((e) => e.to !== "planner.depth"); }));
    const rows = await run(cut);
    expect(rows.map((r) => r.horizon)).toEqual([8, 8, 8, 8]);
    expect(rows.map((r) => r.adaptiveCap)).toEqual(withCap.map((r) => r.adaptiveCap)); // the probe branch still moved the cap
  });

  it("without the TurnWeights node (edges removed), advantages are unweighted: the same run as a plan compiled without weights", async () => {
    const base = testPlan({ steps: 2 });
    const weighted = JSON.parse(stringifyPlan(base)) as Plan;
    weighted.exprs.turn_weights = { level: "turn", unit: "", tree: { op: "const", value: 3 } };
    weighted.graph.nodes.push({ id: "weights", kind: "TurnWeights", params: { weight: { expr: "turn_weights" } } });
    weighted.graph.edges.push({ from: "stats.stats", to: "weights.stats" }, { from: "weights.weights", to: "advantage.weights" });
    const a = await run(base), b = await run(parsePlan(weighted));
    expect(b.map((r) => r.loss)).toEqual(a.map((r) => expect.closeTo(3 * r.loss, 9)));
  });
});

describe("tcod.plan/1", () => {
  it("loads through the conversion and equals the plan the compiler writes now", () => {
    for (const c of ["atod-tdur", "turnopd-progressive", "tcod-b2f"]) {
      const v1 = JSON.parse(readFileSync(join(__dirname, "..", "plan", "v1", `${c}.plan.json`), "utf8"));
      expect(v1.schema).toBe("tcod.plan/1");
      // the graph and its nodes as the compiler wires them today (other parts of the plan, e.g. expression origins, may have moved on since)
      const now = parsePlan(fixture(c)), converted = parsePlan(v1);
      expect(converted.schema).toBe("tcod.plan/2");
      // plan/1 compilers always wrote Advantage rows ("turn"); the conversion keeps it (the plan runs as it did), today's compiler writes rows only when set
      const graph = JSON.parse(stringifyPlan(converted)).graph as { nodes: { kind: string; params: Record<string, unknown> }[] };
      const adv = graph.nodes.find((n) => n.kind === "Advantage")!;
      expect(adv.params.rows).toBe(v1.graph.nodes.find((n: { kind: string }) => n.kind === "Advantage").params.rows);
      if (now.graph.nodes.find((n) => n.kind === "Advantage")!.params.rows === undefined) delete adv.params.rows;
      expect(graph).toEqual(JSON.parse(stringifyPlan(now)).graph);
    }
  });

  it("a plan/1 file the conversion cannot read is refused, naming the command that rewrites it", () => {
    const msg = refusal({ schema: "tcod.plan/1", name: "x", sources: [{ path: "examples/texthouse/opd.tcod", sha256: "0".repeat(64) }], graph: { nodes: [] } });
    expect(msg).toContain("tcod compile examples/texthouse/opd.tcod");
  });

  it("a plan/1 file with the embedded backend's forwardKl is refused, pointing to the gkd term that replaced it", () => {
    const v1 = JSON.parse(readFileSync(join(__dirname, "..", "plan", "v1", "embedded-options.plan.json"), "utf8"));
    expect(v1.resources.models.student.backend.forwardKl).toBe(0.5);
    const msg = refusal(v1);
    expect(msg).toContain(`model "student" uses the embedded backend's forwardKl, which the gkd loss term replaced: write \`loss: gkd(beta: 0.5)\``);
    expect(msg).toContain("tcod compile");
  });
});
