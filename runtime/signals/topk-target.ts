/**
 * The teacher distribution the `topk` OPD estimator trains toward at one position, from what a
 * served teacher reports: its top-k alternatives and the log-probability of the token the student
 * sampled.
 *
 * q̃ keeps the teacher's log-probabilities of the listed tokens (the top-k and the sampled token) and
 * spreads the mass they leave, 1 − Σ listed, evenly over the V − |listed| other tokens. The student
 * then trains on the exact reverse KL to q̃ with its gradient over the whole vocabulary, as the `full`
 * estimator does with the teacher's true distribution. Where the teacher is sure of a token the
 * student rarely samples (texthouse's `take`), that gradient raises it; a per-position KL value used
 * as the sampled token's advantage cannot, since its expected policy gradient is zero
 * (E_{x∼p_S}[∇log p_S(x)]·c = 0 for any c that does not depend on x).
 *
 * The listed mass may round above 1 or leave almost nothing: the tail is floored at `tailFloor` and
 * the whole distribution renormalised, so q̃ always sums to 1.
 */
import type { TokenDistribution } from "../backends/backend.js";
import { SignalError } from "./layout.js";

/** The least total probability the unlisted tokens keep (so log q̃ stays finite where the student puts mass). */
export const TOPK_TAIL_FLOOR = 1e-6;

export function topkTargetDistribution(
  topk: readonly { token: number; logprob: number }[],
  sampled: { token: number; logprob: number },
  vocabSize: number,
  tailFloor = TOPK_TAIL_FLOOR,
): TokenDistribution {
  if (!Number.isInteger(vocabSize) || vocabSize < 1) throw new SignalError(`topkTargetDistribution: vocabulary size ${vocabSize}; expected a positive integer.`);
  const listed = new Map<number, number>();
  for (const { token, logprob } of [...topk, sampled]) {
    if (!Number.isInteger(token) || token < 0 || token >= vocabSize) {
      throw new SignalError(`topkTargetDistribution: token ${token} is outside the vocabulary 0..${vocabSize - 1}.`);
    }
    if (!(logprob <= 0)) throw new SignalError(`topkTargetDistribution: token ${token} has log-probability ${logprob}; expected a number ≤ 0.`);
    // The sampled token's own score and its entry in the top-k list are the same number up to rounding.
    if (!listed.has(token)) listed.set(token, logprob);
  }
  const unlisted = vocabSize - listed.size;
  let mass = 0;
  for (const lp of listed.values()) mass += Math.exp(lp);
  const tail = unlisted > 0 ? Math.max(1 - mass, tailFloor) : 0;
  const logZ = Math.log(mass + tail);
  return {
    tokens: [...listed.keys()],
    logprobs: [...listed.values()].map((lp) => lp - logZ),
    rest: unlisted > 0 ? Math.log(tail / unlisted) - logZ : null,
  };
}
