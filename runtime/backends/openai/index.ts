/**
 * OpenAI-compatible backends: a student or a teacher served by vLLM, SGLang or the tcod worker.
 *
 *   const s = await createOpenAIBackend(spec, { role: "student", model: "Qwen/Qwen3-1.7B", training: {...} });
 *   const t = await createOpenAIBackend(tspec, { role: "teacher", model: "Qwen/Qwen3-8B" });
 *   assertSameTokenizer({ tokenizer: s.tokenizer, server: s.server }, { tokenizer: t.tokenizer, server: t.server });
 *   console.log(s.probeLine);
 *
 * At creation the server is probed (one line for `tcod run`), the model checked against /v1/models,
 * and the tokenizer read from the server. Sampling and scoring go through a micro-batcher (many
 * requests per call where the dialect allows, else concurrent calls bounded by `concurrency`).
 *
 * Training: the worker trains itself. A vLLM/SGLang student is sampled there and trained on a worker
 * (`training.trainer`): after each optimiser step the worker saves a PEFT adapter to
 * `training.adapterDir/step-<version>`, and the adapter is hot-loaded into the inference server
 * (unload → load → prefix-cache reset) under `training.loraName`, which later requests address.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { BackendSpec } from "../../../plan/schema.js";
import type { ModelContext, SampleRequest, SampleResult, ScoreRequest, ScoreResult, StudentBackend, TeacherBackend, TrainRow, TrainStats } from "../backend.js";
import { MicroBatcher } from "./batcher.js";
import { OpenAIClient } from "./client.js";
import { sampleGroupKey, scoreGroupKey, type Dialect, type DialectName, type LogprobsMode } from "./dialects/dialect.js";
import { sglangDialect, type SglangOptions } from "./dialects/sglang.js";
import { vllmDialect } from "./dialects/vllm.js";
import { workerDialect, type WorkerDialectOptions } from "./dialects/worker.js";
import { HttpBackendError, UnsupportedRequest } from "./errors.js";
import { Gate } from "./gate.js";
import { hotLoadLora } from "./lora.js";
import { assertSameTokenizer } from "./fingerprint.js";
import { assertUsable, formatProbe, probeServer, type ProbeReport } from "./probe.js";
import { RemoteTokenizer, tokenizerWire, type ChatTemplateText } from "./tokenizer.js";
import { WorkerTrainer, type TrainOptions } from "./trainer.js";

export { assertSameTokenizer, tokenizerDifferences, fingerprintParts } from "./fingerprint.js";
export { HttpBackendError } from "./errors.js";
export { WorkerTrainer } from "./trainer.js";
export { formatProbe, probeServer } from "./probe.js";
export { OpenAIClient, OPENAI_MAX_BODY_BYTES, MAX_BODY_ENV } from "./client.js";
export { startWorker, startWorkerForSpec, defaultWorkerPython } from "./worker-process.js";

export type RemoteSpec = Extract<BackendSpec, { kind: "openai" | "worker" }>;

export interface OpenAIBackendOptions {
  role: "student" | "teacher";
  /** The model id requests name (ModelSpec.path); for a worker, its --model / --served-name or its --teacher. */
  model: string;
  /** Where apiKeyEnv / tokenEnv are looked up (default process.env). */
  env?: Record<string, string | undefined>;
  /** What the server's logprobs mean (default: vllm raw, sglang processed; the worker is always processed). */
  logprobsMode?: LogprobsMode;
  /** Server cap on top-k (vLLM --max-logprobs; default 20, the worker's from /info). */
  maxLogprobs?: number;
  stopTokens?: number[];
  vocabSize?: number;
  /**
   * A teacher's: the student's vocabulary size (its output rows), where known. The teacher's top-k
   * ids at or past it are refused where its answer is read, naming server, endpoint and field.
   */
  studentVocabSize?: number;
  /** Chat template as text, for servers that cannot tokenize messages (SGLang). */
  chatTemplate?: ChatTemplateText;
  sglang?: Pick<SglangOptions, "seedField" | "scoreMaxNewTokens">;
  /** Transient-failure retries per call (default 3). */
  retries?: number;
  /** The largest answer body read, bytes (default OPENAI_MAX_BODY_BYTES; `tcod run` passes $TCOD_MAX_BODY_MB). */
  maxBodyBytes?: number;
  /** vLLM / SGLang students only: who trains, and where adapters go. */
  training?: {
    trainer: WorkerTrainer;
    /** A directory both the trainer and the inference server can read (adapters are written beneath it). */
    adapterDir: string;
    /** The adapter's name on the inference server (default "tcod-student"). */
    loraName?: string;
    /** Step adapters kept under adapterDir (default 2: the one served and the one before); older ones are deleted. */
    keepAdapters?: number;
    checkLocalPath?: boolean;
  };
  /** Defaults merged into every train call (dual clip, betas, weight decay). */
  trainDefaults?: Partial<TrainOptions>;
  /** Requests per call (default: the dialect's; sampling is capped by it, e.g. 1 for vLLM whose seed is per call). */
  batch?: { sample?: number; score?: number };
}

