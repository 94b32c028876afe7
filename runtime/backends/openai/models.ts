/**
 * `tcod run` on served models: the worker/worker, worker/openai, openai/openai and openai/worker
 * pairings (bin/compose.ts registers `createRemoteModels` for each). For each run it
 *   1. starts the tcod workers that `worker(url, start: true)` specs ask for (one process per URL;
 *      a teacher at the student's URL is loaded beside the student with `--teacher`), writing
 *      RUN_DIR/vocab.txt for models built from a config (`config:…`, `*.json`) on a closed-vocabulary
 *      env and passing it as `--vocab`; extra worker flags come from $TCOD_WORKER_ARGS
 *      (e.g. "--device cuda --lora-rank 16"); the workers stop when the run closes its models, on
 *      Ctrl-C after the checkpoint (they run in their own process group, so the terminal's SIGINT
 *      does not kill them mid-step), and, through the `onProcessEnd` hook the composition root
 *      passes in (bin/process-guard.ts), when the process exits or is ended by SIGTERM/SIGHUP;
 *   2. creates the student and teacher clients and prints each server's probe line (stderr);
 *   3. refuses teacher/student tokenizers that differ (assertSameTokenizer);
 *   4. a vLLM/SGLang student trains on a tcod worker named by $TCOD_TRAINER_URL, its adapters written
 *      under RUN_DIR/adapters (which the inference server must be able to read) and hot-loaded;
 *   5. caps every answer body its clients read at $TCOD_MAX_BODY_MB MiB (default 256; client.ts);
 *   6. records how long the run waits on the servers in RUN_DIR/backend-wait.jsonl (one line per
 *      optimiser step; see wait-meter.ts), from which the runtime's own overhead is computed.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ModelSpec } from "../../../plan/schema.js";
import { BackendError, type ScoreRequest, type StudentBackend, type TeacherBackend, type Tokenizer } from "../backend.js";
import type { Models, ModelsSetup } from "../registry.js";
import { assertSameTokenizer, createOpenAIBackend, OpenAIClient, WorkerTrainer, type OpenAIStudent, type OpenAITeacher, type RemoteSpec } from "./index.js";
import { startWorkerForSpec, type WorkerProcess } from "./worker-process.js";
import { WaitMeter } from "./wait-meter.js";
import { Coalescer } from "./coalescer.js";
import { writeWorkerVocabulary } from "./worker-vocab.js";
import { WordTokenizerMirror } from "./word-tokenizer-mirror.js";
import { MAX_BODY_ENV, OPENAI_MAX_BODY_BYTES } from "./client.js";
import { capBytesFromMiB } from "../../http-body.js";

/** What the factory reads from the process environment (injectable for tests). */
export interface RemoteModelsEnv {
  /** Extra flags for workers the run starts, split on whitespace ($TCOD_WORKER_ARGS). */
  workerArgs?: string;
  /** A tcod worker that trains a vLLM/SGLang student ($TCOD_TRAINER_URL). */
  trainerUrl?: string;
  /** The largest answer body read from a server, in MiB ($TCOD_MAX_BODY_MB; default OPENAI_MAX_BODY_BYTES). */
  maxBodyMb?: string;
  /** Print the probe lines here (default stderr). */
  log?: (line: string) => void;
  /**
   * Registers a synchronous clean-up to run when the process exits or is ended by a signal; returns
   * its unregistration. Given by the composition root; without it nothing is registered.
   */
  onProcessEnd?: (cleanup: () => void) => () => void;
}

/** A model path the worker builds from a config (random init, word-level tokenizer), not a checkpoint. */
export function isConfigModel(path: string): boolean {
  return path.startsWith("config:") || path.endsWith(".json");
}

