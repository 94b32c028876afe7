/**
 * The training side of a student: the tcod worker's Tinker-shaped routes
 * (`/forward_backward`, `/optim_step`, `/save`, `/load`; worker/tcod_worker/worker.py).
 *
 * None of these calls is retried: forward_backward accumulates gradients and optim_step advances
 * the policy, so repeating one whose answer was lost would train twice. A failure surfaces as a
 * non-retryable BackendError and the engine decides (it checkpoints and stops).
 */
import type { TrainRow, TrainStats } from "../backend.js";
import type { OpenAIClient } from "./client.js";
import { asNumber, asObject, asString, type Json } from "./dialects/shape.js";
import { HttpBackendError } from "./errors.js";

export type TrainLoss = "importance_sampling" | "ppo" | "cross_entropy" | "reverse_kl";

export interface TrainOptions {
  lr: number;
  lossFn: TrainLoss;
  /** PPO ratio clip ε (both sides). */
  clip: number;
  /** Global gradient-norm clip; 0 = none. */
  gradClip: number;
  /** PPO dual clip c (Ye et al. 2020, arXiv 1912.09729; Trinity-RFT uses 3.0, the default here: docs/REFERENCES.md#policy-losses); null = off. */
  dualClip?: number | null;
  betas?: [number, number];
  weightDecay?: number;
  /** Temperature of the reverse-KL loss (worker holds the teacher). */
  temperature?: number;
  /** importance_sampling: clamp of lp − old before exp (the plan's Update.logRatioClamp; runtime/signals/losses.ts). */
  logRatioClamp?: number;
}

export interface ForwardBackwardResult { loss: number; tokens: number; metrics: Record<string, number> }

/** PPO dual-clip constant c (docs/REFERENCES.md#policy-losses: PPO clip 0.2, dual clip 3.0). */
export const DEFAULT_DUAL_CLIP = 3.0;

/** Per-call timeout for training routes: a big batch on a small GPU takes minutes, not seconds. */
const DEFAULT_TRAIN_TIMEOUT_MS = 30 * 60_000;

export class WorkerTrainer {
  constructor(private readonly client: OpenAIClient, private readonly timeoutMs = DEFAULT_TRAIN_TIMEOUT_MS) {}

  get server(): string { return this.client.url; }

  /** The client, for reading the trainer's tokenizer (its /tokenize speaks vLLM's shape). */
  get http(): OpenAIClient { return this.client; }

  async forwardBackward(rows: TrainRow[], o: TrainOptions): Promise<ForwardBackwardResult> {
    rows.forEach((r, i) => checkRow(r, i, this.client.url));
    const body = {
      rows: rows.map((r) => ({
        tokens: r.tokens, mask: r.mask, advantages: r.advantages, old_logprobs: r.oldLogprobs, loss_weights: r.lossWeights,
        // Exact-KL targets (opd "topk"/"full", gkd): the worker adds the KL terms beside the policy loss.
        ...(r.klCoefs ? { kl_coefs: r.klCoefs } : {}),
        ...(r.forwardKlCoefs ? { forward_kl_coefs: r.forwardKlCoefs } : {}),
        ...(r.teacherDistributions ? { teacher_distributions: r.teacherDistributions } : {}),
      })),
      loss: o.lossFn,
      clip: o.clip,
      // Always sent: the worker requires the field to be present (null switches dual clipping off).
      dual_clip: o.dualClip === undefined ? DEFAULT_DUAL_CLIP : o.dualClip,
      ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
      // The plan's clamp; the worker leaves the log-ratio unclamped (Tinker's loss) only when it is absent.
      ...(o.logRatioClamp !== undefined ? { log_ratio_clamp: o.logRatioClamp } : {}),
    };
    return this.client.postJson("/forward_backward", body, (j) => {
      const x = asObject(j, "");
      const metrics: Record<string, number> = {};
      if (x.metrics !== undefined) for (const [k, v] of Object.entries(asObject(x.metrics, "metrics"))) metrics[k] = asNumber(v, `metrics.${k}`);
      return { loss: asNumber(x.loss, "loss"), tokens: asNumber(x.tokens, "tokens"), metrics };
    }, { retries: 0, timeoutMs: this.timeoutMs });
  }

  async optimStep(o: TrainOptions): Promise<{ gradNorm: number; version: number }> {
    const body = {
      lr: o.lr,
      grad_clip: o.gradClip > 0 ? o.gradClip : null,
      ...(o.betas ? { betas: o.betas } : {}),
      ...(o.weightDecay !== undefined ? { weight_decay: o.weightDecay } : {}),
    };
    return this.client.postJson("/optim_step", body, (j) => {
      const x = asObject(j, "");
      return { gradNorm: asNumber(x.grad_norm, "grad_norm"), version: asNumber(x.version, "version") };
    }, { retries: 0, timeoutMs: this.timeoutMs });
  }

  /** The policy version (optimiser steps taken) the worker reports in /info. */
  async version(): Promise<number> {
    return this.client.getJson("/info", (j) => asNumber(asObject(j, "").version, "version"), { timeoutMs: 30_000 });
  }

  /** The rows of the trained model's embedding (/info vocab_size), where the worker reports them. */
  async vocabSize(): Promise<number | undefined> {
    return this.client.getJson("/info", (j) => {
      const v = asObject(j, "").vocab_size;
      return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined;
    }, { timeoutMs: 30_000 });
  }

  /** forward_backward over all rows, then one optimiser step. */
  async step(rows: TrainRow[], o: TrainOptions): Promise<TrainStats & { version: number; metrics: Record<string, number> }> {
    const fb = await this.forwardBackward(rows, o);
    const st = await this.optimStep(o);
    return { loss: fb.loss, tokens: fb.tokens, gradNorm: st.gradNorm, version: st.version, metrics: fb.metrics };
  }

  /** Save weights (PEFT adapter for `lora`) and the optimiser state; returns the absolute path and version. */
  async save(path: string, kind?: "lora" | "full"): Promise<{ path: string; version: number }> {
    return this.client.postJson("/save", { path, ...(kind ? { kind } : {}), optimizer: true }, (j: Json) => {
      const x = asObject(j, "");
      return { path: asString(x.path, "path"), version: asNumber(x.version, "version") };
    }, { retries: 0, timeoutMs: this.timeoutMs });
  }

  async load(path: string): Promise<{ version: number }> {
    return this.client.postJson("/load", { path, optimizer: true }, (j) => ({ version: asNumber(asObject(j, "").version, "version") }),
      { retries: 0, timeoutMs: this.timeoutMs });
  }
}

/** Catch row-shape mistakes here, with the row's index, before a large upload. */
function checkRow(r: TrainRow, i: number, server: string): void {
  const n = r.tokens.length;
  for (const k of ["mask", "advantages", "oldLogprobs", "lossWeights", "klCoefs", "forwardKlCoefs", "teacherDistributions"] as const) {
    const a = r[k];
    if (a != null && a.length !== n) {
      throw new HttpBackendError(`train row ${i}: ${k} has ${a.length} entries for ${n} tokens`, server, "/forward_backward", "config", false,
        "Every per-token array of a TrainRow must be as long as its tokens (0 where mask is 0).");
    }
  }
  if (n > 0 && r.mask[0] !== 0) {
    throw new HttpBackendError(`train row ${i}: mask[0] is ${r.mask[0]}, but the first token has no context to be predicted from`, server, "/forward_backward", "config", false,
      "Start every row with at least one prompt token (mask 0).");
  }
}
