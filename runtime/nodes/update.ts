/**
 * Update: trains the student on the learner batch. Rows are cut into optimiser batches of
 * `trainBatchTurns` turns (Trinity `train_batch_size`; 0 = the whole step at once), in row order;
 * each batch gets its own loss-aggregation weights (they sum to 1 over that batch), then one
 * `train()` call = one forward_backward + one optimiser step. With exact-KL coefficients (opd
 * "full"), each row also carries its coefficients and the teacher's full distributions.
 */
import type { Aggregate, NodeOf } from "../../plan/schema.js";
import type { TrainRow, TrainStats } from "../backends/backend.js";
import type { ExperienceRow } from "../replay.js";
import { lossWeights, type Aggregation } from "../signals/aggregate.js";
import type { TokenLayout } from "../signals/layout.js";
import type { RunContext } from "./context.js";
import type { LearnerBatch } from "./turn-stats.js";

export interface UpdateResult { updates: number; loss: number; gradNorm: number; tokens: number; lr: number }

export function aggregationAt(ctx: RunContext, agg: Aggregate, step: number): Aggregation {
  return agg.kind === "progressive" ? { kind: "progressive", weight: ctx.state.atStep(agg.weight, step) } : agg;
}

/** Row index ranges of the optimiser batches: consecutive rows holding `turns` turns each. */
export function optimiserBatches(batch: LearnerBatch, turns: number): [number, number][] {
  const R = batch.rows.length;
  if (turns === 0 || R === 0) return R === 0 ? [] : [[0, R]];
  const out: [number, number][] = [];
  let start = 0, inBatch = 0;
  for (let r = 0; r < R; r++) {
    const seen = new Set<number>();
    for (let t = batch.layout.rowStart[r]!; t < batch.layout.rowStart[r + 1]!; t++) if (batch.layout.mask[t] === 1) seen.add(batch.layout.turnOf![t]!);
    inBatch += seen.size;
    if (inBatch >= turns) { out.push([start, r + 1]); start = r + 1; inBatch = 0; }
  }
  if (start < R) out.push([start, R]);
  return out;
}

export async function runUpdate(
  node: NodeOf<"Update">, ctx: RunContext, batch: LearnerBatch, advantages: Float64Array, aggregate: Aggregation, step: number,
  klCoefs?: Float64Array,
  forwardKlCoefs?: Float64Array,
): Promise<UpdateResult> {
  const p = node.params;
  const lr = ctx.state.atStep(p.optimizer.lr, step);
  let loss = 0, gradNorm = 0, tokens = 0, updates = 0;
  for (const [a, b] of optimiserBatches(batch, p.trainBatchTurns)) {
    const s0 = batch.layout.rowStart[a]!, s1 = batch.layout.rowStart[b]!;
    const sub: TokenLayout = {
      rowStart: batch.layout.rowStart.slice(a, b + 1).map((x) => x - s0),
      mask: batch.layout.mask.slice(s0, s1),
      turnOf: batch.layout.turnOf!.slice(s0, s1),
    };
    if (!sub.mask.some((m) => m === 1)) continue;
    const w = lossWeights(sub, aggregate);
    const rows: TrainRow[] = [];
    for (let r = a; r < b; r++) {
      const lo = batch.layout.rowStart[r]!, hi = batch.layout.rowStart[r + 1]!;
      const row = batch.rows[r]!;
      rows.push({
        tokens: row.tokens,
        mask: row.mask,
        advantages: Array.from(advantages.subarray(lo, hi)),
        oldLogprobs: Array.from(batch.logpStudent.subarray(lo, hi)),
        lossWeights: Array.from(w.subarray(lo - s0, hi - s0)),
        ...(klCoefs ? exactKlTargets(row, klCoefs.subarray(lo, hi), r, forwardKlCoefs?.subarray(lo, hi)) : {}),
      });
    }
    const st: TrainStats = await ctx.student.train(rows, {
      lr, lossFn: p.lossFn, clip: p.clip, gradClip: p.optimizer.gradClip,
      betas: p.optimizer.betas, eps: p.optimizer.eps, weightDecay: p.optimizer.weightDecay,
    });
    loss += st.loss; gradNorm += st.gradNorm; tokens += st.tokens; updates++;
  }
  return { updates, loss: updates ? loss / updates : 0, gradNorm: updates ? gradNorm / updates : 0, tokens, lr };
}

/**
 * The exact-KL targets of one row (opd "full"): its coefficients, and the teacher's distributions
 * where the row has them. Demonstration rows have none (their coefficients are 0 too).
 */
function exactKlTargets(
  row: ExperienceRow, coefs: Float64Array, index: number, forward?: Float64Array,
): Pick<TrainRow, "klCoefs" | "forwardKlCoefs" | "teacherDistributions"> {
  const dists = row.teacherDistributions;
  if (!dists) {
    if (coefs.some((c) => c !== 0) || forward?.some((c) => c !== 0)) {
      throw new Error(`update: row ${index} has exact-KL coefficients but no teacher distributions; TeacherScore must run with the "full" estimator's distributions`);
    }
    return {};
  }
  return { klCoefs: Array.from(coefs), teacherDistributions: dists, ...(forward ? { forwardKlCoefs: Array.from(forward) } : {}) };
}
