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
 * Both are runtime/signals/losses.ts's one definitions (`importanceSamplingToken`, `ppoToken`), with
 * torch's sub-gradients: a clamp passes no gradient at its bounds; maximum/minimum split it on ties.
 */

import { importanceSamplingToken, ppoToken } from "../../signals/losses.js";

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

export function tokenPolicyLoss(lp: number, old: number, adv: number, p: PolicyLossParams): TokenLoss {
  const t = p.fn === "importance_sampling"
    ? importanceSamplingToken(lp - old, adv, p.logRatioClamp)
    : ppoToken(lp - old, adv, p.clip, p.clip, p.clipRatioC);
  return { loss: t.loss, dLossDlp: t.grad };
}
