/**
 * Advantage: the per-token advantage of the learner batch, Σ_terms (coef(step) · term), each turn
 * scaled by its TurnWeights value when the plan has one.
 * - opd (k1): c·(log p_T − log p_S) on sampled tokens (Trinity `multi_turn_opd`);
 * - grpo: c × the group-normalised episode rewards of the `grpo` input (a GroupAdvantage node);
 * - sft: c on every token of the expert demonstrations (signals/sft.ts; the rows that came in
 *   through TurnStats `demos`), 0 on student tokens; opd and grpo are 0 on demonstrations (teacher
 *   logprobs = student's, singleton groups).
 * - opd with estimator "full" or "topk": no advantage; its coefficient goes into per-token exact-KL
 *   coefficients (`klCoefs`), which Update passes to the student with the teacher distributions
 *   TeacherScore kept (the teacher's full ones, or for "topk" the ones built from its top-k lists),
 *   so the loss adds c·KL(p_S(·|t) ‖ q_t) at each student token (grpo/sft terms keep their
 *   advantages beside it, e.g. ATOD's κ·opd + ρ·grpo).
 * - gkd: no advantage either; c·(1 − β) goes into `klCoefs` (reverse KL) and c·β into
 *   `forwardKlCoefs` (forward KL(q_t ‖ p_S(·|t))), β the term's step-level mixture weight.
 * TurnWeights multiply student turns only (advantages and KL coefficients alike).
 */
import { UserError } from "../../plan/errors.js";
import { needsTeacherDistributions } from "../../plan/build.js";
import type { NodeOf } from "../../plan/schema.js";
import { PLAN_RANGES } from "../../plan/ranges.js";
import { opdAdvantages } from "../signals/opd.js";
import { sftAdvantages } from "../signals/sft.js";
import { sumTerms, turnTokenWeights, weightByTurn } from "../signals/mixture.js";
import type { RunContext } from "./context.js";
import { input, type AdvantageData, type Executor } from "./executor.js";
import type { LearnerBatch } from "./turn-stats.js";
import { aggregationAt } from "./update.js";

export const advantageExecutor: Executor<"Advantage"> = {
  async run(node, inputs, ctx) {
    const batch = input<LearnerBatch>(inputs, "stats")!;
    const grpo = input<AdvantageData>(inputs, "grpo");
    const r = runAdvantage(node, ctx, batch, ctx.step, input<Float64Array>(inputs, "weights"), grpo?.advantages);
    const out: AdvantageData = { batch, ...r, aggregate: aggregationAt(ctx, node.params.aggregate, ctx.step) };
    return { advantages: out };
  },
};

export interface AdvantageResult {
  advantages: Float64Array;
  /** Per-token exact-KL coefficients (opd "full" and "topk" terms), on the batch's token axis; absent without such a term. */
  klCoefs?: Float64Array;
  /** Per-token forward-KL coefficients (gkd terms, c·β); absent without such a term. */
  forwardKlCoefs?: Float64Array;
  /** Coefficient of each term in force at the step, for metrics and the report (κ, ρ). */
  coefs: Record<string, number>;
}

export class UnsupportedTermError extends UserError {
  readonly code = "TC7006";
}


/** Does the loss have an exact-KL term (opd "full", gkd), so TeacherScore asks for full distributions? */
export const usesFull = (node: NodeOf<"Advantage">): boolean => needsTeacherDistributions(node.params.terms);

export function runAdvantage(
  node: NodeOf<"Advantage">, ctx: Pick<RunContext, "state">, batch: LearnerBatch, step: number, turnWeights?: Float64Array, groupAdvantages?: Float64Array,
): AdvantageResult {
  const n = batch.layout.mask.length;
  const terms: Float64Array[] = [];
  let klCoefs: Float64Array | undefined;
  let forwardKlCoefs: Float64Array | undefined;
  const coefs: Record<string, number> = {};
  for (const term of node.params.terms) {
    const c = ctx.state.atStep(term.coef, step);
    coefs[term.kind] = (coefs[term.kind] ?? 0) + c;
    // "full" and "topk" train on the exact reverse KL to a teacher distribution (the whole one, or
    // the one built from its top-k: signals/topk-target.ts): a coefficient per token, not an advantage.
    if (term.kind === "opd" && (term.estimator === "full" || term.estimator === "topk")) {
      klCoefs ??= new Float64Array(n);
      studentTokens(batch, (t) => { klCoefs![t]! += c; });
      continue;
    }
    if (term.kind === "gkd") {
      const beta = ctx.state.atStep(term.beta, step, PLAN_RANGES.gkdBeta);
      coefs["gkd.beta"] = beta;
      klCoefs ??= new Float64Array(n);
      forwardKlCoefs ??= new Float64Array(n);
      studentTokens(batch, (t) => { klCoefs![t]! += c * (1 - beta); forwardKlCoefs![t]! += c * beta; });
      continue;
    }
    let a: Float64Array;
    switch (term.kind) {
      case "opd":
        a = opdAdvantages(batch.layout, batch.logpStudent, batch.logpTeacher, { coef: c, ...(term.clip ? { clip: { min: -term.clip, max: term.clip } } : {}) });
        break;
      case "grpo": {
        if (!groupAdvantages) throw new UnsupportedTermError("the grpo term needs group advantages on the Advantage node's grpo input (a GroupAdvantage node)");
        a = groupAdvantages.map((x) => c * x);
        break;
      }
      case "sft":
        a = sftAdvantages(batch.layout, c, Uint8Array.from(batch.episodeOfRow, (e) => (e >= batch.studentEpisodes ? 1 : 0)));
        break;
    }
    terms.push(a);
  }
  let adv = sumTerms(terms, n);
  if (turnWeights) {
    const w = turnTokenWeights(batch.layout.turnOf!, batch.layout.mask, turnWeights);
    adv = weightByTurn(adv, w);
    if (klCoefs) klCoefs = weightByTurn(klCoefs, w);
    if (forwardKlCoefs) forwardKlCoefs = weightByTurn(forwardKlCoefs, w);
  }
  return { advantages: adv, coefs, ...(klCoefs ? { klCoefs } : {}), ...(forwardKlCoefs ? { forwardKlCoefs } : {}) };
}

/** Calls `f` with each masked token of the student rows (not expert demonstrations). */
function studentTokens(batch: LearnerBatch, f: (t: number) => void): void {
  const { rowStart, mask } = batch.layout;
  for (let r = 0; r < batch.rows.length; r++) {
    if (batch.episodeOfRow[r]! >= batch.studentEpisodes) continue;
    for (let t = rowStart[r]!; t < rowStart[r + 1]!; t++) if (mask[t] === 1) f(t);
  }
}
