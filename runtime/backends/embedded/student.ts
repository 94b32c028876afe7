/**
 * The embedded student: a log-linear token policy
 *   p(token | context) = softmax(W·φ(context) + b + prior)
 * over the whole vocabulary, φ the hashed sparse features of features.ts, W a `features × V`
 * matrix (row-major: one row of V logits per feature, so a forward pass adds a few contiguous rows).
 *
 * It is for debugging curricula and CI, not a language model: deterministic per seed, in-process,
 * exact log-probabilities, entropies and gradients.
 *
 * Training: exact gradients of Σ lossWeights·ℓ(lp, old, A) (policy-loss.ts), plus, where a row has
 * exact-KL targets (the opd "full" estimator, gkd), Σ lossWeights·klCoef·KL(p_S(·|t) ‖ q_t) and
 * Σ lossWeights·forwardKlCoef·KL(q_t ‖ p_S(·|t)), at temperature 1, one
 * global-norm clip, then AdamW (adamw.ts) over every row that has ever received a gradient. Rows
 * that never did have θ = m = v = 0 and would stay 0 under AdamW, so skipping them is exact (this is
 * not lazy Adam: a row touched once keeps decaying its moments every later step, as in PyTorch).
 *
 * Temperature τ: sampling and scoring use softmax(z/τ) and report log-probabilities under it;
 * τ = 0 samples greedily (lowest id on ties) and reports log-probabilities under τ = 1.
 */
import { mkdir } from "node:fs/promises";
import type {
  SampleRequest, SampleResult, ScoreRequest, ScoreResult, StudentBackend, TokenDistribution, TrainRow, TrainStats,
} from "../backend.js";
import { BackendError } from "../backend.js";
import { adamwSlice, type AdamWHyper } from "./adamw.js";
import { exactForwardKl, exactReverseKl } from "./exact-kl.js";
import {
  activeFeatures, candidateNextTokens, candidatePointers, MAX_CANDIDATES, POINTER_SIZE, featureCount, promptWords,
  type FeatureVocabulary, type PromptWords,
} from "./features.js";
import { tokenPolicyLoss, type PolicyLossFn } from "./policy-loss.js";
import { DEFAULT_LOG_RATIO_CLAMP } from "../../../plan/defaults.js";
import { sfc32 } from "./prng.js";
import { readStudentState, writeStudentState, type StudentDims } from "./state-io.js";
import type { WordTokenizer } from "./tokenizer.js";

export type Precision = "float32" | "float64";

/** The `'` and `,` tokens that delimit a quoted candidate list, or −1 each (off, or not single tokens). */
function candidateTokens(tokenizer: WordTokenizer, on: boolean): { quoteToken: number; commaToken: number; assistantToken: number } {
  const quote = tokenizer.encode("'"), comma = tokenizer.encode(",");
  return on && quote.length === 1 && comma.length === 1
    ? { quoteToken: quote[0]!, commaToken: comma[0]!, assistantToken: tokenizer.specialId("<|assistant|>") }
    : { quoteToken: -1, commaToken: -1, assistantToken: -1 };
}

