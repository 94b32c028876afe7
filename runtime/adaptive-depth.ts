/**
 * TurnOPD adaptive rollout depth (our reading of the paper; docs/REFERENCES.md#turnopd-atod, no public code exists).
 *
 * Every `probeEvery` steps the engine plays `probeEpisodes` full-horizon episodes with the current
 * student and summarises them per turn index h = 1..H:
 *   s_h = share of probe episodes still running at turn h,
 *   κ_h = mean per-token reverse KL (k1) of the student tokens of turn h.
 * Rules:
 *   coverage(keep):    cap = smallest H with Σ_{h≤H} s_h ≥ keep · Σ_h s_h
 *   divergence(ratio): cap = first h with κ_h > ratio · median(κ_1..κ_3); no such h → the deepest
 *                      turn observed.
 * Then the cap never shrinks below (last cap − 1), never below `min`, never above Hmax.
 */
import type { AdaptiveDepth } from "../plan/schema.js";

export interface ProbeProfile {
  /** s_h for h = 1..H (index 0 is turn 1). */
  running: number[];
  /** κ_h for h = 1..H; NaN where no episode reached turn h. */
  kl: number[];
}

export interface ProbeEpisodeStats {
  /** Per student turn of the episode, in order: mean per-token reverse KL of that turn. */
  turnKl: number[];
}

/**
 * Turn profile of probe episodes. Turn h counts from the first student turn (probes are full
 * episodes without a prefix).
 */
export function probeProfile(episodes: readonly ProbeEpisodeStats[]): ProbeProfile {
  const depth = episodes.reduce((m, e) => Math.max(m, e.turnKl.length), 0);
  const running: number[] = [];
  const kl: number[] = [];
  for (let h = 0; h < depth; h++) {
    let n = 0, sum = 0;
    for (const e of episodes) {
      const k = e.turnKl[h];
      if (k === undefined) continue;
      n++;
      sum += k;
    }
    running.push(episodes.length > 0 ? n / episodes.length : 0);
    kl.push(n > 0 ? sum / n : NaN);
  }
  return { running, kl };
}

/** Coverage rule: the smallest H whose running-share prefix sum reaches `keep` of the total. */
export function coverageCap(running: readonly number[], keep: number): number {
  const total = running.reduce((a, b) => a + b, 0);
  if (total <= 0) return 1;
  let acc = 0;
  for (let h = 0; h < running.length; h++) {
    acc += running[h]!;
    // A relative tolerance keeps keep = 1 from failing on float rounding of the running sum.
    if (acc >= keep * total - 1e-12 * total) return h + 1;
  }
  return running.length;
}

/**
 * Divergence rule: the first turn whose KL exceeds `ratio` × the median KL of turns 1..3.
 * `minBaseline` guards a near-zero (or negative: k1 is unbiased, not non-negative) baseline, which
 * would otherwise trigger on noise; it is a parameter, default 1e-3 nats per token.
 */
export function divergenceCap(kl: readonly number[], ratio: number, minBaseline = 1e-3): number {
  const head = kl.slice(0, 3).filter((k) => Number.isFinite(k)).sort((a, b) => a - b);
  if (head.length === 0) return Math.max(1, kl.length);
  const mid = head.length % 2 === 1 ? head[(head.length - 1) / 2]! : (head[head.length / 2 - 1]! + head[head.length / 2]!) / 2;
  const threshold = ratio * Math.max(mid, minBaseline);
  for (let h = 0; h < kl.length; h++) if (kl[h]! > threshold) return h + 1;
  return Math.max(1, kl.length);
}

/** The new cap after a probe: the rule's value, shrinking at most one turn per probe, within [min, hMax]. */
export function nextAdaptiveCap(rule: AdaptiveDepth, profile: ProbeProfile, lastCap: number, hMax: number): number {
  const raw = rule.rule.kind === "coverage"
    ? coverageCap(profile.running, rule.rule.keep)
    : divergenceCap(profile.kl, rule.rule.ratio);
  return Math.min(hMax, Math.max(raw, lastCap - 1, rule.min));
}
