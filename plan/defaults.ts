/**
 * Defaults, written once: the compiler's builtins take their parameter defaults from here, lower.ts
 * fills unset fields from here, the docs quote them from here, and the runtime reads the plan.
 *
 * DEFAULT_LOG_RATIO_CLAMP: the importance-sampling loss is ℓ = −A·exp(clamp(log π − log π_old, −c, c)),
 * c = 20 as in Trinity-RFT's importance_sampling_policy_loss (and its PPO loss); the clamp only binds
 * when a token's probability moved by a factor above e^20, where it keeps exp() finite. Tinker's
 * built-in importance_sampling has no clamp; a plan carries c in Update.logRatioClamp.
 */
export const DEFAULT_LOG_RATIO_CLAMP = 20;

/** `embedded()`, and a model declared without `serve`. */
export const EMBEDDED_DEFAULTS = { smoothing: 0.1, features: 4096, candidateLogOdds: 0 } as const;

/** `adam()`, and a curriculum without `optimizer` (lr 1e-6 as in TCOD's Trinity configs). */
export const OPTIMIZER_DEFAULTS = {
  lr: 1e-6, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, gradClip: 1.0, lossFn: "ppo", clip: 0.2,
} as const;

/** A curriculum without `loss`: one opd term (std/loss `opd()` with its defaults). */
export const LOSS_DEFAULTS = { kind: "opd", coef: 1, estimator: "k1", aggregate: "token_mean" } as const;

/** The grpo term's group normalisation (std/loss `grpo()`). */
export const GRPO_DEFAULTS = { normalize: true, eps: 1e-6 } as const;

/** `openai(…)` and `worker(…)` backends. */
export const OPENAI_DEFAULTS = { dialect: "vllm", concurrency: 32, timeoutS: 300 } as const;
export const WORKER_DEFAULTS = { url: "http://127.0.0.1:8100", concurrency: 32, timeoutS: 600 } as const;

/** Curriculum fields that are plain numbers when unset. */
export const FIELD_DEFAULTS = {
  temperature: 1.0, teacherTemperature: 1.0, staleness: 0, seed: 42, checkpointEveryAtMost: 50,
} as const;

/** A default as the docs write it: `1e-6`, `0.999`, `4096`. */
export function showDefault(v: number): string {
  return v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential() : String(v);
}

/**
 * Size limits, written once: the compiler refuses a curriculum beyond them (TC4001), a plan .json
 * beyond them does not validate (TC7001), and `--max-points` may not be raised past its own. They are
 * generous (8× a large RL batch of 512 tasks × 16 rollouts), but they keep a typo like
 * `100000 tasks × 100000 rollouts` from being allocated: the embedded run holds a step's episodes in
 * memory (10,000 short episodes take ~0.6 GB), and 10^10 of them abort V8 out of memory.
 */
export const SIZE_LIMITS = {
  /** Student episodes of one training step (tasks × rollouts), and tasks of one step or of one evaluation. */
  episodesPerStep: 65_536,
  /**
   * Sweep points a file may expand to, even with `--max-points` (each is a plan compiled and kept:
   * 10,000 points of a small curriculum took 4 s and 0.4 GB, 100,000 took 4 min and 4 GB).
   */
  sweepPoints: 100_000,
} as const;
