/**
 * The plan's graph as the runtime schedules it. The plan was checked on load (plan/graph.ts); here
 * it is split by phase into the explorer's nodes, the learner's nodes and the clock's nodes, each
 * in a deterministic topological order, and nodes run through their executors (nodes/index.ts) with
 * the values their input edges carry.
 *
 * - An edge from an explorer node into the learner is a *boundary* edge: its data passes through
 *   the replay buffer (runtime/pipeline.ts), so the learner may take it steps later.
 * - A *scorer* is a TeacherScore node whose outputs all cross the boundary: with staleness ≥ 1 the
 *   pipeline runs it for step t − 1 while step t rolls out.
 * - A `clock` edge delivers the latest value its source produced (at an earlier step); before the
 *   source first runs, a Weights value stands for the initial student.
 * A node runs when every required input has a value; a node with a missing required input is skipped
 * for the step (e.g. the probe branch on steps without a probe).
 */
import { UserError } from "../plan/errors.js";
import { NODE_SPECS, type PortSpec } from "../plan/nodes.js";
import { parseEndpoint, phaseOf, topoOrder } from "../plan/graph.js";
import type { NodeOf, Plan, PlanEdge, PlanNode } from "../plan/schema.js";
import { EXECUTORS } from "./nodes/index.js";
import type { PortData, PortValues, StepContext } from "./nodes/executor.js";
import type { RunContext } from "./nodes/context.js";
import type { RowShape } from "./replay.js";

/** A plan whose graph this runtime cannot run (TC7002). */
export class PlanShapeError extends UserError {
  readonly code = "TC7002";
}

export interface RunGraph {
  explore: PlanNode[];
  learn: PlanNode[];
  clock: PlanNode[];
  edges: readonly PlanEdge[];
  boundary: PlanEdge[];
  /** The TeacherScore node whose scores feed the learner (deferred with staleness ≥ 1). */
  scorer: NodeOf<"TeacherScore">;
  /** Explorer nodes that only serve the planner's depth input (TurnOPD probe): timed as "probe". */
  probeBranch: Set<string>;
  turnStats: NodeOf<"TurnStats">;
  update: NodeOf<"Update">;
  /** The Advantage node feeding Update (metrics: coefficients, blend weight). */
  advantage: NodeOf<"Advantage">;
  sync: NodeOf<"WeightSync">;
  taskSampler: NodeOf<"TaskSampler">;
  planner: NodeOf<"EpisodePlanner">;
}

/** Values produced in one pass, by node id then port. */
export type Values = Map<string, PortValues>;

const only = <K extends PlanNode["kind"]>(nodes: readonly PlanNode[], kind: K, why: string): NodeOf<K> => {
  const all = nodes.filter((n) => n.kind === kind) as NodeOf<K>[];
  if (all.length !== 1) throw new PlanShapeError(`this runtime runs a graph with exactly one ${kind} node (${why}); the plan has ${all.length}`);
  return all[0]!;
};

