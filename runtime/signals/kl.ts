/**
 * Reverse KL KL(p_S ‖ p_T) = E_{x∼p_S}[log p_S(x) − log p_T(x)] and student entropy, per token.
 *
 * Two sources, from cheapest to richest:
 * - the sampled token only (k1/k2/k3 estimators, Schulman's "Approximating KL divergence"),
 * - the full vocabulary distribution (a worker holding both models; tests).
 * A top-k list gives the entropy (topKEntropy, T-DUR's fallback); the `topk` OPD estimator's target
 * distribution is built in signals/topk-target.ts.
 */
import { SignalError, expectSameLength } from "./layout.js";

// ---- sampled-token estimators ------------------------------------------------------------------

/**
 * Single-sample reverse-KL estimators on the token x ∼ p_S that the student sampled:
 * - `k1` = log p_S − log p_T: unbiased, can be negative; the OPD signal (Trinity `multi_turn_opd`,
 *   tinker `reverse_kl`). The default.
 * - `k2` = ½(log p_S − log p_T)²: biased, always ≥ 0, low variance.
 * - `k3` = (r − 1) − log r with r = p_T/p_S: unbiased and always ≥ 0 (verl's `low_var_kl`).
 */
export type KlEstimator = "k1" | "k2" | "k3";

/** One token's reverse-KL estimate from the two log-probabilities of the sampled token. */
export function klEstimate(logpStudent: number, logpTeacher: number, estimator: KlEstimator = "k1"): number {
  const d = logpStudent - logpTeacher;
  switch (estimator) {
    case "k1": return d;
    case "k2": return 0.5 * d * d;
    // log r = −d; expm1 keeps precision when the two models nearly agree.
    case "k3": return Math.expm1(-d) + d;
  }
}

/**
 * Per-token reverse-KL estimates; 0 where `mask` is 0 (those positions' logprobs are not read, so
 * env tokens may hold any placeholder).
 */
export function tokenKl(
  logpStudent: Float64Array,
  logpTeacher: Float64Array,
  mask?: Float64Array,
  estimator: KlEstimator = "k1",
): Float64Array {
  expectSameLength(logpStudent, logpTeacher, "tokenKl(student logprobs, teacher logprobs)");
  if (mask) expectSameLength(logpStudent, mask, "tokenKl(logprobs, mask)");
  const out = new Float64Array(logpStudent.length);
  for (let t = 0; t < out.length; t++) {
    if (mask && mask[t] === 0) continue;
    const s = logpStudent[t]!, q = logpTeacher[t]!;
    if (!Number.isFinite(s) || !Number.isFinite(q)) {
      throw new SignalError(`tokenKl: token ${t} has student logprob ${s} and teacher logprob ${q}; both must be finite on student tokens.`);
    }
    out[t] = klEstimate(s, q, estimator);
  }
  return out;
}

/** −log p_S of the sampled token: a one-sample estimate of the student's entropy. */
export function surprisal(logpStudent: Float64Array, mask?: Float64Array): Float64Array {
  if (mask) expectSameLength(logpStudent, mask, "surprisal(logprobs, mask)");
  const out = new Float64Array(logpStudent.length);
  for (let t = 0; t < out.length; t++) if (!mask || mask[t] === 1) out[t] = -logpStudent[t]!;
  return out;
}

// ---- full distributions ------------------------------------------------------------------------

/** log-softmax of a logit vector (max-shifted, so large logits do not overflow). */
export function logSoftmax(logits: Float64Array): Float64Array {
  if (logits.length === 0) throw new SignalError("logSoftmax: the vocabulary is empty.");
  let max = -Infinity;
  for (const z of logits) max = Math.max(max, z);
  if (!Number.isFinite(max)) throw new SignalError(`logSoftmax: the largest logit is ${max}.`);
  let sum = 0;
  for (const z of logits) sum += Math.exp(z - max);
  const lse = max + Math.log(sum);
  return logits.map((z) => z - lse);
}

/** Whether a vector holds raw logits (normalised here) or log-probabilities (used as they are). */
export type DistributionInput = "logits" | "logprobs";

const asLogprobs = (v: Float64Array, input: DistributionInput): Float64Array => (input === "logits" ? logSoftmax(v) : v);

/**
 * Exact reverse KL Σ_x p_S(x)(log p_S(x) − log p_T(x)) over the full vocabulary of one position.
 * Tokens with p_S = 0 contribute 0; a token with p_S > 0 and p_T = 0 makes the KL +Infinity.
 */
export function fullReverseKl(student: Float64Array, teacher: Float64Array, input: DistributionInput = "logits"): number {
  expectSameLength(student, teacher, "fullReverseKl(student, teacher) vocabulary sizes");
  const ls = asLogprobs(student, input), lt = asLogprobs(teacher, input);
  let kl = 0;
  for (let i = 0; i < ls.length; i++) {
    const p = Math.exp(ls[i]!);
    if (p === 0) continue;
    kl += p * (ls[i]! - lt[i]!);
  }
  return kl;
}

