/**
 * Builds the execution graph of a method from its parts: the standard OPD chain, plus the nodes a
 * method adds — the TurnOPD probe branch (Probe → Rollout → TeacherScore → DepthRule → the
 * planner's depth), SFT demonstrations (→ TurnStats.demos), the GRPO branch (GroupAdvantage →
 * Advantage.grpo), T-DUR turn weights (→ Advantage.weights) — wired by their ports. The compiler
 * lowers a curriculum to these parts (compiler/graph.ts); the plan/1 conversion and tests use the
 * same builder, so every plan is wired one way.
 */
import { NODE_IDS } from "./nodes.js";
import type { NodeOf, Plan, PlanEdge, PlanNode } from "./schema.js";

type P<K extends PlanNode["kind"]> = NodeOf<K>["params"];

/**
 * Does a loss need the teacher's full next-token distributions (TeacherScore `distributions`)? Its
 * exact-KL terms do: opd with the "full" estimator (reverse KL) and gkd (forward/reverse mixture).
 */
export const needsTeacherDistributions = (terms: readonly { kind?: unknown; estimator?: unknown }[]): boolean =>
  terms.some((t) => (t.kind === "opd" && t.estimator === "full") || t.kind === "gkd");

export interface GraphParts {
  tasks: P<"TaskSampler">;
  planner: P<"EpisodePlanner">;
  rollout: P<"Rollout">;
  teacher: P<"TeacherScore">;
  /** TurnOPD adaptive depth: the probe and the rule that moves the cap. */
  depth?: { probe: P<"Probe">; rule: P<"DepthRule"> };
  /** SFT demonstrations (the loss has an sft term). */
  demos?: P<"Demonstrations">;
  turnWeights?: P<"TurnWeights">;
  /** GRPO's group advantages (the loss has a grpo term). */
  grpo?: P<"GroupAdvantage">;
  advantage: P<"Advantage">;
  update: P<"Update">;
  sync: P<"WeightSync">;
  /** Evaluate nodes by name (ids `eval-<name>`). */
  evals: P<"Evaluate">[];
  checkpoint?: P<"Checkpoint">;
}

export function buildGraph(g: GraphParts): Plan["graph"] {
  const nodes: PlanNode[] = [];
  const edges: PlanEdge[] = [];
  const add = <K extends PlanNode["kind"]>(id: string, kind: K, params: P<K>) => nodes.push({ id, kind, params } as PlanNode);
  const wire = (from: string, to: string, clock = false) => edges.push(clock ? { from, to, clock } : { from, to });
  const I = NODE_IDS;

  add(I.TaskSampler, "TaskSampler", g.tasks);
  add(I.EpisodePlanner, "EpisodePlanner", g.planner);
  add(I.Rollout, "Rollout", g.rollout);
  add(I.TeacherScore, "TeacherScore", g.teacher);
  wire(`${I.TaskSampler}.tasks`, `${I.EpisodePlanner}.tasks`);
  wire(`${I.EpisodePlanner}.plans`, `${I.Rollout}.plans`);
  wire(`${I.Rollout}.episodes`, `${I.TeacherScore}.episodes`);
  if (g.demos) {
    add(I.Demonstrations, "Demonstrations", g.demos);
    wire(`${I.TaskSampler}.tasks`, `${I.Demonstrations}.tasks`);
  }
  if (g.depth) {
    const rollout = `${I.Probe}-${I.Rollout}`, teacher = `${I.Probe}-${I.TeacherScore}`;
    add(I.Probe, "Probe", g.depth.probe);
    add(rollout, "Rollout", g.rollout);
    add(teacher, "TeacherScore", { ...g.teacher, topk: 0, distributions: false });
    add(I.DepthRule, "DepthRule", g.depth.rule);
    wire(`${I.Probe}.plans`, `${rollout}.plans`);
    wire(`${rollout}.episodes`, `${teacher}.episodes`);
    wire(`${teacher}.scores`, `${I.DepthRule}.scores`);
    wire(`${I.DepthRule}.depth`, `${I.EpisodePlanner}.depth`);
  }

  add(I.TurnStats, "TurnStats", {});
  wire(`${I.TeacherScore}.scores`, `${I.TurnStats}.scores`);
  if (g.demos) wire(`${I.Demonstrations}.demos`, `${I.TurnStats}.demos`);
  if (g.turnWeights) {
    add(I.TurnWeights, "TurnWeights", g.turnWeights);
    wire(`${I.TurnStats}.stats`, `${I.TurnWeights}.stats`);
  }
  if (g.grpo) {
    add(I.GroupAdvantage, "GroupAdvantage", g.grpo);
    wire(`${I.TurnStats}.stats`, `${I.GroupAdvantage}.stats`);
  }
  add(I.Advantage, "Advantage", g.advantage);
  wire(`${I.TurnStats}.stats`, `${I.Advantage}.stats`);
  if (g.turnWeights) wire(`${I.TurnWeights}.weights`, `${I.Advantage}.weights`);
  if (g.grpo) wire(`${I.GroupAdvantage}.advantages`, `${I.Advantage}.grpo`);
  add(I.Update, "Update", g.update);
  add(I.WeightSync, "WeightSync", g.sync);
  wire(`${I.Advantage}.advantages`, `${I.Update}.advantages`);
  wire(`${I.Update}.weights`, `${I.WeightSync}.weights`);
  wire(`${I.WeightSync}.policy`, `${I.Rollout}.policy`, true);
  if (g.depth) wire(`${I.WeightSync}.policy`, `${I.Probe}-${I.Rollout}.policy`, true);

  for (const ev of g.evals) {
    const id = `${I.Evaluate}-${ev.name}`;
    add(id, "Evaluate", ev);
    wire(`${I.WeightSync}.policy`, `${id}.policy`);
  }
  if (g.checkpoint) add(I.Checkpoint, "Checkpoint", g.checkpoint);
  return { nodes, edges };
}