export interface EmbeddedStudentOptions {
  /** Number of hashed feature rows (the plan's `features`). */
  features: number;
  /** Seeds the initial weights when `initScale` > 0. */
  seed: number;
  /** Storage of W and its Adam moments (arithmetic is float64 either way). Default float32. */
  precision?: Precision;
  /** Distinct words read from each of the observation and the task (default 256). */
  maxContextWords?: number;
  /** Scale of uniform initial weights in [−s, s); default 0 (the policy starts at the prior). */
  initScale?: number;
  /**
   * Fixed log-odds of characters, bytes and special tokens other than `<|end|>` against words and
   * agent markers (default −4): the student starts uniform over the words of its env and the end
   * token, as a pretrained model "knows the words", yet can still spell anything. 0 = uniform over
   * the whole vocabulary. Without it, k1 OPD from a uniform start spends nearly all its samples on
   * ~260 character/byte tokens before finding the first word.
   */
  priorLogOdds?: number;
  /**
   * Key the observation's words also by their line (features.ts; default true). Without it the
   * texthouse student cannot tell an object it sees from the object its task names (std/agent's raw
   * format repeats the task in every message) and never learns to take one (measured: admissible
   * rate 0.95 yet success 0 on examples/texthouse/tcod-f2b.tcod).
   */
  lineFeatures?: boolean;
  /**
   * Candidate (pointer) features over the actions a prompt lists in quotes (features.ts; default
   * true). A prompt without a quoted list (std/agent's raw format) gets none, so this changes nothing there.
   */
  candidateFeatures?: boolean;
  /**
   * Fixed log-odds added to every token that continues a candidate the prompt lists (features.ts
   * `candidateNextTokens`); default 0 (off). A prior from the prompt, not a learned weight, so the
   * gradients stay exact; it plays the role of a pretrained model's habit of copying what its
   * prompt offers, which the hashed rows learn only slowly (measured on texthouse: without it the
   * student writes "take apple 3" where the prompt lists "take apple 2").
   */
  candidateLogOdds?: number;
  /**
   * Episode memory features (episode-memory.ts; default true): what the episode has shown so far —
   * receptacles visited and explored, objects seen and where, what the agent holds and whether it
   * processed it — read from the earlier user messages of the prompt (so only with a format whose
   * chat memory keeps them). Why: the observable teacher explores what it has not seen and goes back
   * to what it has; a bag of words over the last message cannot tell either.
   */
  memoryFeatures?: boolean;
  /**
   * Pointer weights (features.ts `candidatePointers`; default true): one learned scalar per hashed
   * (position, verb, candidate mask), added to the logit of the token that continues each listed
   * candidate with that mask. Why: a row of W learns a token's identity ("cabinet"), so "go to a
   * receptacle I have not explored" would have to be learned once per receptacle type and number;
   * a scalar on the mask learns it once.
   */
  pointerFeatures?: boolean;
  /**
   * Fixed scale s of the pointer weights: a candidate's score is s·pointer[key] (default
   * DEFAULT_POINTER_SCALE). Why: Adam moves each parameter by at most ~lr per step whatever its
   * gradient, so a pointer weight can move a candidate's logit by only s·lr per step. Under reverse
   * KL the decisive actions of rare states (`take` where the task object lies, `put` at the target)
   * start zero-forced — the features shared with the many states where they are wrong put them at
   * ~e^−6 — and the only way out is the state's own pointer weight climbing ~6 nats; with s = 1 and
   * lr 0.03 that is 200 steps, with s = 20 ten (measured on examples/texthouse/tcod-f2b.tcod:
   * runtime/backends/embedded/README.md). A reparameterisation: the loss and its exact gradient are
   * unchanged, only the step Adam takes in logit space is.
   */
  pointerScale?: number;
  /** PPO dual-clip constant (Trinity clip_ratio_c). Default 3.0. */
  clipRatioC?: number;
  /**
   * AdamW defaults, used where `train`'s options leave them out: β (0.9, 0.999), ε 1e-3, λ 0.01.
   * ε is 1e-3, not PyTorch's 1e-8, on purpose: this student's per-parameter gradients are ~1e-4
   * (token-mean weights over a batch, times softmax probabilities over ~400 tokens), and with ε 1e-8
   * Adam turns every tiny, noisy gradient of a sparse row into a full-size step — the toy OPD run
   * then collapses onto garbage tokens (measured; see test/embedded/learning.test.ts).
   */
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

export interface EmbeddedTrainOptions {
  lr: number;
  lossFn: PolicyLossFn;
  clip: number;
  gradClip: number;
  /** importance_sampling: clamp of lp − old (the plan's Update.logRatioClamp); absent = the default, ±20. */
  logRatioClamp?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

/** The loss of a batch and its gradient, before clipping (exposed for gradient checks). */
export interface LossGradient {
  loss: number;
  gradNorm: number;
  tokens: number;
  bias: Float64Array;
  /** Gradient rows of W by feature row, in first-touched order (rows may share one array: read only). */
  rows: Map<number, Float64Array>;
  /** Gradient of the pointer weights (absent when they are off). */
  pointer?: Float64Array;
}

const MAX_PARAMETER_BYTES = 3 * 2 ** 30;
/** The default `pointerScale` (see EmbeddedStudentOptions). */
export const DEFAULT_POINTER_SCALE = 20;
const SERVER = "embedded";

export class EmbeddedStudent implements StudentBackend {
  readonly tokenizer: WordTokenizer;
  readonly exactKlTargets = true;
  readonly features: number;
  readonly precision: Precision;
  readonly V: number;
  /** W, row-major `features × V`, and its Adam moments. */
  readonly W: Float32Array | Float64Array;
  private readonly mW: Float32Array | Float64Array;
  private readonly vW: Float32Array | Float64Array;
  readonly b: Float64Array;
  /** Fixed (untrained) logit offsets per token: the prior of `priorLogOdds`. */
  readonly prior: Float64Array;
  private readonly mb: Float64Array;
  private readonly vb: Float64Array;
  /** Pointer weights (features.ts `candidatePointers`) and their Adam moments; empty when off. */
  readonly pointer: Float64Array;
  private readonly mp: Float64Array;
  private readonly vp: Float64Array;
  private readonly ptrTok = new Int32Array(MAX_CANDIDATES);
  private readonly ptrKey = new Int32Array(MAX_CANDIDATES);
  /** Per pair: its softmax weight among the pairs of the same token (∂ lse / ∂ pointer[key]). */
  private readonly ptrWeight = new Float64Array(MAX_CANDIDATES);
  private readonly ptrLse = new Float64Array(MAX_CANDIDATES);
  private ptrCount = 0;
  private readonly pointerScale: number;
  private readonly priorLogOdds: number;
  /** Rows that have ever had a gradient (or initial weights), in first-touched order. */
  private live: Int32Array;
  private liveCount = 0;
  private readonly isLive: Uint8Array;
  private steps = 0;
  private readonly vocab: FeatureVocabulary;
  private readonly stop: Uint8Array;
  private readonly maxContextWords: number;
  private readonly clipRatioC: number;
  private readonly adamDefaults: { beta1: number; beta2: number; eps: number; weightDecay: number };
  // Scratch buffers, reused across calls.
  private readonly z: Float64Array;
  private readonly logq: Float64Array;
  private rowsBuf = new Int32Array(64);
  private readonly candidateBuf = new Int32Array(MAX_CANDIDATES);
  private readonly candidateLogOdds: number;
  private readonly gradPool: Float64Array[] = [];
  /**
   * The logits W·φ + b + prior of the positions this student sampled since its weights last
   * changed, by the sequence prompt + response, so that `train()` on its own samples (on-policy
   * rows) does not add the same weight rows a second time. A pure cache: an entry is used only for
   * the exact token sequence it was computed on, and every weight change through train() or
   * loadState() empties it, so the numbers are bit-identical to recomputing them. Code that writes
   * W or b directly between sample() and train() must call invalidateCaches(); lossAndGradient()
   * (gradient checks) never reads it. Oldest entries go first beyond LOGIT_CACHE_POSITIONS positions.
   */
  private readonly logitCache = new Map<number, { tokens: Int32Array; start: number; z: Float64Array[] }>();
  private logitCachePositions = 0;

