/**
 * Backend interfaces. Trajectories are token ids plus loss masks (token-in/token-out): prompts are
 * extended by appending rendered segments, never re-rendered from text.
 */
import { UserError, type Where } from "../../plan/errors.js";

export interface Tokenizer {
  readonly vocabSize: number;
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Token ids that end a response (EOS / end of turn). */
  readonly stopTokens: number[];
  /** Chat rendering as token segments, so memory can accumulate without re-rendering. */
  renderSystem(text: string): number[];
  renderUser(text: string): number[];
  /** Tokens that open an assistant reply (part of the prompt). */
  assistantPrefix(): number[];
  /** Tokens that close an assistant reply when it is appended to memory. */
  assistantSuffix(): number[];
  /** Identifies the vocabulary and chat template; teacher and student must agree. */
  fingerprint(): string;
}

export interface SampleRequest {
  prompt: number[];
  maxTokens: number;
  temperature: number;
  /** Per-request seed, so rollouts are deterministic per run seed. */
  seed: number;
  /** What the env allows now; the embedded student ignores it, an oracle uses it. */
  context?: TurnContext;
}

export interface SampleResult {
  tokens: number[];
  /** log p_S of each sampled token under the sampling distribution. */
  logprobs: number[];
  finishReason: "stop" | "length";
}

/** Env facts a teacher may use (the oracle teacher does; an LLM teacher ignores them). */
export interface TurnContext {
  admissible: string[];
  optimal?: string[];
}

export interface ScoreRequest {
  prompt: number[];
  completion: number[];
  temperature: number;
  topk?: number;
  context?: TurnContext;
  /** Ask for the full next-token distribution at each completion position (`ScoreResult.distributions`). */
  full?: boolean;
  /**
   * Ask for the exact entropy of the next-token distribution at each completion position
   * (`ScoreResult.entropy`). A served model computes it over the whole vocabulary only when asked;
   * a backend that has it for free (the embedded one) may return it regardless.
   */
  entropy?: boolean;
}

/**
 * A next-token log-distribution over the whole vocabulary, in a sparse, JSON-safe form (rows that
 * carry it are checkpointed as JSON): `logprobs[i]` for `tokens[i]` (distinct ids), and `rest` for
 * every token not listed (null when every token is listed, as a dense teacher does). An oracle's
 * distribution is a few trie children plus a uniform floor, so this stays small.
 */
export interface TokenDistribution {
  tokens: number[];
  logprobs: number[];
  rest: number | null;
}

export interface ScoreResult {
  /** log p of each completion token given the prompt and earlier completion tokens. */
  logprobs: number[];
  /** Top-k alternatives per position, where asked and available. */
  topk?: { token: number; logprob: number }[][];
  /** Entropy of the full distribution per position, where available. */
  entropy?: number[];
  /**
   * Where asked (`full`) and available: the full next-token distribution at each completion
   * position given the prompt and earlier completion tokens; null where the scorer has no opinion
   * (such positions carry no distillation loss).
   */
  distributions?: (TokenDistribution | null)[];
}

/**
 * The longest sequence (prompt + reply) a served model reads, where its server says (the worker's
 * config, vLLM's --max-model-len, SGLang's --context-length): the run's first prompt is checked
 * against it before step 1 (runtime/preflight.ts). `source` says where the number came from.
 */
export interface ModelContext {
  tokens: number;
  source: string;
}

export interface TeacherBackend {
  readonly tokenizer: Tokenizer;
  /** Where known: how many tokens the model reads (a served model's context length). */
  readonly context?: ModelContext;
  /**
   * True when score() depends on token ids alone (no TurnContext), so one request over an
   * episode's whole token sequence gives every turn's log-probabilities (runtime/episode-sequence.ts).
   */
  readonly scoresSequences?: boolean;
  /** True when score() returns `distributions` for requests with `full` (the opd "full" estimator). */
  readonly fullDistributions?: boolean;
  score(reqs: ScoreRequest[]): Promise<ScoreResult[]>;
  close(): Promise<void>;
}

