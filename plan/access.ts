/** zod-free helpers over a plan: find nodes, print deterministically. */
import { NODE_IDS } from "./nodes.js";
import type { AdaptiveDepth, NodeKind, NodeOf, Plan } from "./schema.js";

/**
 * The node of a kind: the one with the kind's conventional id (plan/nodes.ts NODE_IDS) when there is
 * one — the main chain's node where a method adds a second (the TurnOPD probe's Rollout and
 * TeacherScore) — else the first of the kind.
 */
export function nodeOf<K extends NodeKind>(plan: Plan, kind: K): NodeOf<K> | undefined {
  const all = nodesOf(plan, kind);
  return all.find((n) => n.id === NODE_IDS[kind]) ?? all[0];
}
export function nodesOf<K extends NodeKind>(plan: Plan, kind: K): NodeOf<K>[] {
  return plan.graph.nodes.filter((n) => n.kind === kind) as NodeOf<K>[];
}

/** TurnOPD adaptive depth (the Probe and DepthRule nodes), if the plan has it. */
export function adaptiveDepthOf(plan: Plan): AdaptiveDepth | undefined {
  const probe = nodeOf(plan, "Probe"), rule = nodeOf(plan, "DepthRule");
  if (!probe || !rule) return undefined;
  return { probeEvery: probe.params.every, probeEpisodes: probe.params.episodes, rule: rule.params.rule, initial: rule.params.initial, min: rule.params.min };
}

/** Deterministic JSON: keys sorted, two-space indent, trailing newline. Same plan → same bytes. */
export function stringifyPlan(plan: Plan): string {
  return JSON.stringify(sortKeys(plan), null, 2) + "\n";
}
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys((v as Record<string, unknown>)[k]);
    return o;
  }
  return v;
}
