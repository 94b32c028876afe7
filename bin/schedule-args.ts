/**
 * The numbers `tcod explain` and `tcod plot` evaluate a plan's schedules at: steps (`--at`) and
 * expert lengths (`--expert-length`). Each is a whole number within what the plan's run can reach —
 * the compiler checks a schedule's range at steps 1..steps and, for an episode-level value, at
 * expert lengths 0..max_turns (0: a task without an expert path) — so a value shown is one a run
 * can meet and the compiler has checked, never one past the run (a 1,000-turn prefix of a 30-turn
 * episode). Out of range is a coded error naming the flag and the allowed range.
 */
import { UsageError } from "../plan/errors.js";
import type { Plan } from "../plan/schema.js";
import { shownValue } from "./flag-rules.js";

/** `0,6,12` → [0, 6, 12]; anything but non-negative integers is a coded error naming the option. */
export function naturals(option: string, text: string, example: string): number[] {
  const parts = text.split(",").map((x) => x.trim());
  // Digits past 2^53 − 1 are a whole number, but not one a double holds exactly (…993 reads as …992).
  const huge = parts.find((x) => /^\d+$/.test(x) && !Number.isSafeInteger(Number(x)));
  if (huge !== undefined) {
    throw new UsageError(`${option} ${text}: '${huge}' is beyond the largest exact ${option === "--at" ? "step" : "whole number"}, ${Number.MAX_SAFE_INTEGER} (2^53 − 1)`, { hint: `Give smaller numbers, e.g. ${option} ${example}.` });
  }
  const bad = parts.find((x) => !/^\d+$/.test(x));
  if (bad !== undefined || parts.length === 0) {
    throw new UsageError(`${option} ${shownValue(text)}: ${bad === undefined || bad === "" ? "an empty entry" : `'${bad}'`} is not a whole number ≥ 0`, { hint: `Give comma-separated whole numbers, e.g. ${option} ${example}.` });
  }
  return parts.map(Number);
}

/** The turns an episode of the plan's training env may last (its EpisodePlanner's max_turns). */
export function maxTurnsOf(plan: Plan): number {
  const planner = plan.graph.nodes.find((n) => n.kind === "EpisodePlanner");
  return planner?.kind === "EpisodePlanner" ? planner.params.maxTurns : 0;
}

/** Refuses an expert length past the plan's max_turns: TC7009 naming `option`, the plan and the range. */
export function checkExpertLengths(option: string, text: string, lengths: readonly number[], plan: Plan): void {
  const max = maxTurnsOf(plan);
  const past = lengths.find((L) => L > max);
  if (past === undefined) return;
  throw new UsageError(`${option} ${text}: ${past} turns is past the episodes of ${plan.name}, which last at most ${max} turns; an expert length is from 0 to ${max}`, {
    hint: `Give expert lengths from 0 (a task without an expert path) to ${max} (the plan's max_turns), e.g. ${option} ${Math.min(10, max)}.`,
  });
}

/** Refuses a step past the plan's last: TC7009 naming `option`, the plan and the range. */
export function checkSteps(option: string, text: string, steps: readonly number[], plan: Plan): void {
  const past = steps.find((t) => t > plan.clock.steps);
  if (past === undefined) return;
  throw new UsageError(`${option} ${text}: step ${past} is past the end of ${plan.name}, which has ${plan.clock.steps} steps; a step is from 0 to ${plan.clock.steps}`, {
    hint: `Give steps from 0 to ${plan.clock.steps}, e.g. ${option} 0,${Math.max(1, Math.round(plan.clock.steps / 2))},${plan.clock.steps}.`,
  });
}