  constructor(tokenizer: WordTokenizer, opts: EmbeddedStudentOptions) {
    if (!Number.isInteger(opts.features) || opts.features < 1) {
      throw new BackendError(`embedded student: features must be a positive integer, got ${opts.features}`, SERVER, false);
    }
    this.tokenizer = tokenizer;
    this.features = opts.features;
    this.V = tokenizer.vocabSize;
    this.precision = opts.precision ?? "float32";
    const bytes = 3 * opts.features * this.V * (this.precision === "float32" ? 4 : 8);
    if (bytes > MAX_PARAMETER_BYTES) {
      throw new BackendError(
        `embedded student: features (${opts.features}) × vocabulary (${this.V}) needs ${(bytes / 2 ** 30).toFixed(1)} GiB for weights and Adam moments`,
        SERVER, false, `lower the embedded backend's features (e.g. ${2 ** Math.floor(Math.log2(MAX_PARAMETER_BYTES / (3 * 4 * this.V)))}) or use float32`,
      );
    }
    const Arr = this.precision === "float32" ? Float32Array : Float64Array;
    this.W = new Arr(opts.features * this.V);
    this.mW = new Arr(opts.features * this.V);
    this.vW = new Arr(opts.features * this.V);
    this.b = new Float64Array(this.V);
    this.mb = new Float64Array(this.V);
    const P = opts.pointerFeatures ?? true ? POINTER_SIZE : 0;
    this.pointer = new Float64Array(P);
    this.mp = new Float64Array(P);
    this.vp = new Float64Array(P);
    this.vb = new Float64Array(this.V);
    this.isLive = new Uint8Array(opts.features);
    this.live = new Int32Array(Math.min(opts.features, 1024));
    this.maxContextWords = opts.maxContextWords ?? 256;
    this.clipRatioC = opts.clipRatioC ?? 3.0;
    this.candidateLogOdds = opts.candidateLogOdds ?? 0;
    this.pointerScale = opts.pointerScale ?? DEFAULT_POINTER_SCALE;
    if (!(this.pointerScale > 0) || !Number.isFinite(this.pointerScale)) {
      throw new BackendError(`embedded student: pointerScale must be a finite number > 0, got ${opts.pointerScale}`, SERVER, false);
    }
    if (!Number.isFinite(this.candidateLogOdds)) {
      throw new BackendError(`embedded student: candidateLogOdds must be a finite number, got ${opts.candidateLogOdds}`, SERVER, false);
    }
    this.adamDefaults = {
      beta1: opts.betas?.[0] ?? 0.9, beta2: opts.betas?.[1] ?? 0.999, eps: opts.eps ?? 1e-3, weightDecay: opts.weightDecay ?? 0.01,
    };
    this.prior = new Float64Array(this.V);
    const priorLogOdds = this.priorLogOdds = opts.priorLogOdds ?? -4;
    tokenizer.kinds.forEach((k, id) => {
      if (k !== "word" && k !== "literal" && id !== tokenizer.endOfResponse) this.prior[id] = priorLogOdds;
    });
    this.z = new Float64Array(this.V);
    this.logq = new Float64Array(this.V);

    const wordKey = new Int32Array(this.V).fill(-1);
    tokenizer.kinds.forEach((k, id) => {
      if (k === "word") wordKey[id] = tokenizer.idOf(tokenizer.tokens[id]!.trimStart()) ?? id;
    });
    const newline = tokenizer.encode("\n");
    this.vocab = {
      userToken: tokenizer.specialId("<|user|>"), endToken: tokenizer.specialId("<|end|>"), wordKey,
      newlineToken: (opts.lineFeatures ?? true) && newline.length === 1 ? newline[0]! : -1,
      ...candidateTokens(tokenizer, opts.candidateFeatures ?? true),
      ...(opts.memoryFeatures ?? true ? { decode: (ids: number[]) => tokenizer.decode(ids) } : {}),
    };
    this.stop = new Uint8Array(this.V);
    for (const s of tokenizer.stopTokens) this.stop[s] = 1;

    const scale = opts.initScale ?? 0;
    if (scale > 0) {
      const rnd = sfc32(opts.seed);
      for (let i = 0; i < this.W.length; i++) this.W[i] = (2 * rnd() - 1) * scale;
      for (let r = 0; r < this.features; r++) this.markLive(r);
    }
  }