/** Worker processes to start: one per `start: true` URL, with the student and the teacher beside it. */
export function workerLaunches(student: ModelSpec, teacher: ModelSpec): { spec: Extract<RemoteSpec, { kind: "worker" }>; model: string; teacher?: string }[] {
  const out: { spec: Extract<RemoteSpec, { kind: "worker" }>; model: string; teacher?: string }[] = [];
  const s = student.backend, t = teacher.backend;
  if (s.kind === "worker" && s.start) {
    const beside = t.kind === "worker" && t.url === s.url && teacher.path !== student.path ? teacher.path : undefined;
    out.push({ spec: s, model: student.path, ...(beside ? { teacher: beside } : {}) });
  }
  if (t.kind === "worker" && t.start && !(s.kind === "worker" && s.url === t.url)) out.push({ spec: t, model: teacher.path });
  if (t.kind === "worker" && s.kind === "worker" && t.url === s.url && t.start !== s.start) {
    throw new BackendError(`student and teacher name the same worker ${s.url}, but only one of them says start: true`, s.url, false,
      "Give both models the same worker(url, start: …) so the run either starts one process holding both or uses the one you started.");
  }
  return out;
}

export async function createRemoteModels(setup: ModelsSetup, env: RemoteModelsEnv = {}): Promise<Models> {
  const { student: sm, teacher: tm } = setup;
  if (sm.backend.kind === "embedded" || tm.backend.kind === "embedded") throw new Error("unreachable: embedded pairings are registered elsewhere");
  const log = env.log ?? ((l: string) => process.stderr.write(l + "\n"));
  const maxBodyBytes = maxBodyFrom(env.maxBodyMb);
  const runDir = setup.runDir ?? mkdtempSync(join(tmpdir(), "tcod-run-"));
  mkdirSync(runDir, { recursive: true });

  const workers: WorkerProcess[] = [];
  const stopWorkers = async () => { await Promise.allSettled(workers.splice(0).map((w) => w.stop())); };
  // A second Ctrl-C exits at once, and a signal ends the process without exit handlers: workers in
  // their own process group would outlive either, so they are killed then.
  const killOnExit = () => { for (const w of workers) if (w.process.exitCode === null) w.process.kill("SIGKILL"); };
  const unhook = env.onProcessEnd?.(killOnExit) ?? (() => {});
  const release = async () => { unhook(); await stopWorkers(); };

  let student: OpenAIStudent | undefined, teacher: OpenAITeacher | undefined;
  try {
    const extra = (env.workerArgs ?? "").split(/\s+/).filter(Boolean);
    /** The vocabulary file of a student the run builds from a config: its tokenizer can be mirrored locally. */
    let studentVocab: string | undefined;
    /** The bearer token of each worker this run started (its tokenEnv's, or a fresh one per run). */
    const tokens = new Map<string, string>();
    for (const l of workerLaunches(sm, tm)) {
      const args = [...extra];
      if (!args.includes("--vocab") && [l.model, l.teacher].some((p) => p !== undefined && isConfigModel(p))) {
        if (!setup.vocabulary) {
          throw new BackendError(`the worker for ${l.spec.url} builds '${l.model}' from a config and needs a vocabulary, but this env declares none`, l.spec.url, false,
            "Pass one with TCOD_WORKER_ARGS=\"--vocab words.txt\", or serve a model directory with its own tokenizer.");
        }
        args.push("--vocab", writeWorkerVocabulary(join(runDir, "vocab.txt"), setup.vocabulary, setup.agent));
      }
      const vocabAt = args.indexOf("--vocab");
      if (l.model === sm.path && isConfigModel(sm.path) && vocabAt >= 0) studentVocab = args[vocabAt + 1];
      // A checkpoint of a model built from a config carries its word list: mirrored the same way.
      if (l.model === sm.path && studentVocab === undefined) studentVocab = savedWordList(sm.path, join(runDir, "student-vocab.txt"));
      log(`starting tcod worker for ${l.spec.url}: --model ${l.model}${l.teacher ? ` --teacher ${l.teacher}` : ""}${args.length ? ` ${args.join(" ")}` : ""}`);
      const w = await startWorkerForSpec(l.spec, { student: l.model, ...(l.teacher ? { teacher: l.teacher } : {}), extraArgs: args, detached: true, roots: [runDir] });
      workers.push(w);
      tokens.set(l.spec.url, w.token);
    }

    const meter = new WaitMeter(join(runDir, "backend-wait.jsonl"));
    const st = withToken(sm.backend, tokens), tt = withToken(tm.backend, tokens);
    student = await createOpenAIBackend(st.spec, { role: "student", model: sm.path, training: trainingFor(sm.backend, runDir, env, maxBodyBytes), maxBodyBytes, ...st.env });
    log(student.probeLine);
    // A teacher in the student's worker process addresses it by its path (the worker's --teacher).
    // Its top-k ids are checked against the rows a top-k target spreads over (teacher-score.ts).
    const studentRows = student.outputSize ?? (student.tokenizer.vocabSize > 0 ? student.tokenizer.vocabSize : undefined);
    teacher = await createOpenAIBackend(tt.spec, { role: "teacher", model: tm.path, maxBodyBytes, ...(studentRows !== undefined ? { studentVocabSize: studentRows } : {}), ...tt.env });
    if (teacher.server !== student.server || teacher.probeLine !== student.probeLine) log(teacher.probeLine);
    assertSameTokenizer({ tokenizer: student.tokenizer, server: student.server }, { tokenizer: teacher.tokenizer, server: teacher.server });
    const tokenizer = meteredTokenizer(studentVocab ? mirrored(student, studentVocab, log) : student.tokenizer, meter);
    return { student: meteredStudent(student, tokenizer, meter, release), teacher: meteredTeacher(teacher, meter, release), tokenizer };
  } catch (e) {
    await Promise.allSettled([student?.close(), teacher?.close()]);
    await release();
    throw e;
  }
}

