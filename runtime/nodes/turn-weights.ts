/**
 * TurnWeights: a turn-level expression (e.g. T-DUR) evaluated over every turn of the learner batch;
 * each turn's advantages are multiplied by its weight (the Advantage node's `weights` input). When
 * the expression reads `turn.entropy` and the rows are per turn, the student's exact entropy replaces
 * the surprisal estimate where the backend's score() returns it.
 */
import type { NodeOf } from "../../plan/schema.js";
import type { RunContext } from "./context.js";
import { input, type Executor } from "./executor.js";
import { fillExactEntropy, type LearnerBatch } from "./turn-stats.js";

export const turnWeightsExecutor: Executor<"TurnWeights"> = {
  async run(node, inputs, ctx) {
    const batch = input<LearnerBatch>(inputs, "stats")!;
    if (batch.turns.n === 0) return {};
    if (ctx.rowShape === "turn" && ctx.state.reads({ expr: node.params.weight.expr }, "turn.entropy")) await fillExactEntropy(ctx, batch);
    return { weights: runTurnWeights(node, ctx, batch) };
  },
};

export function runTurnWeights(node: NodeOf<"TurnWeights">, ctx: Pick<RunContext, "state">, batch: LearnerBatch): Float64Array {
  const w = ctx.state.atTurns(node.params.weight.expr, batch.turns);
  for (let u = 0; u < w.length; u++) {
    if (!Number.isFinite(w[u]!)) {
      throw new Error(`turn weight ${node.params.weight.expr} is ${w[u]} for turn ${batch.turns.vars["turn.index"]?.[u]} of the batch; weights must be finite`);
    }
  }
  return w;
}