  version(): number { return this.steps; }

  /** Number of active feature rows at each position of a response to `prompt` (cost diagnostics). */
  activeRows(prompt: readonly number[]): number {
    return featureCount(promptWords(prompt, prompt.length, this.vocab, this.maxContextWords));
  }

  async sample(reqs: SampleRequest[]): Promise<SampleResult[]> {
    return reqs.map((r, i) => this.sampleOne(r, i));
  }

  async score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    return reqs.map((r, i) => this.scoreOne(r, i));
  }

  async train(rows: TrainRow[], opt: EmbeddedTrainOptions): Promise<TrainStats> {
    const lg = this.lossAndGradient(rows, opt, true);
    this.applyAdamW(lg, opt);
    const stats = { loss: lg.loss, gradNorm: lg.gradNorm, tokens: lg.tokens };
    this.releaseGradient(lg);
    return stats;
  }

  async saveState(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeStudentState(dir, {
      meta: { ...this.dims(), steps: this.steps },
      rows: this.live.subarray(0, this.liveCount),
      W: this.W, mW: this.mW, vW: this.vW, b: this.b, mb: this.mb, vb: this.vb,
      p: this.pointer, mp: this.mp, vp: this.vp,
    });
  }

  async loadState(dir: string): Promise<void> {
    const s = await readStudentState(dir, this.dims());
    this.W.fill(0); this.mW.fill(0); this.vW.fill(0);
    this.isLive.fill(0); this.liveCount = 0;
    const V = this.V;
    s.rows.forEach((r, i) => {
      this.markLive(r);
      this.W.set(s.W.subarray(i * V, (i + 1) * V), r * V);
      this.mW.set(s.mW.subarray(i * V, (i + 1) * V), r * V);
      this.vW.set(s.vW.subarray(i * V, (i + 1) * V), r * V);
    });
    this.b.set(s.b); this.mb.set(s.mb); this.vb.set(s.vb);
    this.pointer.set(s.p); this.mp.set(s.mp); this.vp.set(s.vp);
    this.steps = s.steps;
    this.clearLogitCache();
  }

  /** What a checkpoint records and checks (state-io.ts StudentDims). */
  private dims(): StudentDims {
    return {
      fingerprint: this.tokenizer.fingerprint(), features: this.features, vocabSize: this.V, precision: this.precision,
      pointer: this.pointer.length, pointerScale: this.pointerScale, priorLogOdds: this.priorLogOdds, candidateLogOdds: this.candidateLogOdds,
    };
  }

  async close(): Promise<void> { /* nothing held outside memory */ }