interface Common {
  readonly server: string;
  readonly dialect: DialectName;
  readonly probe: ProbeReport;
  /** The probe as one line, for `tcod run` to print. */
  readonly probeLine: string;
}
export type OpenAIStudent = StudentBackend & Common;
export type OpenAITeacher = TeacherBackend & Common;

export function createOpenAIBackend(spec: RemoteSpec, o: OpenAIBackendOptions & { role: "student" }): Promise<OpenAIStudent>;
export function createOpenAIBackend(spec: RemoteSpec, o: OpenAIBackendOptions & { role: "teacher" }): Promise<OpenAITeacher>;
export async function createOpenAIBackend(spec: RemoteSpec, o: OpenAIBackendOptions): Promise<OpenAIStudent | OpenAITeacher> {
  const dialectName: DialectName = spec.kind === "worker" ? "worker" : spec.dialect;
  const token = readToken(spec, o.env ?? process.env);
  const client = new OpenAIClient({ url: spec.url, label: dialectName, token, concurrency: spec.concurrency, timeoutMs: spec.timeoutMs, retries: o.retries, maxBodyBytes: o.maxBodyBytes });
  try {
    return await build(spec, o, dialectName, client, token);
  } catch (e) {
    client.close();
    throw e;
  }
}

async function build(spec: RemoteSpec, o: OpenAIBackendOptions, dialectName: DialectName, client: OpenAIClient, token: string | undefined): Promise<OpenAIStudent | OpenAITeacher> {
  const probe = await probeServer(client, dialectName, o.model);
  assertUsable(probe, o.model, o.role, client);
  const info = probe.info;
  const tokenizer = RemoteTokenizer.create(client, tokenizerWire(dialectName, o.model), {
    token, timeoutMs: spec.timeoutMs, vocabSize: o.vocabSize, stopTokens: o.stopTokens, chatTemplate: o.chatTemplate,
    info: info ? { vocabSize: numberOr(info.tokenizer_vocab_size ?? info.vocab_size), stopTokens: numbersOr(info.stop_token_ids) } : undefined,
  });
  const stopTokenIds = tokenizer.stopTokens;
  const maxLogprobs = o.maxLogprobs ?? 20;

  // Options the dialect reads on every call, so a hot-load can redirect requests to the new adapter.
  const live: WorkerDialectOptions & SglangOptions = { model: o.model, role: "student", logprobsMode: o.logprobsMode, stopTokenIds, maxLogprobs, servedModels: probe.baseModels, ...o.sglang };
  // Sampled ids are checked against the model's vocabulary where it is known: the worker's embedding
  // rows (/info vocab_size), else `vocabSize` given here; a vLLM/SGLang student's trainer's rows below.
  const rows = info ? numberOr(info.vocab_size) : undefined;
  live.vocabSize = rows ?? o.vocabSize;
  if (o.role === "teacher" && o.studentVocabSize !== undefined) live.studentVocabSize = o.studentVocabSize;
  if (dialectName === "worker") live.role = workerRole(probe, o.model, client);
  if (dialectName === "worker" && o.role === "student" && live.role !== "student") {
    throw client.fail("/info", "config", false, `model '${o.model}' is this worker's teacher, not its student`, "Point the student at the worker's --model (or --served-name).");
  }
  const dialect: Dialect = dialectName === "vllm" ? vllmDialect(live) : dialectName === "sglang" ? sglangDialect(live) : workerDialect(live);
  const gate = new Gate();

  const call = async <R, T>(what: string, reqs: R[], build: (r: R[]) => { path: string; body: unknown }, parse: (j: unknown, r: R[]) => T[]): Promise<T[]> => {
    let c: { path: string; body: unknown };
    try { c = build(reqs); } catch (e) {
      if (e instanceof UnsupportedRequest) throw client.fail(`(${what})`, "unsupported", false, e.message, e.hint);
      throw e;
    }
    return client.postJson(c.path, c.body, (j) => parse(j, reqs));
  };
  const sampleBatch = Math.max(1, Math.min(o.batch?.sample ?? dialect.sampleBatch, dialect.sampleBatch));
  const scoreBatch = Math.max(1, o.batch?.score ?? dialect.scoreBatch);
  const samples = new MicroBatcher<SampleRequest, SampleResult>(sampleBatch, sampleGroupKey,
    (reqs) => gate.read(() => call("sample", reqs, dialect.buildSample, dialect.parseSample)));
  const scores = new MicroBatcher<ScoreRequest, ScoreResult>(scoreBatch, scoreGroupKey,
    (reqs) => gate.read(() => call("score", reqs, dialect.buildScore, dialect.parseScore)));

  const common: Common & { scoresSequences: true; context?: ModelContext } = { server: client.url, dialect: dialectName, probe, probeLine: formatProbe(probe, o.model), scoresSequences: true,
    ...(probe.context ? { context: probe.context } : {}) };
  const close = async (): Promise<void> => { client.close(); await tokenizer.close(); };
  const score = (reqs: ScoreRequest[]): Promise<ScoreResult[]> => scores.submit(reqs);

  if (o.role === "teacher") {
    const teacher: OpenAITeacher = { ...common, tokenizer, score, close };
    return teacher;
  }

  // ---- student: sampling here, training on the worker (itself, or a separate one + LoRA hot-load)
  const trainer = dialectName === "worker" ? new WorkerTrainer(client) : o.training?.trainer;
  if (dialectName !== "worker" && trainer) {
    // Adapters trained under another tokenizer would be served against the wrong ids: refuse at start.
    const trainerTok = RemoteTokenizer.create(trainer.http, tokenizerWire("worker", o.model), { timeoutMs: spec.timeoutMs, stopTokens: tokenizer.stopTokens });
    try {
      assertSameTokenizer({ tokenizer: trainerTok, server: trainer.server }, { tokenizer, server: client.url }, ["trainer", "inference server"],
        "so adapters trained there would be served against the wrong token ids");
    } finally {
      await trainerTok.close();
    }
    // vLLM and SGLang do not report their vocabulary size; the ids sampled there are trained on the
    // trainer's model, whose embedding rows bound them.
    live.vocabSize = (await trainer.vocabSize()) ?? live.vocabSize;
  }
  let version = info && typeof info.version === "number" ? info.version : trainer ? await trainer.version() : 0;
  const published: string[] = [];
  const needTrainer = (what: string): WorkerTrainer => {
    if (trainer) return trainer;
    throw client.fail("-", "config", false, `a ${dialectName} student cannot ${what}: the server samples but does not train`,
      "Give training: { trainer: new WorkerTrainer(<a tcod worker client>), adapterDir } so a worker trains and adapters are hot-loaded here, or serve the student from a tcod worker.");
  };
  const publish = async (dir: string): Promise<void> => {
    if (dialectName === "worker") return; // the worker samples from the weights it trains
    const t = o.training!;
    const name = t.loraName ?? "tcod-student";
    await gate.write(async () => {
      await hotLoadLora(client, dialectName, { name, path: dir, checkLocalPath: t.checkLocalPath, resetCache: probe.prefixCacheReset });
      if (dialectName === "vllm") live.model = name; else live.loraName = name;
    });
  };

  // The trainer normalises exact-KL targets over its output rows (a worker's /info vocab_size, or a
  // vLLM/SGLang student's trainer's); the tokenizer may know fewer, or none (vLLM reports no size).
  const outputRows = live.vocabSize;
  const student: OpenAIStudent = {
    ...common,
    tokenizer,
    ...(outputRows !== undefined && outputRows > tokenizer.vocabSize ? { outputSize: outputRows } : {}),
    version: () => version,
    sample: (reqs) => samples.submit(reqs),
    score,
    async train(rows: TrainRow[], opt): Promise<TrainStats> {
      const tr = needTrainer("train");
      const st = await tr.step(rows, { ...o.trainDefaults, ...opt });
      version = st.version;
      if (dialectName !== "worker") {
        const saved = await tr.save(join(o.training!.adapterDir, `step-${st.version}`), "lora");
        await publish(saved.path);
        published.push(saved.path);
        // Adapters of a long run add up (tens of MB each); delete the ones this run wrote and no longer serves.
        while (published.length > Math.max(1, o.training!.keepAdapters ?? 2)) await rm(published.shift()!, { recursive: true, force: true });
      }
      const self = st.metrics.self_scored_tokens ? { selfScored: { nll: st.metrics.self_scored_nll!, tokens: st.metrics.self_scored_tokens } } : {};
      return { loss: st.loss, gradNorm: st.gradNorm, tokens: st.tokens, ...self };
    },
    async saveState(dir: string): Promise<void> {
      const saved = await needTrainer("save its state").save(dir);
      version = saved.version;
    },
    async loadState(dir: string): Promise<void> {
      const loaded = await needTrainer("load a state").load(dir);
      version = loaded.version;
      if (dialectName !== "worker" && existsSync(join(dir, "adapter_config.json"))) await publish(dir);
    },
    close,
  };
  // A vLLM/SGLang student without `training` can still sample and score (evaluation); train() says what is missing.
  return student;
}

