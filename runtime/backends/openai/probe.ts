/**
 * Startup probe: which optional endpoints a server offers, printed by `tcod run` as one line
 * (docs/REFERENCES.md#server-probe "version-probe at startup").
 *
 * Route existence comes from `/openapi.json` where the server publishes it (vLLM and SGLang are
 * FastAPI apps), else from the worker's `/info`, else from harmless requests (tokenize a word, unload
 * an adapter that does not exist — FastAPI answers `{"detail":"Not Found"}` only for a missing route).
 * Cache resets are never called to find out: without a route list they stay "unknown".
 * Capability checks that need a real request (prompt logprobs) send one tiny request.
 */
import type { ModelContext } from "../backend.js";
import type { OpenAIClient } from "./client.js";
import type { DialectName } from "./dialects/dialect.js";
import { readPromptLogprobs } from "./dialects/vllm.js";
import { asArray, asObject } from "./dialects/shape.js";
import { HttpBackendError } from "./errors.js";
import { loraRoutes } from "./lora.js";
import { tokenizerWire } from "./tokenizer.js";

export type Has = "yes" | "no" | "unknown";

export interface ProbeReport {
  server: string;
  dialect: DialectName;
  health: boolean;
  /** Served model ids (`/v1/models`), where listed. */
  models: string[] | undefined;
  /** Those of them that are base models, not LoRA adapters (entries without a `parent`): the names of one model on vLLM. */
  baseModels: string[] | undefined;
  /** Whether `model` is among them (undefined when the list is unknown). */
  modelServed: boolean | undefined;
  tokenize: Has;
  detokenize: Has;
  loraLoad: Has;
  loraUnload: Has;
  prefixCacheReset: Has;
  /** Teacher scoring: vLLM `prompt_logprobs` / SGLang `logprob_start_len: 0` answered in the documented shape. */
  promptLogprobs: Has;
  /** The worker's `/info` body, where the server has one. */
  info: Record<string, unknown> | undefined;
  /**
   * The longest sequence (prompt + reply) the model reads, where the server says: the `max_model_len`
   * of its card at /v1/models (vLLM and SGLang write it there; the worker too, each model's own
   * config's max_position_embeddings), else the worker's /info `max_model_len` (its student's) or
   * `teacher_max_model_len` (its --teacher's). Checked against the run's prompts before step 1
   * (runtime/preflight-context.ts).
   */
  context: ModelContext | undefined;
}

/** Where a worker's model config gives no max_position_embeddings it reports 2^30: no limit known. */
const NO_LIMIT = 1 << 30;

/**
 * The model's context length from its /v1/models card or the worker's /info; undefined where neither
 * says. A worker serves a teacher beside its student (`--teacher`), each with its own positions: the
 * teacher's are its own card's, or /info `teacher_max_model_len` (never the student's `max_model_len`).
 */
export function contextOf(cards: Record<string, unknown>[] | undefined, info: Record<string, unknown> | undefined, dialect: DialectName, model: string): ModelContext | undefined {
  const teacher = dialect === "worker" && isWorkerTeacher(info, model);
  const card = cards?.find((c) => c.id === model) ?? cards?.find((c) => typeof c.id === "string" && c.id.endsWith(`/${model}`));
  const fromCard = card?.max_model_len, fromInfo = teacher ? info?.teacher_max_model_len : info?.max_model_len;
  const n = isLength(fromCard) ? fromCard : isLength(fromInfo) ? fromInfo : undefined;
  if (n === undefined || n >= NO_LIMIT) return undefined;
  const source = teacher ? "max_position_embeddings of the worker's teacher config (--teacher)"
    : dialect === "worker" ? "max_position_embeddings of the worker's model config"
    : dialect === "vllm" ? "vLLM's max_model_len at /v1/models (vllm serve --max-model-len)"
    : "SGLang's max_model_len at /v1/models (--context-length)";
  return { tokens: n, source };
}
const isLength = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0;

/** Whether `model` names the worker's teacher rather than its student (as runtime/backends/openai/index.ts workerRole decides). */
function isWorkerTeacher(info: Record<string, unknown> | undefined, model: string): boolean {
  if (!info || model === "student" || model === info.model) return false;
  return model === "teacher" || (typeof info.teacher === "string" && model === info.teacher);
}

