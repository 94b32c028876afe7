/**
 * The staleness pipeline between explorer and learner, in one place. Staleness s is a deterministic
 * pipeline lag: iteration t explores step t and trains step u = t − s, so the rollouts of step t use
 * the policy after update t − 1 − s (s = 0: synchronous, Trinity's explorer one sync behind the
 * trainer; s > 0: the explorer runs s steps ahead), and the same seed gives the same run however
 * promises interleave. With s ≥ 1 the scorer of step t − 1 runs while step t rolls out. The last s
 * iterations only train (the pipeline drains), so every step's rows are trained on exactly once.
 * The replay buffer still enforces the bound and counts anything older (e.g. rows restored from an
 * older checkpoint).
 */
import { ReplayBuffer, type BufferSnapshot } from "./replay.js";
import type { TrainRowMetrics } from "./metrics.js";
import type { Explorer, RolloutStats, Unscored } from "./explorer.js";
import type { EpisodeSample } from "./episode-samples.js";
import type { Learner } from "./learner.js";

/** A trained step: its metrics row and the sample episodes to write beside it. */
export interface Trained { row: TrainRowMetrics; samples: EpisodeSample[] }

export interface PipelineSnapshot { buffer: BufferSnapshot; pending: RolloutStats[]; unscored: Unscored | null }

export class StalenessPipeline {
  readonly buffer: ReplayBuffer;
  /** Rollout statistics of explored steps not yet trained on. */
  private pending: RolloutStats[] = [];
  /** Episodes of the last explored step awaiting the deferred scorer. */
  private unscored: Unscored | null = null;

  constructor(readonly staleness: number, readonly steps: number, capacity: number) {
    this.buffer = new ReplayBuffer(capacity);
  }

  /** Iterations of the run: T explored steps plus s draining ones. */
  get iterations(): number { return this.steps + this.staleness; }

  /** Iteration t: explore step t (t ≤ T) beside the deferred scoring of step t − 1, then train step t − s (≥ 1). */
  async iterate(t: number, explorer: Explorer, learner: Learner): Promise<Trained | null> {
    const s = this.staleness;
    const overlap = s >= 1;
    const previous = this.unscored;
    const [explored, scoredPrev] = await Promise.all([
      t <= this.steps ? explorer.explore(t, overlap) : Promise.resolve(null),
      overlap && previous ? explorer.score(previous) : Promise.resolve(null),
    ]);
    if (scoredPrev && previous) {
      this.buffer.push(scoredPrev.rows);
      const p = this.pending.find((p) => p.step === previous.step)!;
      p.time.teacher = scoredPrev.seconds;
      p.samples = scoredPrev.samples;
      this.unscored = null;
    }
    if (explored) {
      this.pending.push(explored.stats);
      this.buffer.push(explored.rows);
      if (explored.unscored) this.unscored = explored.unscored;
    }
    const u = t - s;
    if (u < 1) return null;
    const taken = this.buffer.take(u, u, s);
    const stats = this.pending.find((p) => p.step === u)!;
    this.pending = this.pending.filter((p) => p.step !== u);
    return { row: await learner.learn(u, taken, stats), samples: stats.samples ?? [] };
  }

  snapshot(): PipelineSnapshot {
    return { buffer: this.buffer.snapshot(), pending: structuredClone(this.pending), unscored: this.unscored ? structuredClone(this.unscored) : null };
  }

  restore(p: { buffer: BufferSnapshot; pending: unknown[]; unscored: unknown | null }): void {
    this.buffer.restore(p.buffer);
    this.pending = structuredClone(p.pending) as RolloutStats[];
    this.unscored = p.unscored ? (structuredClone(p.unscored) as Unscored) : null;
  }
}
