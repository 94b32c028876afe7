/**
 * GroupAdvantage: GRPO's branch of the graph — each episode's reward centred on its group's mean
 * (and, with `normalize`, divided by the group's std + eps), broadcast to the episode's tokens
 * (signals/grpo.ts). The Advantage node scales it by the grpo term's coefficient.
 */
import { grpoAdvantages } from "../signals/grpo.js";
import { input, type AdvantageData, type Executor } from "./executor.js";
import type { LearnerBatch } from "./turn-stats.js";

export const groupAdvantageExecutor: Executor<"GroupAdvantage"> = {
  async run(node, inputs) {
    const batch = input<LearnerBatch>(inputs, "stats")!;
    const advantages = grpoAdvantages(batch.layout, batch.rewards, batch.groupOf, batch.episodeOfRow, { normalize: node.params.normalize, eps: node.params.eps });
    const out: AdvantageData = { batch, advantages, coefs: {} };
    return { advantages: out };
  },
};
