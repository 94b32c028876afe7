/**
 * Plan-level defaults the runtime and the compiler share.
 *
 * DEFAULT_LOG_RATIO_CLAMP: the importance-sampling loss is ℓ = −A·exp(clamp(log π − log π_old, −c, c)),
 * c = 20 as in Trinity-RFT's importance_sampling_policy_loss (and its PPO loss); the clamp only binds
 * when a token's probability moved by a factor above e^20, where it keeps exp() finite. Tinker's
 * built-in importance_sampling has no clamp; a plan carries c in Update.logRatioClamp.
 */
export const DEFAULT_LOG_RATIO_CLAMP = 20;
