/**
 * Deterministic seeds. Every random choice of a run is derived from the run seed and the *position*
 * of the choice (step, episode index, turn), never from a stateful generator shared across
 * concurrent episodes: results then do not depend on promise scheduling, and resuming at a step
 * needs no generator state beyond the run seed.
 */

/** A 32-bit mix of integers (murmur3 finaliser over a running hash). Non-negative result. */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9 | 0;
  for (const p of parts) {
    // Fold in both halves so seeds and steps above 2^32 still matter.
    const lo = p | 0;
    const hi = Math.floor(p / 4294967296) | 0;
    for (const w of [lo, hi]) {
      h = Math.imul(h ^ w, 0x85ebca6b);
      h ^= h >>> 13;
      h = Math.imul(h, 0xc2b2ae35);
      h ^= h >>> 16;
    }
  }
  return h >>> 0;
}

/** Seeds for named purposes, so two uses of the same position never share a stream. */
export const SEED_PURPOSE = { tasks: 1, sample: 2, eval: 3, probe: 4, demos: 5 } as const;

/** mulberry32: a small, fast generator for shuffles. Returns floats in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates permutation of 0..n−1. */
export function permutation(n: number, seed: number): number[] {
  const r = rng(seed);
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

/**
 * The TurnOPD probe tasks of step `step`: indices into the probed split's task list (its rows in
 * order), a seeded permutation per probe step, cycled when there are more probe episodes than tasks.
 * One definition for `tcod run` (runtime/nodes/probe.ts) and the Trinity plugin (core.py
 * `probe_task_indices`), checked on shared vectors (test/vectors/probing.json).
 */
export function probeTaskIndices(seed: number, step: number, episodes: number, tasks: number): number[] {
  if (tasks <= 0) return [];
  const perm = permutation(tasks, mixSeed(seed, SEED_PURPOSE.probe, step));
  return Array.from({ length: episodes }, (_, i) => perm[i % tasks]!);
}
