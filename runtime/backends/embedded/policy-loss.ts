/**
 * Per-token policy losses of the embedded student, with their exact derivative with respect to the
 * token's log-probability (the rest of the chain rule is the softmax's, in student.ts).
 *
 * - `importance_sampling`: runtime/signals/losses.ts `importanceSamplingToken`, the one definition
 *   (ℓ = −exp(clamp(lp − old, ±c))·A with the plan's Update.logRatioClamp c; null = Tinker's, no
 *   clamp). With old = lp (detached) and A = 1 this is cross-entropy (SFT): dℓ/dlp = −1.
 * - `ppo` (Trinity/verl ppo_policy_loss): ratio = exp(clamp(lp − old, ±20)),
 *   ℓ = max(−A·ratio, −A·clip(ratio, 1 − ε, 1 + ε)), and for A < 0 the dual clip
 *   ℓ = min(ℓ, −A·c) with c = clip_ratio_c (Trinity default 3.0).
 * Sub-gradients follow PyTorch: clamp passes the gradient on its closed interval, and
 * maximum/minimum split it evenly on ties.
 */

import { importanceSamplingToken } from "../../signals/losses.js";

export type PolicyLossFn = "importance_sampling" | "ppo";

export interface PolicyLossParams {
  fn: PolicyLossFn;
  /** PPO clip range ε (ratio clipped to [1 − ε, 1 + ε]). */
  clip: number;
  /** PPO dual-clip constant c for negative advantages (Trinity clip_ratio_c, default 3.0). */
  clipRatioC: number;
  /** importance_sampling: the clamp c of lp − old (the plan's Update.logRatioClamp); null = none. */
  logRatioClamp: number | null;
}

export interface TokenLoss { loss: number; dLossDlp: number }

const LOG_RATIO_BOUND = 20;

export function tokenPolicyLoss(lp: number, old: number, adv: number, p: PolicyLossParams): TokenLoss {
  if (p.fn === "importance_sampling") {
    const t = importanceSamplingToken(lp - old, adv, p.logRatioClamp);
    return { loss: t.loss, dLossDlp: t.grad };
  }
  const logRatio = lp - old;
  const inClamp = logRatio >= -LOG_RATIO_BOUND && logRatio <= LOG_RATIO_BOUND ? 1 : 0;
  const ratio = Math.exp(Math.min(LOG_RATIO_BOUND, Math.max(-LOG_RATIO_BOUND, logRatio)));
  const dRatio = ratio * inClamp; // d ratio / d lp
  const lo = 1 - p.clip, hi = 1 + p.clip;
  const pg1 = -adv * ratio, d1 = -adv * dRatio;
  const clipped = Math.min(hi, Math.max(lo, ratio));
  const pg2 = -adv * clipped, d2 = ratio >= lo && ratio <= hi ? -adv * dRatio : 0;
  const clip1 = Math.max(pg1, pg2);
  const dClip1 = pg1 > pg2 ? d1 : pg2 > pg1 ? d2 : (d1 + d2) / 2;
  if (adv >= 0) return { loss: clip1, dLossDlp: dClip1 };
  const pg3 = -adv * p.clipRatioC;
  const loss = Math.min(pg3, clip1);
  const d = pg3 < clip1 ? 0 : pg3 > clip1 ? dClip1 : dClip1 / 2;
  return { loss, dLossDlp: d };
}
