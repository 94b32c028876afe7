/**
 * Advantage: the per-token advantage of the learner batch, Σ_terms (coef(step) · term), each turn
 * scaled by its TurnWeights value when the plan has one.
 * - opd (k1): c·(log p_T − log p_S) on sampled tokens (Trinity `multi_turn_opd`);
 * - grpo: group-normalised episode reward broadcast to the episode's tokens;
 * - sft: c on every token of the expert demonstrations (nodes/demonstrations.ts), 0 on student
 *   tokens; opd and grpo are 0 on demonstrations (teacher logprobs = student's, singleton groups).
 * - opd with estimator "full": no advantage; its coefficient goes into per-token exact-KL
 *   coefficients (`klCoefs`), which Update passes to the student with the teacher's full
 *   distributions, so the loss adds c·KL(p_S(·|t) ‖ q_t) at each student token (grpo/sft terms
 *   keep their advantages beside it, e.g. ATOD's κ·opd + ρ·grpo).
 * - gkd: no advantage either; c·(1 − β) goes into `klCoefs` (reverse KL) and c·β into
 *   `forwardKlCoefs` (forward KL(q_t ‖ p_S(·|t))), β the term's step-level mixture weight.
 * TurnWeights multiply student turns only (advantages and KL coefficients alike).
 */
import { UserError } from "../../plan/errors.js";
import type { NodeOf } from "../../plan/schema.js";
import { opdAdvantages, opdAdvantagesFromKl } from "../signals/opd.js";
import { klEstimate, topKReverseKl } from "../signals/kl.js";
import { grpoAdvantages } from "../signals/grpo.js";
import type { RunContext } from "./context.js";
import type { LearnerBatch } from "./turn-stats.js";

export interface AdvantageResult {
  advantages: Float64Array;
  /** Per-token exact-KL coefficients (opd "full" terms), on the batch's token axis; absent without such a term. */
  klCoefs?: Float64Array;
  /** Per-token forward-KL coefficients (gkd terms, c·β); absent without such a term. */
  forwardKlCoefs?: Float64Array;
  /** Coefficient of each term in force at the step, for metrics and the report (κ, ρ). */
  coefs: Record<string, number>;
}

export class UnsupportedTermError extends UserError {
  readonly code = "TC7006";
}

export const usesTopk = (node: NodeOf<"Advantage">): boolean => node.params.terms.some((t) => t.kind === "opd" && t.estimator === "topk");

export function checkAdvantageSupported(node: NodeOf<"Advantage">, teacher?: NodeOf<"TeacherScore">): void {
  if (usesTopk(node) && teacher && teacher.params.topk < 1) {
    throw new UnsupportedTermError(`the opd estimator "topk" needs TeacherScore topk ≥ 1 (got ${teacher.params.topk}); set how many alternatives the teacher reports`);
  }
}

/** Does the loss have an exact-KL term (opd "full", gkd), so TeacherScore asks for full distributions? */
export const usesFull = (node: NodeOf<"Advantage">): boolean => node.params.terms.some((t) => (t.kind === "opd" && t.estimator === "full") || t.kind === "gkd");

/** Does the loss have an sft term (so the explorer builds demonstrations)? */
export const needsDemonstrations = (node: NodeOf<"Advantage">): boolean => node.params.terms.some((t) => t.kind === "sft");

export function runAdvantage(node: NodeOf<"Advantage">, ctx: RunContext, batch: LearnerBatch, step: number, turnWeights?: Float64Array): AdvantageResult {
  const n = batch.layout.mask.length;
  const adv = new Float64Array(n);
  let klCoefs: Float64Array | undefined;
  let forwardKlCoefs: Float64Array | undefined;
  const coefs: Record<string, number> = {};
  for (const term of node.params.terms) {
    const c = ctx.state.atStep(term.coef, step);
    coefs[term.kind] = (coefs[term.kind] ?? 0) + c;
    if (term.kind === "opd" && term.estimator === "full") {
      klCoefs ??= new Float64Array(n);
      studentTokens(batch, (t) => { klCoefs![t]! += c; });
      continue;
    }
    if (term.kind === "gkd") {
      const beta = ctx.state.atStep(term.beta, step);
      if (!(beta >= 0 && beta <= 1)) throw new Error(`gkd: beta must be in [0, 1] at step ${step}, got ${beta}`);
      coefs["gkd.beta"] = beta;
      klCoefs ??= new Float64Array(n);
      forwardKlCoefs ??= new Float64Array(n);
      studentTokens(batch, (t) => { klCoefs![t]! += c * (1 - beta); forwardKlCoefs![t]! += c * beta; });
      continue;
    }
    let a: Float64Array;
    switch (term.kind) {
      case "opd":
        a = term.estimator === "topk"
          ? opdAdvantagesFromKl(batch.layout, topkTokenKl(batch), { coef: c })
          : opdAdvantages(batch.layout, batch.logpStudent, batch.logpTeacher, { coef: c });
        break;
      case "grpo": {
        const g = grpoAdvantages(batch.layout, batch.rewards, batch.groupOf, batch.episodeOfRow, { normalize: term.normalize, eps: term.eps });
        a = g.map((x) => c * x);
        break;
      }
      case "sft": {
        a = new Float64Array(n);
        const { rowStart, mask } = batch.layout;
        for (let r = 0; r < batch.rows.length; r++) {
          if (batch.episodeOfRow[r]! < batch.studentEpisodes) continue;
          for (let t = rowStart[r]!; t < rowStart[r + 1]!; t++) a[t] = c * mask[t]!;
        }
        break;
      }
    }
    for (let t = 0; t < n; t++) adv[t]! += a[t]!;
  }
  if (turnWeights) {
    const turnOf = batch.layout.turnOf!;
    for (let t = 0; t < n; t++) {
      if (batch.layout.mask[t] !== 1 || turnOf[t]! >= turnWeights.length) continue;
      adv[t]! *= turnWeights[turnOf[t]!]!;
      if (klCoefs) klCoefs[t]! *= turnWeights[turnOf[t]!]!;
      if (forwardKlCoefs) forwardKlCoefs[t]! *= turnWeights[turnOf[t]!]!;
    }
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

/**
 * Per-token reverse KL over the top-k supports (signals/kl.ts `topKReverseKl`, student support).
 * Where the teacher lists no alternatives (an oracle teacher off its trie) the k1 estimate on the
 * sampled token is used instead: an empty list says nothing about the teacher's distribution.
 */
function topkTokenKl(batch: LearnerBatch): Float64Array {
  const out = new Float64Array(batch.layout.mask.length);
  batch.rows.forEach((row, r) => {
    const s0 = batch.layout.rowStart[r]!;
    for (let j = 0; j < row.tokens.length; j++) {
      if (row.mask[j] !== 1) continue;
      const s = row.studentTopk?.[j], q = row.teacherTopk?.[j];
      out[s0 + j] = row.demo || !s || !q || q.length === 0 || s.length === 0
        ? klEstimate(row.logprobs[j]!, row.teacherLogprobs[j]!)
        : topKReverseKl(s, q);
    }
  });
  return out;
}
