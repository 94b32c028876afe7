/**
 * How an episode ended, and what that means for its reward and its turns.
 *
 * TCOD-f2b (docs/REFERENCES.md#tcod-f2b): a training episode runs at most H(t) turns; if the env
 * is not done when that cap is reached, the episode ends with reward 0. We separate the two ways an
 * unfinished episode stops:
 * - `cap`: stopped by the curriculum's horizon H(t) below the env's own limit — reward
 *   `truncatedReward` (TCOD: 0), because the student never had the chance to finish;
 * - `limit`: stopped by the env's turn limit Hmax (also when H(t) ≥ Hmax) — the env's reward, as in
 *   plain OPD and evaluation (e.g. ScienceWorld's partial score).
 * `done` episodes keep the env's reward. TCOD copies the episode reward onto every turn's
 * experience; `turnRewards` does the same.
 */
import { SignalError } from "./layout.js";

export type EpisodeEnd = "done" | "cap" | "limit";

export interface EpisodeEndFacts {
  /** The env reported done (success or failure). */
  done: boolean;
  /** Student turns taken. */
  turns: number;
  /** The curriculum's cap for this episode (f2b H(t); b2f: the student budget Hmax − p); absent = none. */
  cap?: number;
  /** The env's own turn limit for the student (Hmax, or Hmax − p after a b2f prefix). */
  maxTurns: number;
}

export function classifyEpisodeEnd(f: EpisodeEndFacts): EpisodeEnd {
  if (!(Number.isInteger(f.turns) && f.turns >= 0)) throw new SignalError(`classifyEpisodeEnd: turns = ${f.turns}; expected a whole number ≥ 0.`);
  if (!(Number.isInteger(f.maxTurns) && f.maxTurns >= 1)) throw new SignalError(`classifyEpisodeEnd: maxTurns = ${f.maxTurns}; expected a whole number ≥ 1.`);
  if (f.cap !== undefined && !(Number.isInteger(f.cap) && f.cap >= 1)) {
    throw new SignalError(`classifyEpisodeEnd: cap = ${f.cap}; a horizon is a whole number of turns ≥ 1.`);
  }
  const limit = Math.min(f.maxTurns, f.cap ?? Infinity);
  if (f.done) {
    if (f.turns > limit) throw new SignalError(`classifyEpisodeEnd: ${f.turns} turns exceed the limit of ${limit}.`);
    return "done";
  }
  if (f.turns !== limit) {
    throw new SignalError(`classifyEpisodeEnd: the episode stopped after ${f.turns} turns without done, but its limit is ${limit} turns; an unfinished episode ends exactly at its limit.`);
  }
  return f.cap !== undefined && f.cap < f.maxTurns ? "cap" : "limit";
}

/** The reward an episode trains with: `truncatedReward` (TCOD: 0) when cut by the cap, else the env's. */
export function trainingReward(end: EpisodeEnd, envReward: number, truncatedReward = 0): number {
  if (!Number.isFinite(envReward)) throw new SignalError(`trainingReward: env reward ${envReward} is not a finite number.`);
  return end === "cap" ? truncatedReward : envReward;
}

/** The episode reward copied onto each of its turns (TCOD's experiences all carry it). */
export function turnRewards(turns: number, reward: number): Float64Array {
  return new Float64Array(turns).fill(reward);
}

/**
 * Per-turn flags for a batch of turns: 1 on every turn of an episode cut by the cap, else 0 (for
 * metrics and for filters that drop truncated episodes). `ends[e]` is episode e's end.
 */
export function truncatedTurnFlags(episodeOfTurn: Int32Array, ends: readonly EpisodeEnd[]): Uint8Array {
  return Uint8Array.from(episodeOfTurn, (e, i) => {
    const end = ends[e];
    if (end === undefined) throw new SignalError(`truncatedTurnFlags: turn ${i} names episode ${e}, but ${ends.length} episode ends were given.`);
    return end === "cap" ? 1 : 0;
  });
}

/** 1 on the last turn of every episode (where the reward arrives), 0 elsewhere. */
export function lastTurnFlags(episodeOfTurn: Int32Array): Uint8Array {
  const last = new Map<number, number>();
  episodeOfTurn.forEach((e, i) => last.set(e, i));
  return Uint8Array.from(episodeOfTurn, (e, i) => (last.get(e) === i ? 1 : 0));
}