/**
 * Gradient of the exact reverse KL with respect to the student's logits:
 * ∂KL/∂z_i = p_S(i)·((log p_S(i) − log p_T(i)) − KL). Teacher logits are treated as constants.
 */
export function fullReverseKlGrad(studentLogits: Float64Array, teacher: Float64Array, teacherInput: DistributionInput = "logits"): Float64Array {
  expectSameLength(studentLogits, teacher, "fullReverseKlGrad(student, teacher) vocabulary sizes");
  const ls = logSoftmax(studentLogits), lt = asLogprobs(teacher, teacherInput);
  const kl = fullReverseKl(ls, lt, "logprobs");
  return ls.map((l, i) => Math.exp(l) * (l - lt[i]! - kl));
}

/** Exact entropy −Σ p log p of one position's full distribution. */
export function fullEntropy(dist: Float64Array, input: DistributionInput = "logits"): number {
  const lp = asLogprobs(dist, input);
  let h = 0;
  for (const l of lp) {
    const p = Math.exp(l);
    if (p > 0) h -= p * l;
  }
  return h;
}

/**
 * Per-position reverse KL over a flattened [positions × vocab] pair of matrices (the worker's
 * layout); 0 where `mask` is 0.
 */
export function fullReverseKlRows(student: Float64Array, teacher: Float64Array, vocab: number, input: DistributionInput = "logits", mask?: Float64Array): Float64Array {
  expectSameLength(student, teacher, "fullReverseKlRows(student, teacher)");
  if (!Number.isInteger(vocab) || vocab < 1 || student.length % vocab !== 0) {
    throw new SignalError(`fullReverseKlRows: ${student.length} values do not split into rows of vocab = ${vocab}.`);
  }
  const n = student.length / vocab;
  if (mask && mask.length !== n) throw new SignalError(`fullReverseKlRows: mask has ${mask.length} entries for ${n} positions.`);
  const out = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    if (mask && mask[t] === 0) continue;
    out[t] = fullReverseKl(student.subarray(t * vocab, (t + 1) * vocab), teacher.subarray(t * vocab, (t + 1) * vocab), input);
  }
  return out;
}

// ---- top-k -------------------------------------------------------------------------------------

/** One position's top-k list as a backend returns it: exact log-probabilities of the k best tokens. */
export type TopK = readonly { token: number; logprob: number }[];

/**
 * What happens to the probability mass outside the listed tokens:
 * - `lump` (default): one extra "rest" outcome carries 1 − Σ listed p. The entropy is then that of the
 *   coarsened distribution, a lower bound on the true entropy.
 * - `renormalise`: drop the rest and rescale the listed probabilities to sum to 1.
 */
export type TailRule = "lump" | "renormalise";

function checkTopK(list: TopK, who: string): Map<number, number> {
  const m = new Map<number, number>();
  for (const e of list) {
    if (!Number.isFinite(e.logprob) || e.logprob > 1e-9) {
      throw new SignalError(`${who} top-k: token ${e.token} has logprob ${e.logprob}; expected a finite value ≤ 0.`);
    }
    if (m.has(e.token)) throw new SignalError(`${who} top-k lists token ${e.token} twice.`);
    m.set(e.token, Math.min(e.logprob, 0));
  }
  return m;
}

/**
 * Entropy from a top-k list. `lump` (default): −Σ p log p over the listed tokens plus −r log r for
 * the unlisted mass r as one outcome — the entropy of the coarsened distribution, a lower bound on
 * the true entropy. `renormalise`: the entropy of the listed probabilities rescaled to sum to 1.
 */
export function topKEntropy(list: TopK, tail: TailRule = "lump"): number {
  const m = checkTopK(list, "entropy");
  if (m.size === 0) throw new SignalError("topKEntropy: the top-k list is empty.");
  const ps = [...m.values()].map(Math.exp);
  const sum = ps.reduce((a, b) => a + b, 0);
  const z = tail === "renormalise" ? sum : Math.max(1, sum);
  let h = 0;
  for (const p of ps) if (p > 0) h -= (p / z) * Math.log(p / z);
  if (tail === "lump") {
    const r = Math.max(0, 1 - sum / z);
    if (r > 0) h -= r * Math.log(r);
  }
  return h;
}

/**
 * Mean k1 reverse KL (log p_S − log p_T) of each turn's sampled tokens, from per-turn logprob
 * lists; 0 for a turn without tokens. The per-turn profile of the TurnOPD probe.
 */
export function turnKlMeans(student: readonly (readonly number[])[], teacher: readonly (readonly number[])[]): number[] {
  if (student.length !== teacher.length) throw new SignalError(`turnKlMeans: ${student.length} student turns but ${teacher.length} teacher turns.`);
  return student.map((s, i) => {
    const t = teacher[i]!;
    if (t.length !== s.length) throw new SignalError(`turnKlMeans: turn ${i} has ${s.length} student logprobs but ${t.length} teacher logprobs.`);
    let sum = 0;
    for (let j = 0; j < s.length; j++) sum += klEstimate(s[j]!, t[j]!);
    return s.length > 0 ? sum / s.length : 0;
  });
}
