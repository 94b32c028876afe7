/**
 * tcod.plan/1 → tcod.plan/2. A plan/1 graph lists its nodes (edges were never read); plan/2 wires
 * typed ports and makes each method's extra work a node. The conversion reads the plan/1 nodes and
 * rebuilds the graph with the same builder the compiler uses (plan/build.ts):
 * - EpisodePlanner.adaptive → a Probe node and a DepthRule node (the TurnOPD branch);
 * - grpo term {normalize, eps} → a GroupAdvantage node wired into Advantage.grpo;
 * - an sft term → a Demonstrations node on the train env;
 * - TeacherScore gains `distributions` (true when an opd term uses the "full" estimator, or a gkd term);
 * - Update gains `logRatioClamp` (DEFAULT_LOG_RATIO_CLAMP: the one importance-sampling definition);
 * - Evaluate gains the Rollout node's `student` and `agent`.
 * The result is validated as a plan/2 like any other. Anything the conversion cannot read is an
 * error that names the command that rewrites the plan from its source; so is the embedded backend's
 * `forwardKl`, which the gkd loss term replaced.
 */
import { buildGraph, needsTeacherDistributions, type GraphParts } from "./build.js";
import { DEFAULT_LOG_RATIO_CLAMP } from "./defaults.js";
import { PLAN_SCHEMA_ID, PLAN_SCHEMA_V1 } from "./version.js";

type Json = Record<string, unknown>;

export class PlanVersionError extends Error {}

const recompile = (plan: Json): string => {
  const src = Array.isArray(plan.sources) ? (plan.sources[0] as Json | undefined)?.path : undefined;
  return typeof src === "string" ? `tcod compile ${src}` : "tcod compile FILE.tcod";
};

/** A plan/2 object from a plan/1 object (not yet validated). */
export function convertPlanV1(plan: Json): Json {
  const graph = plan.graph as { nodes?: Json[] } | undefined;
  const nodes = Array.isArray(graph?.nodes) ? graph!.nodes : undefined;
  const fail = (why: string): never => {
    throw new PlanVersionError(`this plan is ${PLAN_SCHEMA_V1} and cannot be converted to ${PLAN_SCHEMA_ID} (${why}); rewrite it from its source with \`${recompile(plan)}\``);
  };
  if (!nodes) return fail("it has no graph.nodes");
  const models = ((plan.resources as Json | undefined)?.models ?? {}) as Record<string, Json | undefined>;
  for (const [name, m] of Object.entries(models)) {
    const backend = m?.backend as Json | undefined;
    if (backend?.kind === "embedded" && backend.forwardKl !== undefined) {
      fail(`model "${name}" uses the embedded backend's forwardKl, which the gkd loss term replaced: write \`loss: gkd(beta: ${String(backend.forwardKl)})\` instead of the opd "full" term and the backend's forward_kl`);
    }
  }
  const one = (kind: string): Json | undefined => nodes.find((n) => n.kind === kind)?.params as Json | undefined;
  const need = (kind: string): Json => one(kind) ?? fail(`it has no ${kind} node`);
  const planner = { ...need("EpisodePlanner") };
  const adaptive = planner.adaptive as Json | undefined;
  delete planner.adaptive;
  const rollout = need("Rollout");
  const advantage = need("Advantage");
  const terms = (advantage.terms as Json[] | undefined) ?? fail("its Advantage node has no terms");
  const grpo = terms.find((t) => t.kind === "grpo");
  const tasks = need("TaskSampler");
  const parts: GraphParts = {
    tasks: tasks as GraphParts["tasks"],
    planner: planner as GraphParts["planner"],
    rollout: rollout as GraphParts["rollout"],
    teacher: { ...need("TeacherScore"), distributions: needsTeacherDistributions(terms) } as GraphParts["teacher"],
    ...(adaptive ? { depth: {
      probe: { env: rollout.env, every: adaptive.probeEvery, episodes: adaptive.probeEpisodes, maxTurns: planner.maxTurns, truncatedReward: planner.truncatedReward },
      rule: { rule: adaptive.rule, initial: adaptive.initial, min: adaptive.min, maxTurns: planner.maxTurns },
    } as GraphParts["depth"] } : {}),
    ...(terms.some((t) => t.kind === "sft") ? { demos: { env: rollout.env, agent: rollout.agent, maxTurns: planner.maxTurns } as GraphParts["demos"] } : {}),
    ...(one("TurnWeights") ? { turnWeights: one("TurnWeights") as GraphParts["turnWeights"] } : {}),
    ...(grpo ? { grpo: { normalize: grpo.normalize, eps: grpo.eps } as GraphParts["grpo"] } : {}),
    advantage: { ...advantage, terms: terms.map((t) => (t.kind === "grpo" ? { kind: "grpo", coef: t.coef } : t)) } as GraphParts["advantage"],
    update: { logRatioClamp: DEFAULT_LOG_RATIO_CLAMP, ...need("Update") } as GraphParts["update"],
    sync: need("WeightSync") as GraphParts["sync"],
    evals: nodes.filter((n) => n.kind === "Evaluate").map((n) => ({ ...(n.params as Json), student: rollout.student, agent: rollout.agent }) as GraphParts["evals"][number]),
    ...(one("Checkpoint") ? { checkpoint: one("Checkpoint") as GraphParts["checkpoint"] } : {}),
  };
  return { ...plan, schema: PLAN_SCHEMA_ID, graph: buildGraph(parts) };
}