/** A spec whose client sends the token of the worker this run started at its URL (none started: unchanged). */
function withToken(spec: RemoteSpec, tokens: Map<string, string>): { spec: RemoteSpec; env?: { env: Record<string, string | undefined> } } {
  const token = tokens.get(spec.url);
  if (token === undefined || spec.kind !== "worker") return { spec };
  return { spec: { ...spec, tokenEnv: RUN_TOKEN_ENV }, env: { env: { [RUN_TOKEN_ENV]: token } } };
}
const RUN_TOKEN_ENV = "TCOD_RUN_WORKER_TOKEN";

/**
 * The word list a tcod worker saves beside a checkpoint of a model it built from a config
 * (worker/tcod_worker/loading.py WORD_TOKENIZER_FILE), written to `out` as a vocabulary file; undefined
 * for any other model (its own tokenizer stays remote) or a case-preserving word list.
 */
function savedWordList(modelDir: string, out: string): string | undefined {
  const file = join(modelDir, "tcod_word_tokenizer.json");
  if (!existsSync(file)) return undefined;
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { words?: unknown; lowercase?: unknown };
    if (!Array.isArray(saved.words) || !saved.words.every((w) => typeof w === "string") || saved.lowercase !== true) return undefined;
    writeFileSync(out, saved.words.join("\n") + "\n");
    return out;
  } catch {
    return undefined; // unreadable: the remote tokenizer serves (the worker reports a damaged file itself)
  }
}

/**
 * The worker's word-level tokenizer computed here instead of one blocking round trip per call, for
 * what agrees with the server (see word-tokenizer-mirror.ts); the rest stays remote.
 */
function mirrored(student: OpenAIStudent, vocabFile: string, log: (l: string) => void): Tokenizer {
  const mirror = new WordTokenizerMirror(readFileSync(vocabFile, "utf8").split("\n"), student.tokenizer);
  const r = mirror.verify();
  const yn = (b: boolean) => (b ? "yes" : "no");
  log(`tokenizer: local word-level mirror of ${student.server} (encode ${yn(r.encode)}, decode ${yn(r.decode)}, chat ${yn(r.chat)})`
    + (r.differences.length ? `; remote where it differs: ${r.differences.slice(0, 3).join("; ")}` : ""));
  return mirror;
}

function trainingFor(spec: RemoteSpec, runDir: string, env: RemoteModelsEnv, maxBodyBytes: number | undefined): Parameters<typeof createOpenAIBackend>[1]["training"] {
  if (spec.kind === "worker" || spec.dialect === "worker") return undefined;
  if (!env.trainerUrl) {
    throw new BackendError(`the student at ${spec.url} (${spec.dialect}) samples but cannot train`, spec.url, false,
      `Start a tcod worker on the same model (python -m tcod_worker --model … --lora-rank 16) and set TCOD_TRAINER_URL=<its url>; adapters go to ${join(runDir, "adapters")}, which the ${spec.dialect} server must be able to read.`);
  }
  const trainer = new WorkerTrainer(new OpenAIClient({ url: env.trainerUrl, label: "trainer", concurrency: 1, timeoutMs: Math.max(spec.timeoutMs, 1_800_000), maxBodyBytes }));
  return { trainer, adapterDir: resolve(runDir, "adapters") };
}