const PROBE_TIMEOUT_MS = 10_000;

export async function probeServer(client: OpenAIClient, dialect: DialectName, model: string): Promise<ProbeReport> {
  const get = (path: string) => client.request("GET", path, undefined, { retries: 0, acceptStatus: [400, 401, 403, 404, 405, 422, 500, 501, 503], timeoutMs: PROBE_TIMEOUT_MS });
  const post = (path: string, body: unknown) => client.request("POST", path, body, { retries: 0, acceptStatus: [400, 401, 403, 404, 405, 422, 500, 501, 503], timeoutMs: PROBE_TIMEOUT_MS });
  const json = (text: string): unknown => { try { return JSON.parse(text); } catch { return undefined; } };

  // Health first, with the client's retries: an unreachable server ends the probe with its error.
  const health = await client.request("GET", "/health", undefined, { acceptStatus: [404, 503], timeoutMs: PROBE_TIMEOUT_MS });
  if (health.status === 401 || health.status === 403) {
    throw client.fail("/health", "http", false, `HTTP ${health.status}`, "Set the bearer token (apiKeyEnv/tokenEnv in the backend spec).", health.status);
  }

  const api = await get("/openapi.json");
  const apiPaths = api.status === 200 ? Object.keys(asObjectOr(json(api.text), "paths")) : undefined;
  const info = await get("/info");
  const infoBody = info.status === 200 ? (json(info.text) as Record<string, unknown> | undefined) : undefined;
  // The worker's /info lists its routes as {name: bool} ("tokenize", "v1_completions", …).
  const infoEndpoints = infoBody && infoBody.endpoints && typeof infoBody.endpoints === "object" && !Array.isArray(infoBody.endpoints)
    ? Object.entries(infoBody.endpoints as Record<string, unknown>).filter(([, v]) => v === true).map(([k]) => `/${k.replace(/^v1_/, "v1/")}`)
    : undefined;
  const listed = (path: string): Has => {
    if (apiPaths) return apiPaths.includes(path) ? "yes" : "no";
    if (infoEndpoints) return infoEndpoints.includes(path) ? "yes" : "no";
    return "unknown";
  };
  const missingRoute = (status: number, text: string) => status === 404 && /"detail"\s*:\s*"Not Found"/.test(text);

  let models: string[] | undefined, baseModels: string[] | undefined, cards: Record<string, unknown>[] | undefined;
  const m = await get("/v1/models");
  if (m.status === 200) {
    try {
      cards = asArray(asObject(json(m.text), "").data, "data").map((x) => asObject(x, "data[]"));
      models = cards.map((c) => String(c.id));
      baseModels = cards.filter((c) => c.parent === undefined || c.parent === null).map((c) => String(c.id));
    } catch { models = undefined; }
  }

  const wire = tokenizerWire(dialect, model);
  let tokenize = listed("/tokenize");
  let probeIds: number[] | undefined;
  if (tokenize !== "no") {
    const c = wire.encode("hello world, this is a probe");
    const r = await post(c.path, c.body);
    if (r.status === 200) {
      try { probeIds = wire.parseEncode(json(r.text)); tokenize = "yes"; } catch { tokenize = "no"; }
    } else tokenize = missingRoute(r.status, r.text) || r.status === 404 ? "no" : tokenize;
  }
  const detokenize = listed("/detokenize") !== "unknown" ? listed("/detokenize") : tokenize === "yes" ? await (async (): Promise<Has> => {
    const c = wire.decode(probeIds ?? [0]);
    const r = await post(c.path, c.body);
    return r.status === 200 ? "yes" : r.status === 404 ? "no" : "unknown";
  })() : "unknown";

  const routes = loraRoutes(dialect);
  let loraUnload = listed(routes.unload);
  if (loraUnload === "unknown" && dialect !== "worker") {
    const r = await post(routes.unload, { lora_name: "__tcod_probe_absent__" });
    loraUnload = missingRoute(r.status, r.text) ? "no" : "yes";
  }
  const loraLoad = listed(routes.load) !== "unknown" ? listed(routes.load) : loraUnload;
  const prefixCacheReset = listed(routes.resetCache);

  let promptLogprobs: Has = "unknown";
  if (probeIds && probeIds.length >= 2) {
    const seq = probeIds.slice(0, 4);
    const req = { prompt: seq.slice(0, 1), completion: seq.slice(1), temperature: 1 };
    const body = dialect === "sglang"
      ? { input_ids: [seq], sampling_params: { max_new_tokens: 1, temperature: 1 }, return_logprob: true, logprob_start_len: 0 }
      : { model, prompt: seq, max_tokens: 1, temperature: 1, prompt_logprobs: 0 };
    const r = await post(dialect === "sglang" ? "/generate" : "/v1/completions", body);
    if (r.status === 200) {
      try {
        const j = json(r.text);
        if (dialect === "sglang") {
          const first = asObject(asArray(j, "")[0], "[0]");
          asArray(asObject(first.meta_info, "[0].meta_info").input_token_logprobs, "input_token_logprobs");
        } else {
          readPromptLogprobs(asArray(asObject(j, "").choices, "choices").map((c) => asObject(c, "choices[]"))[0]?.prompt_logprobs, req, "choices[0].prompt_logprobs");
        }
        promptLogprobs = "yes";
      } catch { promptLogprobs = "no"; }
    } else promptLogprobs = "no";
  }

  return {
    server: client.url, dialect, health: health.status === 200, models, baseModels,
    modelServed: models ? models.includes(model) || models.some((id) => id.endsWith(`/${model}`)) : undefined,
    tokenize, detokenize, loraLoad, loraUnload, prefixCacheReset, promptLogprobs, info: infoBody,
    context: contextOf(cards, infoBody, dialect, model),
  };
}