  /**
   * Σ over rows and masked positions of lossWeights·ℓ, and its exact gradient with respect to W
   * and b (temperature 1). Pure with respect to the model: reads the weights, changes nothing.
   */
  lossAndGradient(rows: TrainRow[], opt: { lossFn: PolicyLossFn; clip: number; logRatioClamp?: number }, useSampledLogits = false): LossGradient {
    const V = this.V;
    const params = { fn: opt.lossFn, clip: opt.clip, clipRatioC: this.clipRatioC, logRatioClamp: opt.logRatioClamp ?? DEFAULT_LOG_RATIO_CLAMP };
    const bias = new Float64Array(V);
    const gPtr = new Float64Array(this.pointer.length);
    const grads = new Map<number, Float64Array>();
    const owned = new Set<number>();
    let loss = 0, tokens = 0;
    const z = this.z;
    rows.forEach((row, ri) => {
      this.checkRow(row, ri);
      const toks = row.tokens;
      let runStart = -1;
      let words: PromptWords | undefined;
      let cached: Float64Array[] | null = null;
      for (let t = 0; t < toks.length; t++) {
        if (row.mask[t] !== 1) { runStart = -1; continue; }
        tokens++;
        if (runStart < 0) {
          runStart = t;
          words = promptWords(toks, t, this.vocab, this.maxContextWords);
          this.ensureRowsBuf(featureCount(words));
          let end = t;
          while (end < toks.length && row.mask[end] === 1) end++;
          cached = useSampledLogits ? this.cachedLogits(toks, runStart, end) : null;
        }
        const w = row.lossWeights[t]!;
        if (w === 0) continue;
        const q = row.teacherDistributions?.[t] ?? null;
        const gKl = q === null ? 0 : w * (row.klCoefs?.[t] ?? 0);
        const gFwd = q === null ? 0 : w * (row.forwardKlCoefs?.[t] ?? 0);
        const n = activeFeatures(words!, toks, runStart, t - runStart, this.features, this.rowsBuf);
        if (cached) z.set(cached[t - runStart]!);
        else this.logits(this.rowsBuf, n, z);
        this.addCandidatePrior(words!, toks, runStart, t - runStart, z);
        this.addPointers(words!, toks, runStart, t - runStart, z);
        const lse = logSumExp(z, 1);
        const y = toks[t]!;
        const lp = z[y]! - lse;
        const tl = tokenPolicyLoss(lp, row.oldLogprobs![t]!, row.advantages[t]!, params);
        loss += w * tl.loss;
        const g = w * tl.dLossDlp;
        if (g === 0 && gKl === 0 && gFwd === 0) continue;
        // Policy term: dℓ/dz_k = g·(1[k = y] − p_k): the gradient of every active row at this position.
        const delta = this.gradPool.pop() ?? new Float64Array(V);
        for (let k = 0; k < V; k++) delta[k] = -g * Math.exp(z[k]! - lse);
        delta[y] = delta[y]! + g;
        // Exact reverse KL (opd "full", gkd) and forward KL (gkd) to the teacher's distribution,
        // with their gradients added into delta.
        if (gKl !== 0 || gFwd !== 0) {
          const logq = this.teacherLogq(q!, `train row ${ri}, position ${t}`);
          if (gKl !== 0) loss += gKl * exactReverseKl(z, lse, logq, delta, gKl);
          if (gFwd !== 0) loss += gFwd * exactForwardKl(z, lse, logq, delta, gFwd);
        }
        for (let k = 0; k < V; k++) bias[k] = bias[k]! + delta[k]!;
        for (let i = 0; i < this.ptrCount; i++) gPtr[this.ptrKey[i]!] = gPtr[this.ptrKey[i]!]! + this.pointerScale * this.ptrWeight[i]! * delta[this.ptrTok[i]!]!;
        // Copy on second write: most rows (prefix-keyed) are active at one position only, so their
        // gradient *is* that position's delta and is shared, not copied; a row met again gets its
        // own accumulator. Shared arrays are never written after this position.
        let referenced = false;
        for (let i = 0; i < n; i++) {
          const r = this.rowsBuf[i]!;
          const gr = grads.get(r);
          if (gr === undefined) { grads.set(r, delta); referenced = true; continue; }
          if (owned.has(r)) { for (let k = 0; k < V; k++) gr[k] = gr[k]! + delta[k]!; continue; }
          const acc = this.gradPool.pop() ?? new Float64Array(V);
          for (let k = 0; k < V; k++) acc[k] = gr[k]! + delta[k]!;
          grads.set(r, acc);
          owned.add(r);
        }
        if (!referenced) this.gradPool.push(delta);
      }
    });
    let sq = 0;
    for (let k = 0; k < V; k++) sq += bias[k]! * bias[k]!;
    for (let k = 0; k < gPtr.length; k++) sq += gPtr[k]! * gPtr[k]!;
    // Each distinct array once, times the number of rows that share it.
    const uses = new Map<Float64Array, number>();
    for (const gr of grads.values()) uses.set(gr, (uses.get(gr) ?? 0) + 1);
    for (const [gr, count] of uses) {
      let s = 0;
      for (let k = 0; k < V; k++) s += gr[k]! * gr[k]!;
      sq += count * s;
    }
    return { loss, gradNorm: Math.sqrt(sq), tokens, bias, rows: grads, ...(gPtr.length ? { pointer: gPtr } : {}) };
  }

  /** One AdamW step from a gradient (global-norm clip as torch.nn.utils.clip_grad_norm_). */
  private applyAdamW(lg: LossGradient, opt: EmbeddedTrainOptions): void {
    if (!(opt.lr >= 0) || !Number.isFinite(opt.lr)) throw new BackendError(`embedded student: learning rate must be a finite number ≥ 0, got ${opt.lr}`, SERVER, false);
    if (!Number.isFinite(lg.gradNorm)) {
      throw new BackendError(`embedded student: gradient norm is ${lg.gradNorm} at step ${this.steps + 1}; no update applied`, SERVER, false,
        "check the advantages and old log-probabilities for NaN/Infinity, or use the ppo loss (its ratio is clamped)");
    }
    const h: AdamWHyper = {
      lr: opt.lr,
      beta1: opt.betas?.[0] ?? this.adamDefaults.beta1,
      beta2: opt.betas?.[1] ?? this.adamDefaults.beta2,
      eps: opt.eps ?? this.adamDefaults.eps,
      weightDecay: opt.weightDecay ?? this.adamDefaults.weightDecay,
    };
    const scale = opt.gradClip > 0 ? Math.min(1, opt.gradClip / (lg.gradNorm + 1e-6)) : 1;
    for (const r of lg.rows.keys()) this.markLive(r);
    const t = this.steps + 1;
    const V = this.V;
    for (let i = 0; i < this.liveCount; i++) {
      const r = this.live[i]!;
      adamwSlice(this.W, this.mW, this.vW, r * V, V, lg.rows.get(r) ?? null, scale, t, h);
    }
    adamwSlice(this.b, this.mb, this.vb, 0, V, lg.bias, scale, t, h);
    if (this.pointer.length > 0) adamwSlice(this.pointer, this.mp, this.vp, 0, this.pointer.length, lg.pointer ?? null, scale, t, h);
    this.steps = t;
    this.clearLogitCache();
  }

