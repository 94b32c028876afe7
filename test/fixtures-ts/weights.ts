// A lab's custom turn weighting, shared as TypeScript: later turns count more when the KL is high.
import type { TurnStats } from "tcod/extension";

export function lateKl(t: TurnStats): number {
  return (1 + t.index / Math.max(1, t.turns)) * (1 + Math.min(t.kl, 5));
}

export const squash = (x: number, scale: number): number => x / (1 + Math.abs(x) / scale);

export function bad(name: string): string {
  return name;
}

/** Every turn weighs 0: a run with this weight must not move the student. */
export const none = (t: TurnStats): number => 0 * t.kl;

/** Throws for a turn index ≥ 1: a run must stop with a coded error naming the function. */
export function throwing(t: TurnStats): number {
  if (t.index >= 1) throw new Error("no weight past the first turn");
  return 1;
}