/** $TCOD_MAX_BODY_MB in bytes (unset: the client's default); a value that is not a size stops the run before any server is started. */
function maxBodyFrom(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const cap = capBytesFromMiB(raw);
  if (typeof cap === "number") return cap;
  throw new BackendError(`${MAX_BODY_ENV} ${cap.problem}`, MAX_BODY_ENV, false,
    `Set it to the largest answer, in MiB, tcod may read from an inference server (default ${OPENAI_MAX_BODY_BYTES / 1048576}), or unset it.`);
}

const completionTokens = (reqs: ScoreRequest[]) => reqs.reduce((n, r) => n + r.completion.length, 0);

/** The remote tokenizer with its blocking calls timed (what it returns is unchanged). */
function meteredTokenizer(t: Tokenizer, m: WaitMeter): Tokenizer {
  return {
    get vocabSize() { return t.vocabSize; },
    get stopTokens() { return t.stopTokens; },
    encode: (text) => m.timeSync("tokenize", () => t.encode(text)),
    decode: (ids) => m.timeSync("tokenize", () => t.decode(ids)),
    renderSystem: (text) => m.timeSync("tokenize", () => t.renderSystem(text)),
    renderUser: (text) => m.timeSync("tokenize", () => t.renderUser(text)),
    assistantPrefix: () => m.timeSync("tokenize", () => t.assistantPrefix()),
    assistantSuffix: () => m.timeSync("tokenize", () => t.assistantSuffix()),
    fingerprint: () => t.fingerprint(),
  };
}

/** A worker serves one call at a time: coalesce requests that arrive while one is in flight (coalescer.ts). */
function coalesced<Req, Res>(dialect: string, f: (reqs: Req[]) => Promise<Res[]>): (reqs: Req[]) => Promise<Res[]> {
  if (dialect !== "worker") return f;
  const c = new Coalescer(f);
  return (reqs) => c.submit(reqs);
}

function meteredStudent(s: OpenAIStudent, tokenizer: Tokenizer, m: WaitMeter, release: () => Promise<void>): StudentBackend {
  const sample = coalesced(s.dialect, s.sample);
  const score = coalesced(s.dialect, s.score);
  return {
    tokenizer,
    // The capabilities the runtime reads off the backend pass through the wrapper unchanged: without
    // scoresSequences, demonstrations are scored one request per turn (episode-sequence.ts).
    ...(s.scoresSequences ? { scoresSequences: true } : {}),
    lockstepSampling: s.dialect === "worker",
    // Every served student trains through a tcod worker (trainer.ts), which takes exact-KL targets
    // and rows scored by the update itself (old_logprobs null).
    exactKlTargets: true,
    trainsSelfScored: true,
    ...(s.outputSize !== undefined ? { outputSize: s.outputSize } : {}),
    ...(s.context ? { context: s.context } : {}),
    version: () => s.version(),
    sample: (reqs) => m.time("sample", () => sample(reqs), (r) => r.reduce((n, x) => n + x.tokens.length, 0)),
    score: (reqs) => m.time("score", () => score(reqs), () => completionTokens(reqs)),
    async train(rows, opt) {
      const st = await m.time("train", () => s.train(rows, opt), (r) => r.tokens);
      m.mark(s.version());
      return st;
    },
    saveState: (dir) => s.saveState(dir),
    loadState: (dir) => s.loadState(dir),
    async close() { try { await s.close(); } finally { await release(); } },
  };
}

function meteredTeacher(t: OpenAITeacher, m: WaitMeter, release: () => Promise<void>): TeacherBackend {
  const score = coalesced(t.dialect, t.score);
  return {
    tokenizer: t.tokenizer,
    // Without scoresSequences the teacher scores every turn's prompt + response, Σ_t |prompt_t| tokens
    // (quadratic in the turn count), instead of the episode's one sequence (episode-sequence.ts).
    ...(t.scoresSequences ? { scoresSequences: true } : {}),
    ...(t.context ? { context: t.context } : {}),
    score: (reqs) => m.time("teacher", () => score(reqs), () => completionTokens(reqs)),
    async close() { try { await t.close(); } finally { await release(); } },
  };
}
