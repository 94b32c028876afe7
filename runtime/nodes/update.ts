/**
 * Update: trains the student on the learner batch. Rows are cut into optimiser batches of
 * `trainBatchTurns` turns (Trinity `train_batch_size`; 0 = the whole step at once), in row order;
 * each batch gets its own loss-aggregation weights (they sum to 1 over that batch), then one
 * `train()` call = one forward_backward + one optimiser step. With exact-KL coefficients (opd
 * "full", gkd), each row also carries its coefficients (gkd: forward-KL ones too) and the teacher's
 * full distributions.
 */
import type { Aggregate, NodeOf } from "../../plan/schema.js";
import { PLAN_RANGES } from "../../plan/ranges.js";
import type { TrainRow, TrainStats } from "../backends/backend.js";
import type { ExperienceRow } from "../replay.js";
import { lossWeights, type Aggregation } from "../signals/aggregate.js";
import type { TokenLayout } from "../signals/layout.js";
import type { RunContext } from "./context.js";
import { input, type AdvantageData, type Executor, type PortData } from "./executor.js";
import type { LearnerBatch } from "./turn-stats.js";

export const updateExecutor: Executor<"Update"> = {
  async run(node, inputs, ctx) {
    const a = input<AdvantageData>(inputs, "advantages")!;
    if (!a.aggregate) throw new Error(`Update node "${node.id}": its advantages input must come from an Advantage node (which sets the loss aggregation), not a GroupAdvantage node`);
    const update = await runUpdate(node, ctx, a.batch, a.advantages, a.aggregate, ctx.step, a.klCoefs, a.forwardKlCoefs);
    const weights: PortData["Weights"] = { step: ctx.step, version: ctx.student.version(), update };
    return { weights };
  },
};

/**
 * WeightSync: the updated weights become the ones the explorer samples with (every step); its
 * `policy` output reaches the Rollout nodes through the step clock.
 */
export const weightSyncExecutor: Executor<"WeightSync"> = {
  async run(_node, inputs) {
    const w = input<PortData["Weights"]>(inputs, "weights")!;
    const policy: PortData["Weights"] = { step: w.step, version: w.version };
    return { policy };
  },
};

/** Checkpoint: a clock node; writes the run's checkpoint every `every` steps. */
export const checkpointExecutor: Executor<"Checkpoint"> = {
  async run(node, _inputs, ctx) {
    if (ctx.step % node.params.every === 0) await ctx.saveCheckpoint();
    return {};
  },
};

export interface UpdateResult {
  updates: number; loss: number; gradNorm: number; tokens: number; lr: number;
  /** Mean −log p of the self-scored rows (demonstrations on a worker) before their update(s). */
  selfScoredNll?: number;
}

export function aggregationAt(ctx: Pick<RunContext, "state">, agg: Aggregate, step: number): Aggregation {
  return agg.kind === "progressive" ? { kind: "progressive", weight: ctx.state.atStep(agg.weight, step, PLAN_RANGES.blendWeight) } : agg;
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
  const lr = ctx.state.atStep(p.optimizer.lr, step, PLAN_RANGES.lr);
  let loss = 0, gradNorm = 0, tokens = 0, updates = 0, selfNll = 0, selfTokens = 0;
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
        oldLogprobs: row.selfScored ? null : Array.from(batch.logpStudent.subarray(lo, hi)),
        lossWeights: Array.from(w.subarray(lo - s0, hi - s0)),
        ...(klCoefs ? exactKlTargets(row, klCoefs.subarray(lo, hi), r, forwardKlCoefs?.subarray(lo, hi)) : {}),
      });
    }
    const st: TrainStats = await ctx.student.train(rows, {
      lr, lossFn: p.lossFn, clip: p.clip, gradClip: p.optimizer.gradClip, logRatioClamp: p.logRatioClamp,
      betas: p.optimizer.betas, eps: p.optimizer.eps, weightDecay: p.optimizer.weightDecay,
    });
    loss += st.loss; gradNorm += st.gradNorm; tokens += st.tokens; updates++;
    if (rows.some((r) => r.oldLogprobs === null)) {
      if (!st.selfScored) throw new Error("update: the student trained rows without old log-probabilities but reported no selfScored NLL");
      selfNll += st.selfScored.nll * st.selfScored.tokens; selfTokens += st.selfScored.tokens;
    }
  }
  return {
    updates, loss: updates ? loss / updates : 0, gradNorm: updates ? gradNorm / updates : 0, tokens, lr,
    ...(selfTokens > 0 ? { selfScoredNll: selfNll / selfTokens } : {}),
  };
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
