/**
 * SFT on expert demonstrations (b2f expert paths, texthouse planner demos) as rows the same learner
 * consumes: the expert's action tokens carry mask 1 and advantage 1, environment tokens mask 0.
 * With the importance-sampling loss at ratio 1 the gradient of −A·exp(lp − old) is −A = −1 per
 * token, which is the cross-entropy gradient; `sftNll` gives the loss value itself.
 */
import { SignalError, type TokenLayout, expectTokens } from "./layout.js";

/**
 * Advantage `coef` on expert action tokens (mask 1), 0 on env tokens. With `demoRows` (1 per row that
 * is a demonstration), only those rows' tokens: a batch that mixes student rows and demonstrations.
 */
export function sftAdvantages(layout: TokenLayout, coef = 1, demoRows?: Uint8Array): Float64Array {
  if (!Number.isFinite(coef)) throw new SignalError(`sftAdvantages: coef is ${coef}; expected a finite number.`);
  const out = new Float64Array(layout.mask.length);
  const rows = layout.rowStart.length - 1;
  if (demoRows && demoRows.length !== rows) throw new SignalError(`sftAdvantages: ${demoRows.length} row flags for ${rows} rows.`);
  for (let r = 0; r < rows; r++) {
    if (demoRows && demoRows[r] !== 1) continue;
    for (let t = layout.rowStart[r]!; t < layout.rowStart[r + 1]!; t++) out[t] = coef * layout.mask[t]!;
  }
  return out;
}

/**
 * Negative log-likelihood of the demonstration: per token −log p (0 off the mask) and the weighted
 * total Σ w·(−log p) with aggregation weights w (aggregate.lossWeights); d total / d log p = −w.
 */
export function sftNll(layout: TokenLayout, logp: Float64Array, weights: Float64Array): { perToken: Float64Array; total: number; grad: Float64Array } {
  expectTokens(layout, logp, "sftNll: logprobs");
  expectTokens(layout, weights, "sftNll: weights");
  const perToken = new Float64Array(logp.length), grad = new Float64Array(logp.length);
  let total = 0;
  for (let t = 0; t < logp.length; t++) {
    if (layout.mask[t] === 0) continue;
    const lp = logp[t]!;
    if (!(lp <= 0) || !Number.isFinite(lp)) throw new SignalError(`sftNll: token ${t} has logprob ${lp}; expected a finite value ≤ 0.`);
    perToken[t] = -lp;
    total += weights[t]! * -lp;
    grad[t] = -weights[t]!;
  }
  return { perToken, total, grad };
}
