/**
 * Per-token policy losses ℓ(lp) and their derivatives dℓ/dlp, where lp is the current student
 * log-probability of the sampled token, `old` the sampling (or recomputed) log-probability and A the
 * advantage. The learner forms Σ w·ℓ (aggregate.ts) and back-propagates Σ w·dℓ/dlp.
 *
 * - `importance_sampling`: ℓ = −exp(clamp(lp − old, −c, c))·A, dℓ/dlp = ℓ strictly inside the clamp,
 *   0 outside and at ±c (as autograd through torch.clamp does: measured with torch 2.15, the
 *   worker's and Trinity's, a clamp passes no gradient at its bounds). Trinity-RFT
 *   (`trinity/algorithm/policy_loss_fn/importance_sampling_policy_loss.py`) clamps with c = 20, like
 *   its PPO loss: the default, and what a plan carries in Update.logRatioClamp. Tinker's built-in
 *   has no clamp: `logRatioBound: null`. The one definition: the embedded student calls
 *   `importanceSamplingToken`, the worker (worker/tcod_worker/losses.py) and Trinity are checked
 *   against the same vectors (test/vectors/importance-sampling.json).
 * - `ppo` (Trinity `ppo_policy_loss.py`, as verl `compute_policy_loss`):
 *     ratio = exp(clamp(lp − old, −20, 20))
 *     ℓ₁ = −A·ratio, ℓ₂ = −A·clamp(ratio, 1 − ε_low, 1 + ε_high), ℓ_clip = max(ℓ₁, ℓ₂)
 *     dual clip (A < 0 only): ℓ = min(ℓ_clip, −A·c)          defaults ε = 0.2, c = 3.0
 *   Derivatives are torch's autograd (measured with torch 2.15): a clamp passes the gradient only
 *   strictly inside its range (none at the bounds); torch.maximum / torch.minimum split it evenly
 *   between the two branches on a tie. `ppoToken` is the one definition (the embedded student's
 *   PPO calls it too).
 */
import { DEFAULT_LOG_RATIO_CLAMP } from "../../plan/defaults.js";
import { SignalError, expectSameLength } from "./layout.js";

const LOG_RATIO_BOUND = DEFAULT_LOG_RATIO_CLAMP;

export interface TokenLosses {
  loss: Float64Array;
  /** dℓ/dlp per token. */
  grad: Float64Array;
}

export interface IsOptions {
  /** Clamp lp − old to ±bound before exp (Trinity: 20, the default); null = no clamp (Tinker). */
  logRatioBound?: number | null;
}

/** One token's importance-sampling loss ℓ and dℓ/dlp, for a log-ratio d = lp − old (bound null: no clamp). */
export function importanceSamplingToken(d: number, adv: number, bound: number | null): { loss: number; grad: number } {
  if (bound === null || (d > -bound && d < bound)) {
    const loss = -Math.exp(d) * adv;
    return { loss, grad: loss };
  }
  return { loss: -Math.exp(Math.sign(d) * bound) * adv, grad: 0 };
}

/** Trinity/Tinker importance-sampling loss per token. */
export function importanceSamplingLoss(logp: Float64Array, oldLogp: Float64Array, adv: Float64Array, opts: IsOptions = {}): TokenLosses {
  const bound = opts.logRatioBound === undefined ? LOG_RATIO_BOUND : opts.logRatioBound;
  expectSameLength(logp, oldLogp, "importanceSamplingLoss(logp, old logp)");
  expectSameLength(logp, adv, "importanceSamplingLoss(logp, advantages)");
  if (bound !== null && !(bound > 0)) throw new SignalError(`importanceSamplingLoss: logRatioBound = ${bound}; expected a positive bound or null.`);
  const loss = new Float64Array(logp.length), grad = new Float64Array(logp.length);
  for (let t = 0; t < logp.length; t++) {
    if (adv[t] === 0) continue; // masked tokens carry A = 0: no loss, no gradient, placeholders not read
    const tl = importanceSamplingToken(logp[t]! - oldLogp[t]!, adv[t]!, bound);
    loss[t] = tl.loss;
    grad[t] = tl.grad;
  }
  return { loss, grad };
}