/** One row the learner trains on: one turn (Trinity style) or one trajectory (tinker style). */
export interface TrainRow {
  tokens: number[];
  /** 1 where the token was sampled by the student and carries loss; 0 for prompt/env tokens. */
  mask: number[];
  /** Per-token advantages (0 where mask is 0). */
  advantages: number[];
  /**
   * Sampling logprobs (for importance ratios); 0 where mask is 0. null: the model's own at this
   * update, so the ratio is exactly 1 (only for a backend with StudentBackend.trainsSelfScored).
   */
  oldLogprobs: number[] | null;
  /** Weight of each token in the loss aggregate (sums to 1 over the batch); 0 where mask is 0. */
  lossWeights: number[];
  /**
   * Exact reverse-KL distillation (the opd "full" estimator), where given: the loss adds
   * Σ_t lossWeights_t · klCoefs_t · KL(p_S(·|t) ‖ q_t) over positions with a teacher distribution
   * q_t (`teacherDistributions[t]`, null elsewhere). Both arrays have the row's length.
   */
  klCoefs?: number[];
  /**
   * Forward KL (the gkd loss), where given: the loss also adds Σ_t lossWeights_t · forwardKlCoefs_t ·
   * KL(q_t ‖ p_S(·|t)) at the same positions. Only beside `klCoefs` and `teacherDistributions`.
   */
  forwardKlCoefs?: number[];
  teacherDistributions?: (TokenDistribution | null)[];
}

export interface TrainStats {
  loss: number; gradNorm: number; tokens: number;
  /** Mean −log p of the rows with oldLogprobs null, before this update, and their token count. */
  selfScored?: { nll: number; tokens: number };
}

export interface StudentBackend {
  readonly tokenizer: Tokenizer;
  /** Where known: how many tokens the model reads (a served model's context length). */
  readonly context?: ModelContext;
  /** As TeacherBackend.scoresSequences: score() reads token ids alone. */
  readonly scoresSequences?: boolean;
  /**
   * True when train() honours TrainRow `klCoefs`/`forwardKlCoefs`/`teacherDistributions` (the opd
   * "full" and "topk" estimators, gkd).
   */
  readonly exactKlTargets?: boolean;
  /**
   * True when train() takes rows with oldLogprobs null (the model's own log-probabilities at the
   * update: ratio 1) and reports their NLL (TrainStats.selfScored). SFT demonstrations then need
   * no scoring call before training (a tcod worker).
   */
  readonly trainsSelfScored?: boolean;
  /**
   * Rows of the model's output layer, where more than the tokenizer's vocabulary (Hugging Face
   * models pad it, e.g. to a multiple of 64): the support of the next-token distributions train()
   * takes as exact-KL targets. A top-k target spreads its tail over these rows (signals/topk-target.ts).
   */
  readonly outputSize?: number;
  /**
   * True when the backend answers one call at a time (the tcod worker), so the episodes of a step
   * sample in lockstep: one call a round (runtime/lockstep.ts).
   */
  readonly lockstepSampling?: boolean;
  /** The policy version: number of optimiser steps taken. */
  version(): number;
  sample(reqs: SampleRequest[]): Promise<SampleResult[]>;
  /** Student logprobs (and entropy where available) of given completions. */
  score(reqs: ScoreRequest[]): Promise<ScoreResult[]>;
  /** forward_backward over rows, then one optimiser step. */
  train(rows: TrainRow[], opt: {
    lr: number; lossFn: "importance_sampling" | "ppo"; clip: number; gradClip: number;
    /** importance_sampling: clamp of the log-ratio before exp (runtime/signals/losses.ts); absent = the default bound. */
    logRatioClamp?: number;
    /** AdamW settings from the plan's optimizer, where the backend runs the optimiser itself. */
    betas?: [number, number]; eps?: number; weightDecay?: number;
  }): Promise<TrainStats>;
  /** Serialisable state for checkpoints (weights and optimiser). */
  saveState(dir: string): Promise<void>;
  loadState(dir: string): Promise<void>;
  close(): Promise<void>;
}

/** A backend failure: the engine drops the episode, counts it and retries with backoff. */
export class BackendError extends UserError {
  readonly code = "TC7004";
  /** `where`: the file at fault, where there is one (a model config the worker refused). */
  constructor(message: string, readonly server: string, readonly retryable = true, hint?: string, where?: Where) {
    super(message, { ...(hint === undefined ? {} : { hint }), ...(where === undefined ? {} : { where }) });
  }
}
