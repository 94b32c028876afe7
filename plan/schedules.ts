/**
 * The schedules of a plan: every step-level (or episode-level) value it carries, evaluated over the
 * run. Used by `tcod explain`, `tcod plot` and the run report, so all three show the same numbers.
 */
import { evalRef, type ExprDef, type ScalarVars, type ValueRef } from "./expr.js";
import { nodeOf } from "./access.js";
import type { Plan } from "./schema.js";

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

/** Values of a schedule at the given steps; episode-level ones need an expert length. */
export function scheduleValues(plan: Plan, s: Schedule, steps: number[], expertLength?: number): number[] {
  return steps.map((t) => evalRef(s.ref, plan.exprs, varsAt(plan, t, expertLength)));
}

/** 1..steps, thinned to at most `max` points (always keeping both ends). */
export function stepGrid(steps: number, max = 400): number[] {
  if (steps <= max) return Array.from({ length: steps }, (_, i) => i + 1);
  const out: number[] = [];
  for (let i = 0; i < max; i++) out.push(1 + Math.round((i * (steps - 1)) / (max - 1)));
  return [...new Set(out)];
}
