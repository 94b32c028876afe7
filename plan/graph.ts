/**
 * The execution graph of a plan, checked against the typed ports of plan/nodes.ts when a plan is
 * loaded: every edge joins an existing output to an existing input of the same data type, each input
 * has at most one edge, every required input is connected, and no cycle closes except through an
 * edge marked `clock` (the value crosses to the next step). An edge from the learner back into the
 * explorer must go through the clock. The method checks tie the loss terms to the nodes they need
 * (a grpo term needs a GroupAdvantage wired into Advantage, sft needs Demonstrations, …).
 * Errors name the edge (`from → to`) or the node, with the JSON path.
 */
import { needsTeacherDistributions } from "./build.js";
import { inPort, NODE_SPECS, outPort, type Phase, type PortSpec } from "./nodes.js";
import type { Plan, PlanEdge, PlanNode } from "./schema.js";

export interface GraphIssue { path: string; message: string }

export interface Endpoint { node: string; port: string }

export const parseEndpoint = (s: string): Endpoint => {
  const i = s.lastIndexOf(".");
  return { node: s.slice(0, i), port: s.slice(i + 1) };
};
const showEdge = (e: PlanEdge): string => `edge ${e.from} → ${e.to}${e.clock ? " (clock)" : ""}`;

export const phaseOf = (n: PlanNode): Phase => NODE_SPECS[n.kind].phase;

/** Every problem of the plan's graph; empty when it can run. */
export function checkGraph(plan: Pick<Plan, "graph">): GraphIssue[] {
  const issues: GraphIssue[] = [];
  const { nodes, edges } = plan.graph;
  const byId = new Map<string, PlanNode>();
  nodes.forEach((n, i) => {
    if (byId.has(n.id)) issues.push({ path: `$.graph.nodes[${i}].id`, message: `two nodes have the id "${n.id}"; node ids must be unique` });
    byId.set(n.id, n);
  });
  const fed = new Map<string, number>(); // "node.port" → edge index
  edges.forEach((e, i) => {
    const path = `$.graph.edges[${i}]`;
    const f = parseEndpoint(e.from), t = parseEndpoint(e.to);
    const fn = byId.get(f.node), tn = byId.get(t.node);
    if (!fn) { issues.push({ path, message: `${showEdge(e)}: there is no node "${f.node}"` }); return; }
    if (!tn) { issues.push({ path, message: `${showEdge(e)}: there is no node "${t.node}"` }); return; }
    const op = outPort(fn.kind, f.port), ip = inPort(tn.kind, t.port);
    if (!op) { issues.push({ path, message: `${showEdge(e)}: ${fn.kind} node "${fn.id}" has no output "${f.port}" (outputs: ${names(NODE_SPECS[fn.kind].out)})` }); return; }
    if (!ip) { issues.push({ path, message: `${showEdge(e)}: ${tn.kind} node "${tn.id}" has no input "${t.port}" (inputs: ${names(NODE_SPECS[tn.kind].in)})` }); return; }
    if (op.type !== ip.type) issues.push({ path, message: `${showEdge(e)}: ${e.from} carries ${op.type} but ${e.to} takes ${ip.type}` });
    const prev = fed.get(e.to);
    if (prev !== undefined) issues.push({ path, message: `${showEdge(e)}: input ${e.to} is already fed by edge ${edges[prev]!.from} → ${e.to}; an input takes one edge` });
    else fed.set(e.to, i);
    if (phaseOf(fn) === "learn" && phaseOf(tn) === "explore" && !e.clock) {
      issues.push({ path, message: `${showEdge(e)}: the learner's output reaches the explorer in the next step; mark the edge "clock": true` });
    }
    if (phaseOf(fn) === "explore" && phaseOf(tn) === "learn" && tn.kind !== "TurnStats") {
      issues.push({ path, message: `${showEdge(e)}: experience enters the learner through the replay buffer, i.e. a TurnStats input, not ${tn.kind}` });
    }
  });
  nodes.forEach((n, i) => {
    for (const p of NODE_SPECS[n.kind].in as readonly PortSpec[]) {
      if (p.required && !fed.has(`${n.id}.${p.name}`)) {
        issues.push({ path: `$.graph.nodes[${i}]`, message: `${n.kind} node "${n.id}": required input ${n.id}.${p.name} (${p.type}) has no edge` });
      }
    }
  });
  if (issues.length === 0) {
    const cycle = findCycle(nodes, edges.filter((e) => !e.clock));
    if (cycle) issues.push({ path: "$.graph.edges", message: `the graph has a cycle that does not pass through the step clock: ${cycle.map((e) => `${e.from} → ${e.to}`).join(", ")}; mark the edge that feeds the next step "clock": true` });
  }
  if (issues.length === 0) issues.push(...methodIssues(plan.graph.nodes, edges, byId));
  return issues;
}

const names = (ps: readonly PortSpec[]): string => (ps.length ? ps.map((p) => `${p.name}: ${p.type}`).join(", ") : "none");