function readToken(spec: RemoteSpec, env: Record<string, string | undefined>): string | undefined {
  const name = spec.kind === "worker" ? spec.tokenEnv : spec.apiKeyEnv;
  if (!name) return undefined;
  const v = env[name];
  if (!v) {
    throw new HttpBackendError(`backend ${spec.url}: environment variable ${name} (named by ${spec.kind === "worker" ? "tokenEnv" : "apiKeyEnv"}) is not set`,
      spec.url, "-", "config", false, `Export ${name}=<the server's key> before \`tcod run\`, or remove ${spec.kind === "worker" ? "tokenEnv" : "apiKeyEnv"} from the backend spec.`);
  }
  return v;
}

/** Which of a worker's models a name addresses (worker.py resolve_model_name). */
function workerRole(probe: ProbeReport, model: string, client: OpenAIClient): "student" | "teacher" {
  const info = probe.info ?? {};
  if (model === "student" || model === info.model) return "student";
  if (model === "teacher" || (info.teacher !== null && model === info.teacher)) {
    if (!info.teacher) throw client.fail("/info", "config", false, `model '${model}' asks for the worker's teacher, but it holds none`, "Start the worker with --teacher PATH.");
    return "teacher";
  }
  throw client.fail("/info", "config", false, `the worker serves student '${String(info.model)}'${info.teacher ? ` and teacher '${String(info.teacher)}'` : ""}, not '${model}'`,
    "Set the model's path to the worker's --model (or --served-name), or to its --teacher.");
}

function numberOr(v: unknown): number | undefined { return typeof v === "number" ? v : undefined; }
function numbersOr(v: unknown): number[] | undefined { return Array.isArray(v) && v.every((x) => typeof x === "number") ? (v as number[]) : undefined; }
