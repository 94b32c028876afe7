/**
 * Signals: the pure numerics of OPD curricula over typed arrays — per-token KL and entropy, OPD and
 * GRPO advantages, their annealed blend, T-DUR turn weights, loss aggregation weights, policy losses
 * with gradients and SFT rows (how a capped episode is scored is rollout.ts's, by env semantics). No I/O, no clock, no randomness.
 */
export * from "./layout.js";
export * from "./kl.js";
export * from "./opd.js";
export * from "./aggregate.js";
export * from "./grpo.js";
export * from "./mixture.js";
export * from "./tdur.js";
export * from "./sft.js";
export * from "./losses.js";
export * from "./topk-target.js";