  private releaseGradient(lg: LossGradient): void {
    for (const gr of new Set(lg.rows.values())) this.gradPool.push(gr);
    lg.rows.clear();
  }

  /** Forget the logits remembered from sampling (see `logitCache`): after writing W or b directly. */
  invalidateCaches(): void { this.clearLogitCache(); }

  private clearLogitCache(): void {
    this.logitCache.clear();
    this.logitCachePositions = 0;
  }

  /** Remembers the logits of a sampled response (seq = prompt + response, response from `start`). */
  private cacheLogits(seq: readonly number[], start: number, zs: Float64Array[]): void {
    const key = sequenceHash(seq, seq.length);
    if (this.logitCache.has(key) || zs.length > LOGIT_CACHE_POSITIONS) return;
    this.logitCache.set(key, { tokens: Int32Array.from(seq), start, z: zs });
    this.logitCachePositions += zs.length;
    for (const [k, e] of this.logitCache) {
      if (this.logitCachePositions <= LOGIT_CACHE_POSITIONS) break;
      this.logitCache.delete(k);
      this.logitCachePositions -= e.z.length;
    }
  }

  /** The cached logits of positions [start, end) of `toks`, if exactly this sequence was sampled from `start`. */
  private cachedLogits(toks: readonly number[], start: number, end: number): Float64Array[] | null {
    const e = this.logitCache.get(sequenceHash(toks, end));
    if (!e || e.start !== start || e.tokens.length !== end || e.z.length < end - start) return null;
    for (let i = 0; i < end; i++) if (e.tokens[i] !== toks[i]) return null;
    return e.z;
  }

  private markLive(r: number): void {
    if (this.isLive[r]) return;
    this.isLive[r] = 1;
    if (this.liveCount === this.live.length) {
      const grown = new Int32Array(Math.min(this.features, this.live.length * 2));
      grown.set(this.live);
      this.live = grown;
    }
    this.live[this.liveCount++] = r;
  }

  private ensureRowsBuf(n: number): void {
    if (this.rowsBuf.length < n) this.rowsBuf = new Int32Array(n);
  }

  /** z[t] += candidateLogOdds for each token t that continues a candidate listed in the prompt. */
  private addCandidatePrior(words: PromptWords, seq: ArrayLike<number>, start: number, pos: number, z: Float64Array): void {
    if (this.candidateLogOdds === 0) return;
    const n = candidateNextTokens(words, seq, start, pos, this.tokenizer.endOfResponse, this.candidateBuf);
    for (let i = 0; i < n; i++) z[this.candidateBuf[i]!] = z[this.candidateBuf[i]!]! + this.candidateLogOdds;
  }

  /**
   * z[t] += log mean_{candidates j continuing with t} exp(pointer[key_j]) (features.ts
   * `candidatePointers`): a softmax-weighted pointer score per token, 0 at the start (so the student
   * starts uniform over the listed next tokens, not biased to the verb most candidates share; a
   * log-sum would start `go` log 25 above `put` and reverse KL could not bring `put` back).
   * Keeps each pair's softmax weight within its token (∂/∂pointer[key_j]) for the gradient.
   */
  private addPointers(words: PromptWords, seq: ArrayLike<number>, start: number, pos: number, z: Float64Array): void {
    this.ptrCount = 0;
    if (this.pointer.length === 0) return;
    const n = candidatePointers(words, seq, start, pos, this.tokenizer.endOfResponse, this.ptrTok, this.ptrKey);
    this.ptrCount = n;
    const tok = this.ptrTok, w = this.ptrWeight, lse = this.ptrLse, P = this.pointer, sc = this.pointerScale;
    // Per pair i, the first pair of its token does the token's log-sum-exp (a few dozen pairs).
    for (let i = 0; i < n; i++) {
      let first = i;
      for (let j = 0; j < i; j++) if (tok[j] === tok[i]) { first = j; break; }
      if (first !== i) { lse[i] = lse[first]!; continue; }
      let m = -Infinity;
      for (let j = i; j < n; j++) if (tok[j] === tok[i]) m = Math.max(m, sc * P[this.ptrKey[j]!]!);
      let s = 0, count = 0;
      for (let j = i; j < n; j++) if (tok[j] === tok[i]) { s += Math.exp(sc * P[this.ptrKey[j]!]! - m); count++; }
      lse[i] = m + Math.log(s);
      z[tok[i]!] = z[tok[i]!]! + lse[i]! - Math.log(count);
    }
    for (let i = 0; i < n; i++) w[i] = Math.exp(sc * P[this.ptrKey[i]!]! - lse[i]!);
  }