/** The edges of one cycle, if the (non-clock) graph has any. */
function findCycle(nodes: readonly PlanNode[], edges: readonly PlanEdge[]): PlanEdge[] | undefined {
  const outs = new Map<string, PlanEdge[]>();
  for (const e of edges) {
    const k = parseEndpoint(e.from).node;
    outs.set(k, [...(outs.get(k) ?? []), e]);
  }
  const state = new Map<string, 1 | 2>();
  const stack: PlanEdge[] = [];
  const visit = (id: string): PlanEdge[] | undefined => {
    state.set(id, 1);
    for (const e of outs.get(id) ?? []) {
      const to = parseEndpoint(e.to).node;
      stack.push(e);
      if (state.get(to) === 1) {
        const start = stack.findIndex((x) => parseEndpoint(x.from).node === to);
        return stack.slice(start);
      }
      if (!state.has(to)) { const c = visit(to); if (c) return c; }
      stack.pop();
    }
    state.set(id, 2);
    return undefined;
  };
  for (const n of nodes) if (!state.has(n.id)) { const c = visit(n.id); if (c) return c; }
  return undefined;
}

/** Loss terms and method nodes agree: each term has the nodes that produce its data, and no such node dangles. */
function methodIssues(nodes: readonly PlanNode[], edges: readonly PlanEdge[], byId: Map<string, PlanNode>): GraphIssue[] {
  const issues: GraphIssue[] = [];
  const feeder = (to: string): PlanNode | undefined => {
    const e = edges.find((x) => x.to === to);
    return e ? byId.get(parseEndpoint(e.from).node) : undefined;
  };
  nodes.forEach((n, i) => {
    const path = `$.graph.nodes[${i}]`;
    if (n.kind !== "Advantage") return;
    const kinds = new Set(n.params.terms.map((t) => t.kind));
    const grpo = feeder(`${n.id}.grpo`);
    if (kinds.has("grpo") && !grpo) issues.push({ path, message: `Advantage node "${n.id}" has a grpo term but its input ${n.id}.grpo has no edge; wire a GroupAdvantage node's advantages into it` });
    if (!kinds.has("grpo") && grpo) issues.push({ path, message: `edge ${grpo.id}.advantages → ${n.id}.grpo feeds group advantages to an Advantage node without a grpo term` });
    const stats = feeder(`${n.id}.stats`);
    const demos = stats ? feeder(`${stats.id}.demos`) : undefined;
    if (kinds.has("sft") && !demos) issues.push({ path, message: `Advantage node "${n.id}" has an sft term but no Demonstrations node feeds ${stats?.id ?? "its TurnStats"}.demos` });
    if (!kinds.has("sft") && demos) issues.push({ path, message: `edge ${demos.id}.demos → ${stats!.id}.demos feeds demonstrations to a learner whose loss has no sft term` });
    if (needsTeacherDistributions(n.params.terms)) {
      const term = n.params.terms.some((t) => t.kind === "opd" && t.estimator === "full") ? `the opd "full" estimator` : "the gkd term";
      const teachers = nodes.filter((m) => m.kind === "TeacherScore" && edges.some((e) => e.from === `${m.id}.scores` && e.to === `${stats?.id}.scores`));
      for (const t of teachers) {
        if (t.kind === "TeacherScore" && !t.params.distributions) issues.push({ path, message: `${term} needs the teacher's full distributions, but TeacherScore node "${t.id}" (edge ${t.id}.scores → ${stats!.id}.scores) has distributions: false` });
      }
    }
    if (n.params.terms.some((t) => t.kind === "opd" && t.estimator === "topk")) {
      const t = stats ? feeder(`${stats.id}.scores`) : undefined;
      if (t?.kind === "TeacherScore" && t.params.topk < 1) issues.push({ path, message: `the opd estimator "topk" needs TeacherScore topk ≥ 1 (node "${t.id}" has topk ${t.params.topk}); set how many alternatives the teacher reports` });
    }
  });
  return issues;
}

/**
 * A deterministic topological order of the given nodes over the non-clock edges between them: among
 * the nodes that are ready, the one listed first in the plan runs first.
 */
export function topoOrder(nodes: readonly PlanNode[], edges: readonly PlanEdge[]): PlanNode[] {
  const ids = new Set(nodes.map((n) => n.id));
  const indeg = new Map(nodes.map((n) => [n.id, 0]));
  const inner = edges.filter((e) => !e.clock && ids.has(parseEndpoint(e.from).node) && ids.has(parseEndpoint(e.to).node));
  for (const e of inner) { const t = parseEndpoint(e.to).node; indeg.set(t, indeg.get(t)! + 1); }
  const done: PlanNode[] = [];
  const left = [...nodes];
  while (left.length > 0) {
    const i = left.findIndex((n) => indeg.get(n.id) === 0);
    if (i < 0) throw new Error(`topoOrder: cycle among ${left.map((n) => n.id).join(", ")}`);
    const [n] = left.splice(i, 1);
    done.push(n!);
    for (const e of inner) if (parseEndpoint(e.from).node === n!.id) { const t = parseEndpoint(e.to).node; indeg.set(t, indeg.get(t)! - 1); }
  }
  return done;
}