function asObjectOr(v: unknown, key: string): Record<string, unknown> {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const inner = (v as Record<string, unknown>)[key];
    if (inner && typeof inner === "object" && !Array.isArray(inner)) return inner as Record<string, unknown>;
  }
  return {};
}

/** One line for `tcod run`, e.g. `vllm http://127.0.0.1:8000: healthy · model Qwen/Qwen3-8B served · tokenize yes · …`. */
export function formatProbe(r: ProbeReport, model: string): string {
  const parts = [
    r.health ? "healthy" : "health check failed",
    r.modelServed === undefined ? `model ${model} (not listed)` : r.modelServed ? `model ${model} served`
      : r.models?.length === 0 ? `model ${model} NOT served (no models listed)` : `model ${model} NOT served (has: ${(r.models ?? []).slice(0, 4).join(", ")})`,
    `tokenize ${r.tokenize}`,
    `detokenize ${r.detokenize}`,
    `lora load/unload ${r.loraLoad}/${r.loraUnload}`,
    `prefix-cache reset ${r.prefixCacheReset}`,
    `prompt logprobs ${r.promptLogprobs}`,
    `info ${r.info ? "yes" : "no"}`,
    ...(r.context ? [`context ${r.context.tokens} tokens`] : []),
  ];
  return `${r.dialect} ${r.server}: ${parts.join(" · ")}`;
}

/** Turn a probe into the errors that should stop a run before it starts. */
export function assertUsable(r: ProbeReport, model: string, role: "student" | "teacher", client: OpenAIClient): void {
  if (r.modelServed === false && r.models?.length === 0) {
    throw new HttpBackendError(`${r.dialect} server ${r.server} lists no models at /v1/models (its \`data\` is empty), so it cannot serve '${model}'`,
      r.server, "/v1/models", "config", false,
      "The server has not finished loading its model, or another service answers at this URL: wait until its /v1/models lists the model, or fix the backend's `url`.");
  }
  if (r.modelServed === false) {
    throw new HttpBackendError(`${r.dialect} server ${r.server} does not serve model '${model}' (it serves: ${(r.models ?? []).join(", ")})`,
      r.server, "/v1/models", "config", false, "Set the model's path in the curriculum to one of the served names, or start the server with that model.");
  }
  if (role === "teacher" && r.promptLogprobs === "no") {
    throw client.fail(r.dialect === "sglang" ? "/generate" : "/v1/completions", "unsupported", false,
      "the server did not return prompt logprobs in the documented shape, so it cannot score a student's tokens",
      r.dialect === "sglang" ? "Use an SGLang version whose /generate honours logprob_start_len: 0." : "Use a vLLM version with prompt_logprobs on /v1/completions (and --max-logprobs ≥ your topk).");
  }
}