  /**
   * z = prior + b + Σ_i W[rows[i], :], the rows added in order. Four rows per pass over z (the
   * student's hottest loop): `z + a + b + c + d` is evaluated left to right in float64, so the sums
   * are bit-identical to one row per pass, with a quarter of z's loads and stores.
   */
  private logits(rows: Int32Array, n: number, z: Float64Array): void {
    const V = this.V, W = this.W, b = this.b, prior = this.prior;
    for (let k = 0; k < V; k++) z[k] = prior[k]! + b[k]!;
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const o0 = rows[i]! * V, o1 = rows[i + 1]! * V, o2 = rows[i + 2]! * V, o3 = rows[i + 3]! * V;
      for (let k = 0; k < V; k++) z[k] = z[k]! + W[o0 + k]! + W[o1 + k]! + W[o2 + k]! + W[o3 + k]!;
    }
    for (; i < n; i++) {
      const off = rows[i]! * V;
      for (let k = 0; k < V; k++) z[k] = z[k]! + W[off + k]!;
    }
  }

  private sampleOne(req: SampleRequest, index: number): SampleResult {
    this.checkTokens(req.prompt, `sample request ${index}: prompt`);
    if (!Number.isInteger(req.maxTokens) || req.maxTokens < 1) {
      throw new BackendError(`embedded student: sample request ${index}: maxTokens must be a positive integer, got ${req.maxTokens}`, SERVER, false);
    }
    const tau = checkTemperature(req.temperature, `sample request ${index}`);
    const rnd = sfc32(req.seed);
    const words = promptWords(req.prompt, req.prompt.length, this.vocab, this.maxContextWords);
    this.ensureRowsBuf(featureCount(words));
    const seq = req.prompt.slice();
    const start = seq.length;
    const tokens: number[] = [], logprobs: number[] = [];
    const z = this.z, V = this.V;
    const zs: Float64Array[] = [];
    for (let pos = 0; pos < req.maxTokens; pos++) {
      const n = activeFeatures(words, seq, start, pos, this.features, this.rowsBuf);
      this.logits(this.rowsBuf, n, z);
      zs.push(z.slice());
      this.addCandidatePrior(words, seq, start, pos, z);
      this.addPointers(words, seq, start, pos, z);
      let y: number;
      let lp: number;
      if (tau === 0) {
        y = 0;
        for (let k = 1; k < V; k++) if (z[k]! > z[y]!) y = k;
        lp = z[y]! - logSumExp(z, 1);
      } else {
        const lse = logSumExp(z, tau);
        const u = rnd();
        let acc = 0;
        y = -1;
        for (let k = 0; k < V; k++) {
          acc += Math.exp(z[k]! / tau - lse);
          if (u < acc) { y = k; break; }
        }
        // Rounding can leave acc a hair below u: take the most probable token then.
        if (y < 0) { y = 0; for (let k = 1; k < V; k++) if (z[k]! > z[y]!) y = k; }
        lp = z[y]! / tau - lse;
      }
      tokens.push(y);
      logprobs.push(lp);
      seq.push(y);
      if (this.stop[y]) { this.cacheLogits(seq, start, zs); return { tokens, logprobs, finishReason: "stop" }; }
    }
    this.cacheLogits(seq, start, zs);
    return { tokens, logprobs, finishReason: "length" };
  }

  private scoreOne(req: ScoreRequest, index: number): ScoreResult {
    this.checkTokens(req.prompt, `score request ${index}: prompt`);
    this.checkTokens(req.completion, `score request ${index}: completion`);
    const tau = checkTemperature(req.temperature, `score request ${index}`) || 1;
    const words = promptWords(req.prompt, req.prompt.length, this.vocab, this.maxContextWords);
    this.ensureRowsBuf(featureCount(words));
    const seq = [...req.prompt, ...req.completion];
    const start = req.prompt.length;
    const k = req.topk ?? 0;
    const logprobs: number[] = [], entropy: number[] = [], topk: { token: number; logprob: number }[][] = [];
    const z = this.z, V = this.V;
    for (let pos = 0; pos < req.completion.length; pos++) {
      const n = activeFeatures(words, seq, start, pos, this.features, this.rowsBuf);
      this.logits(this.rowsBuf, n, z);
      this.addCandidatePrior(words, seq, start, pos, z);
      this.addPointers(words, seq, start, pos, z);
      const lse = logSumExp(z, tau);
      logprobs.push(z[req.completion[pos]!]! / tau - lse);
      let h = 0;
      for (let j = 0; j < V; j++) {
        const l = z[j]! / tau - lse;
        const pj = Math.exp(l);
        if (pj > 0) h -= pj * l;
      }
      entropy.push(h);
      if (k > 0) topk.push(topK(z, tau, lse, k));
    }
    return k > 0 ? { logprobs, entropy, topk } : { logprobs, entropy };
  }

  private checkTokens(ids: readonly number[], what: string): void {
    for (let i = 0; i < ids.length; i++) {
      const t = ids[i]!;
      if (!Number.isInteger(t) || t < 0 || t >= this.V) {
        throw new BackendError(`embedded student: ${what}[${i}] = ${t} is not a token id of this vocabulary (0..${this.V - 1})`, SERVER, false,
          "teacher, student and rollout must share the embedded tokenizer (compare fingerprints)");
      }
    }
  }