export function runGraph(plan: Plan): RunGraph {
  const { nodes, edges } = plan.graph;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const from = (e: PlanEdge) => byId.get(parseEndpoint(e.from).node)!;
  const to = (e: PlanEdge) => byId.get(parseEndpoint(e.to).node)!;
  const turnStats = only(nodes, "TurnStats", "the learner batch the replay buffer feeds");
  const update = only(nodes, "Update", "one optimiser");
  const sync = only(nodes, "WeightSync", "one sampler to sync");
  if (sync.params.every !== 1) {
    throw new PlanShapeError(`WeightSync every ${sync.params.every} steps is not supported by this runtime: the student samples with the weights of its last update (every 1 step); use staleness for an explorer that runs ahead`);
  }
  const boundary = edges.filter((e) => !e.clock && phaseOf(from(e)) === "explore" && phaseOf(to(e)) === "learn");
  const scorers = nodes.filter((n): n is NodeOf<"TeacherScore"> => n.kind === "TeacherScore"
    && edges.some((e) => parseEndpoint(e.from).node === n.id)
    && edges.filter((e) => parseEndpoint(e.from).node === n.id).every((e) => boundary.includes(e)));
  if (scorers.length !== 1) throw new PlanShapeError(`this runtime needs exactly one TeacherScore node whose scores go only to the learner (edge teacher.scores → stats.scores); the plan has ${scorers.length}`);
  const advEdge = edges.find((e) => e.to === `${update.id}.advantages`)!;
  const advantage = from(advEdge);
  if (advantage.kind !== "Advantage") throw new PlanShapeError(`edge ${advEdge.from} → ${advEdge.to}: Update trains on the advantages of an Advantage node, not a ${advantage.kind} node`);
  for (const e of edges) {
    if (!e.clock) continue;
    const t = (NODE_SPECS[to(e).kind].in as readonly PortSpec[]).find((p) => p.name === parseEndpoint(e.to).port)!;
    if (t.type !== "Weights") throw new PlanShapeError(`edge ${e.from} → ${e.to} (clock): this runtime carries only Weights across steps, not ${t.type}`);
  }
  const byPhase = (p: string) => topoOrder(nodes.filter((n) => phaseOf(n) === p), edges);
  // The probe branch: explorer nodes from which every path leads to an EpisodePlanner's depth input.
  const probeBranch = new Set<string>();
  const depthEdges = edges.filter((e) => to(e).kind === "EpisodePlanner" && parseEndpoint(e.to).port === "depth");
  const frontier = depthEdges.map((e) => from(e).id);
  while (frontier.length) {
    const id = frontier.pop()!;
    if (probeBranch.has(id)) continue;
    probeBranch.add(id);
    for (const e of edges) if (!e.clock && parseEndpoint(e.to).node === id) frontier.push(parseEndpoint(e.from).node);
  }
  const taskEdge = edges.find((e) => to(e).kind === "EpisodePlanner" && parseEndpoint(e.to).port === "tasks");
  const planner = only(nodes, "EpisodePlanner", "the episode plans of the step");
  const taskSampler = taskEdge ? from(taskEdge) : undefined;
  if (taskSampler?.kind !== "TaskSampler") throw new PlanShapeError(`the EpisodePlanner's tasks must come from a TaskSampler node`);
  return {
    explore: byPhase("explore"), learn: byPhase("learn"), clock: nodes.filter((n) => phaseOf(n) === "clock"),
    edges, boundary, scorer: scorers[0]!, probeBranch, turnStats, update, advantage, sync, taskSampler, planner,
  };
}

/**
 * The values on a node's input ports: from this pass's outputs, or, for a clock edge and for a node
 * that reads a value produced outside the pass (a clock node), the latest value of the source.
 */
export function inputsOf(g: RunGraph, node: PlanNode, values: Values, latest: Latest): PortValues {
  const out: PortValues = {};
  for (const e of g.edges) {
    const t = parseEndpoint(e.to);
    if (t.node !== node.id) continue;
    const f = parseEndpoint(e.from);
    const v = e.clock ? latest.get(e.from)
      : phaseOf(node) === "clock" ? values.get(f.node)?.[f.port] ?? latest.get(e.from)
      : values.get(f.node)?.[f.port];
    if (v !== undefined) out[t.port] = v;
  }
  return out;
}

/** Does the node have a value on every required input? */
export function ready(node: PlanNode, inputs: PortValues): boolean {
  return (NODE_SPECS[node.kind].in as readonly PortSpec[]).every((p) => !p.required || inputs[p.name] !== undefined);
}

/** The latest value produced on each output (`node.port`), across steps. */
export class Latest {
  private readonly map = new Map<string, unknown>();
  constructor(private readonly initialWeights: () => PortData["Weights"]) {}
  get(endpoint: string): unknown {
    return this.map.get(endpoint) ?? this.initialWeights();
  }
  record(nodeId: string, outputs: PortValues): void {
    for (const [port, v] of Object.entries(outputs)) this.map.set(`${nodeId}.${port}`, v);
  }
  reset(): void { this.map.clear(); }
}

/**
 * The context an executor sees for one call: the run context (read through, so counters and the
 * synced step stay live) plus the step it runs for.
 */
export function stepContext(ctx: RunContext, step: number, rowShape: RowShape, saveCheckpoint: () => Promise<void>): StepContext {
  return Object.assign(Object.create(ctx) as RunContext, { step, rowShape, saveCheckpoint });
}

/** Runs one node through its executor. */
export function runNode(node: PlanNode, inputs: PortValues, ctx: StepContext): Promise<PortValues> {
  return (EXECUTORS[node.kind] as { run(n: PlanNode, i: PortValues, c: StepContext): Promise<PortValues> }).run(node, inputs, ctx);
}