export interface PpoOptions {
  /** ε_low (default 0.2). */
  clipLow?: number;
  /** ε_high (default = ε_low). */
  clipHigh?: number;
  /** Dual-clip constant c > 1 (default 3.0); `null` disables dual clip. */
  dualClip?: number | null;
}

/** The larger of two branches with its derivative; a tie splits the derivative evenly (torch.maximum). */
function maxBranch(l1: number, g1: number, l2: number, g2: number): { l: number; g: number } {
  return l1 > l2 ? { l: l1, g: g1 } : l2 > l1 ? { l: l2, g: g2 } : { l: l1, g: (g1 + g2) / 2 };
}

/**
 * One token's PPO loss ℓ and dℓ/dlp for a log-ratio d = lp − old and advantage A: clipped surrogate
 * with ε_low, ε_high and (A < 0 only) dual clip c (null: off); `clipped` when a clip branch decides ℓ.
 */
export function ppoToken(d: number, A: number, lo: number, hi: number, c: number | null): { loss: number; grad: number; clipped: boolean } {
  const dIn = d > -LOG_RATIO_BOUND && d < LOG_RATIO_BOUND;
  const ratio = Math.exp(Math.min(LOG_RATIO_BOUND, Math.max(-LOG_RATIO_BOUND, d)));
  const dRatio = dIn ? ratio : 0; // d ratio / d lp
  const l1 = -A * ratio, g1 = -A * dRatio;
  const rIn = ratio > 1 - lo && ratio < 1 + hi;
  const l2 = -A * Math.min(1 + hi, Math.max(1 - lo, ratio)), g2 = rIn ? -A * dRatio : 0;
  const m = maxBranch(l1, g1, l2, g2);
  let clipped = l2 > l1;
  if (c !== null && A < 0) {
    // torch.minimum(−A·c, ℓ_clip): the constant branch has no gradient.
    const l3 = -A * c;
    if (l3 < m.l) return { loss: l3, grad: 0, clipped: true };
    if (l3 === m.l) return { loss: l3, grad: m.g / 2, clipped: true };
  }
  return { loss: m.l, grad: m.g, clipped };
}

/** PPO clipped surrogate with dual clip, per token (`ppoToken`). */
export function ppoLoss(logp: Float64Array, oldLogp: Float64Array, adv: Float64Array, opts: PpoOptions = {}): TokenLosses & { clipped: Uint8Array } {
  const lo = opts.clipLow ?? 0.2, hi = opts.clipHigh ?? lo;
  const c = opts.dualClip === undefined ? 3.0 : opts.dualClip;
  expectSameLength(logp, oldLogp, "ppoLoss(logp, old logp)");
  expectSameLength(logp, adv, "ppoLoss(logp, advantages)");
  if (!(lo >= 0 && hi >= 0)) throw new SignalError(`ppoLoss: clip range ε_low = ${lo}, ε_high = ${hi}; both must be ≥ 0.`);
  if (c !== null && !(c > 1)) throw new SignalError(`ppoLoss: dual-clip c = ${c}; Trinity requires c > 1 (or disable it with null).`);
  const n = logp.length;
  const loss = new Float64Array(n), grad = new Float64Array(n), clipped = new Uint8Array(n);
  for (let t = 0; t < n; t++) {
    const A = adv[t]!;
    if (A === 0) continue;
    const r = ppoToken(logp[t]! - oldLogp[t]!, A, lo, hi, c);
    loss[t] = r.loss;
    grad[t] = r.grad;
    clipped[t] = r.clipped ? 1 : 0;
  }
  return { loss, grad, clipped };
}