  /**
   * The dense log q of a teacher distribution (into a scratch buffer), checked: ids in the
   * vocabulary, finite log-probabilities, total probability 1 (±1e-6).
   */
  private teacherLogq(q: TokenDistribution, where: string): Float64Array {
    const out = this.logq, V = this.V;
    if (q.tokens.length !== q.logprobs.length) {
      throw new BackendError(`embedded student: ${where}: teacher distribution lists ${q.tokens.length} tokens but ${q.logprobs.length} log-probabilities`, SERVER, false);
    }
    if (q.rest === null && q.tokens.length !== V) {
      throw new BackendError(`embedded student: ${where}: teacher distribution lists ${q.tokens.length} of ${V} tokens and has no rest log-probability`, SERVER, false,
        "list every token of the vocabulary, or give `rest`, the log-probability of each unlisted token");
    }
    out.fill(q.rest ?? Number.NaN);
    for (let i = 0; i < q.tokens.length; i++) {
      const id = q.tokens[i]!;
      if (!Number.isInteger(id) || id < 0 || id >= V) throw new BackendError(`embedded student: ${where}: teacher distribution names token ${id}, outside 0..${V - 1}`, SERVER, false);
      out[id] = q.logprobs[i]!;
    }
    let total = 0;
    for (let k = 0; k < V; k++) {
      const l = out[k]!;
      if (!(l <= 0) || l === -Infinity) {
        throw new BackendError(`embedded student: ${where}: teacher log-probability of token ${k} is ${l}; exact KL needs finite log-probabilities ≤ 0 for every token`, SERVER, false,
          "give the teacher full support (the oracle's offTrieMass > 0) and list each token once");
      }
      total += Math.exp(l);
    }
    if (Math.abs(total - 1) > 1e-6) {
      throw new BackendError(`embedded student: ${where}: teacher distribution sums to ${total}, not 1`, SERVER, false, "normalise the teacher's next-token distribution");
    }
    return out;
  }

  private checkRow(row: TrainRow, index: number): void {
    const n = row.tokens.length;
    if (row.oldLogprobs === null) {
      throw new BackendError(`embedded student: train row ${index} has no old log-probabilities; this backend scores rows before training (trainsSelfScored is not set)`, SERVER, false);
    }
    for (const f of ["mask", "advantages", "oldLogprobs", "lossWeights"] as const) {
      if (row[f]!.length !== n) {
        throw new BackendError(`embedded student: train row ${index}: ${f} has ${row[f]!.length} entries but tokens has ${n}`, SERVER, false);
      }
    }
    for (const f of ["klCoefs", "forwardKlCoefs", "teacherDistributions"] as const) {
      const a = row[f];
      if (a !== undefined && a.length !== n) {
        throw new BackendError(`embedded student: train row ${index}: ${f} has ${a.length} entries but tokens has ${n}`, SERVER, false);
      }
    }
    if (row.forwardKlCoefs !== undefined && row.klCoefs === undefined) {
      throw new BackendError(`embedded student: train row ${index}: forwardKlCoefs come with klCoefs and teacherDistributions (exact KL targets); they are missing`, SERVER, false);
    }
    if ((row.klCoefs === undefined) !== (row.teacherDistributions === undefined)) {
      throw new BackendError(`embedded student: train row ${index}: klCoefs and teacherDistributions come together (exact KL targets); one is missing`, SERVER, false);
    }
    this.checkTokens(row.tokens, `train row ${index}: tokens`);
  }
}

/** Positions whose logits the student keeps between sampling and training (≈ V × 8 bytes each). */
const LOGIT_CACHE_POSITIONS = 8192;

/** FNV-1a over the first `n` token ids. */
function sequenceHash(toks: readonly number[], n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ toks[i]!, 0x01000193);
  return h >>> 0;
}

function checkTemperature(t: number, what: string): number {
  if (!(t >= 0) || !Number.isFinite(t)) throw new BackendError(`embedded student: ${what}: temperature must be a finite number ≥ 0, got ${t}`, SERVER, false);
  return t;
}

/** log Σ_k exp(z_k / τ), stable. */
function logSumExp(z: Float64Array, tau: number): number {
  let max = -Infinity;
  for (let k = 0; k < z.length; k++) if (z[k]! > max) max = z[k]!;
  const m = max / tau;
  let s = 0;
  for (let k = 0; k < z.length; k++) s += Math.exp(z[k]! / tau - m);
  return m + Math.log(s);
}

/** The k most probable tokens, most probable first (lower id first on ties). */
function topK(z: Float64Array, tau: number, lse: number, k: number): { token: number; logprob: number }[] {
  const best: number[] = [];
  for (let j = 0; j < z.length; j++) {
    if (best.length === k && z[j]! <= z[best[k - 1]!]!) continue;
    let at = best.length;
    while (at > 0 && z[best[at - 1]!]! < z[j]!) at--;
    best.splice(at, 0, j);
    if (best.length > k) best.pop();
  }
  return best.map((token) => ({ token, logprob: z[token]! / tau - lse }));
}
