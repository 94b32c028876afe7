/**
 * The schedules of a plan: every step-level (or episode-level) value it carries, evaluated over the
 * run. Used by `tcod explain`, `tcod plot` and the run report, so all three show the same numbers.
 */
import { evalRef, readsFeedback, type ExprDef, type ScalarVars, type ValueRef } from "./expr.js";
import { nodeOf } from "./access.js";
import type { Plan } from "./schema.js";
import { replayTrace, type Observation, type Replay } from "./feedback.js";

export interface Schedule {
  /** What it is, e.g. "horizon", "prefix", "loss.0.opd.coef", "lr". */
  name: string;
  unit: string;
  level: ExprDef["level"];
  ref: ValueRef;
}

/** Every value of the plan that changes with the step (or the episode), plus constant horizons. */
export function planSchedules(plan: Plan): Schedule[] {
  const out: Schedule[] = [];
  const push = (name: string, ref: ValueRef | undefined, unit: string) => {
    if (ref === undefined) return;
    const def = typeof ref === "number" ? undefined : plan.exprs[ref.expr];
    if (def && (def.level === "turn" || def.level === "token")) return;
    out.push({ name, unit: def?.unit ?? unit, level: def?.level ?? "const", ref });
  };
  const planner = nodeOf(plan, "EpisodePlanner");
  if (planner) {
    push("horizon", planner.params.horizon ?? (nodeOf(plan, "DepthRule") ? undefined : planner.params.maxTurns), "turns");
    push("prefix", planner.params.prefix, "turns");
  }
  const adv = nodeOf(plan, "Advantage");
  adv?.params.terms.forEach((t, i) => push(`loss.${i}.${t.kind}.coef`, t.coef, ""));
  if (adv?.params.aggregate.kind === "progressive") push("loss.blend", adv.params.aggregate.weight, "");
  const upd = nodeOf(plan, "Update");
  if (upd) push("lr", upd.params.optimizer.lr, "");
  const roll = nodeOf(plan, "Rollout");
  if (roll) push("temperature", roll.params.temperature, "");
  return out;
}

/** The variables at a step (and, for episode-level values, an expert length). */
export function varsAt(plan: Plan, step: number, expertLength?: number): ScalarVars {
  const planner = nodeOf(plan, "EpisodePlanner");
  return {
    step, total_steps: plan.clock.steps,
    ...(expertLength !== undefined ? { "episode.expert_length": expertLength } : {}),
    "episode.max_turns": planner?.params.maxTurns ?? 0,
  };
}

/**
 * Values of a schedule at the given steps; episode-level ones need an expert length, feedback-level
 * ones a replayed metrics trace (`planReplay`; without one, NeedsTraceError, TC7012).
 */
export function scheduleValues(plan: Plan, s: Schedule, steps: number[], expertLength?: number, replay?: Replay): number[] {
  return steps.map((t) => {
    const r = replay?.at(t);
    return evalRef(s.ref, plan.exprs, { ...varsAt(plan, t, expertLength), ...r?.vars }, {}, r?.view);
  });
}

/** Does the schedule read the run's own metrics (so that showing it needs a trace)? */
export function needsTrace(plan: Plan, s: Schedule): boolean {
  return typeof s.ref !== "number" && !!plan.exprs[s.ref.expr] && readsFeedback(plan.exprs[s.ref.expr]!.tree);
}

/**
 * A metrics trace replayed against the plan's feedback rules, as its run would see it: at the start
 * of step t, the rows of steps ≤ t − 1 − staleness are observed. `extra` adds expressions to track
 * (they are named after the plan's own, so stage names match the run's metrics rows).
 */
export function planReplay(plan: Plan, trace: Observation[], extra: Record<string, ExprDef> = {}): Replay {
  const staleness = nodeOf(plan, "Update")?.params.staleness ?? 0;
  return replayTrace({ ...plan.exprs, ...extra }, trace, { steps: plan.clock.steps, staleness });
}

/** 1..steps, thinned to at most `max` points (always keeping both ends). */
export function stepGrid(steps: number, max = 400): number[] {
  if (steps <= max) return Array.from({ length: steps }, (_, i) => i + 1);
  const out: number[] = [];
  for (let i = 0; i < max; i++) out.push(1 + Math.round((i * (steps - 1)) / (max - 1)));
  return [...new Set(out)];
}
