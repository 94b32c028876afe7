/**
 * OPD advantage per token: A = c·(log p_T − log p_S) on student tokens, 0 elsewhere.
 *
 * Defaults reproduce Trinity-RFT `multi_turn_opd` (TCOD fork, docs/REFERENCES.md#multi-turn-opd):
 * `kl_coef · (teacher_logprobs − old_log_probs) · response_mask`, no clipping, no baseline, no
 * discount. The two optional transforms come from the other seed systems:
 * - `clip` [min, max]: rllm's `distill` estimator clamps `teacher_lp − student_lp`
 *   (examples use ±5). We clip the coefficient-scaled value c·(log p_T − log p_S), which equals
 *   rllm's order for c = 1.
 * - `discount` γ: tinker `kl_discount_factor`, A'[i] = Σ_k γ^k A[i+k] within the row (§4.1).
 *   Clipping, when both are on, applies per token before the discounted sum, so `clip` bounds the
 *   per-token signal. The distance k counts positions in the row, environment tokens included
 *   (tinker sums over the whole datum's token sequence, env tokens holding 0); the result is then
 *   masked again so env tokens carry no advantage.
 */
import { SignalError, type TokenLayout, expectTokens, rowCount } from "./layout.js";

export interface OpdOptions {
  /** c, Trinity `kl_coef` / tinker `kl_penalty_coef` (default 1). */
  coef?: number;
  /** Clamp each token's advantage to [min, max] (rllm `adv_clip_min/max`); off by default. */
  clip?: { min: number; max: number };
  /** γ of the discounted future sum within each row (tinker `kl_discount_factor`); 0/absent = off. */
  discount?: number;
}

/** Per-token OPD advantages over a layout (see the module comment for the exact rule). */
export function opdAdvantages(
  layout: TokenLayout,
  logpStudent: Float64Array,
  logpTeacher: Float64Array,
  opts: OpdOptions = {},
): Float64Array {
  expectTokens(layout, logpStudent, "opdAdvantages: student logprobs");
  expectTokens(layout, logpTeacher, "opdAdvantages: teacher logprobs");
  const { mask } = layout;
  const kl = new Float64Array(mask.length);
  for (let t = 0; t < mask.length; t++) {
    if (mask[t] === 0) continue;
    const s = logpStudent[t]!, q = logpTeacher[t]!;
    if (!Number.isFinite(s) || !Number.isFinite(q)) {
      throw new SignalError(`opdAdvantages: token ${t} has student logprob ${s} and teacher logprob ${q}; both must be finite on student tokens.`);
    }
    kl[t] = s - q;
  }
  return opdAdvantagesFromKl(layout, kl, opts);
}

/**
 * OPD advantages from a per-token reverse-KL value: A = −c·KL, then the same clip and discount.
 * With k1 (the sampled token's log p_S − log p_T) this is `opdAdvantages`. A per-position KL that
 * does not depend on the sampled token (a top-k or exact KL) is not a useful advantage here: its
 * expected policy gradient is zero without a discount. The plan's `topk` and `full` estimators train
 * on the KL itself instead (nodes/advantage.ts, `klCoefs`).
 */
export function opdAdvantagesFromKl(layout: TokenLayout, tokenKlValues: Float64Array, opts: OpdOptions = {}): Float64Array {
  const c = opts.coef ?? 1, gamma = opts.discount ?? 0;
  expectTokens(layout, tokenKlValues, "opdAdvantagesFromKl: token KL");
  if (!Number.isFinite(c)) throw new SignalError(`opdAdvantages: coef is ${c}; expected a finite number.`);
  if (opts.clip && !(opts.clip.min <= opts.clip.max)) {
    throw new SignalError(`opdAdvantages: clip range [${opts.clip.min}, ${opts.clip.max}] is empty; write clip as { min ≤ max }.`);
  }
  if (!(gamma >= 0 && gamma <= 1)) throw new SignalError(`opdAdvantages: discount γ = ${gamma}; expected 0 ≤ γ ≤ 1.`);
  const { mask } = layout;
  const a = new Float64Array(mask.length);
  for (let t = 0; t < mask.length; t++) {
    if (mask[t] === 0) continue;
    const k = tokenKlValues[t]!;
    if (!Number.isFinite(k)) throw new SignalError(`opdAdvantages: token ${t} has KL ${k}; expected a finite number on student tokens.`);
    let v = -c * k;
    if (opts.clip) v = Math.min(opts.clip.max, Math.max(opts.clip.min, v));
    a[t] = v;
  }
  if (gamma === 0) return a;
  const out = discountedFutureSum(layout, a, gamma);
  for (let t = 0; t < out.length; t++) if (mask[t] === 0) out[t] = 0;
  return out;
}

/** Σ_k γ^k x[i+k] within each row of the layout (tinker `discounted_future_sum_vectorized`). */
export function discountedFutureSum(layout: TokenLayout, x: Float64Array, gamma: number): Float64Array {
  expectTokens(layout, x, "discountedFutureSum: values");
  const out = new Float64Array(x.length);
  for (let r = 0; r < rowCount(layout); r++) {
    let acc = 0;
    for (let t = layout.rowStart[r + 1]! - 1; t >= layout.rowStart[r]!; t--) {
      acc = x[t]! + gamma * acc;
      out[t] = acc;
    }
  }
  return out;
}
