/**
 * TurnWeights: a turn-level expression (e.g. T-DUR) evaluated over every turn of the learner batch;
 * each turn's advantages are multiplied by its weight (the Advantage node's `weights` input). When
 * the expression reads `turn.entropy` and the rows are per turn, the student's exact entropy replaces
 * the surprisal estimate where the backend's score() returns it.
 */
import { ExprError } from "../../plan/expr.js";
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
      const where = ctx.state.whereOf(node.params.weight.expr);
      throw new ExprError(`the turn weight ${node.params.weight.expr} evaluates to ${w[u]} for turn ${batch.turns.vars["turn.index"]?.[u]} of the batch at step ${batch.turns.scalars["step"] ?? "?"}; a turn weight must be a finite number`, {
        hint: "Guard the arithmetic that reaches it (a division by a turn statistic that can be 0, a log of 0, an extension function that returns ±Infinity) and bound the weight, e.g. `clamp(…, 0, 10)`.",
        ...(where ? { where } : {}),
      });
    }
  }
  return w;
}
