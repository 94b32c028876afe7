/**
 * One HTTP client for OpenAI-compatible inference servers (vLLM, SGLang, the tcod worker).
 *
 * - bounded concurrency (p-limit): at most `concurrency` requests in flight per client;
 * - a per-attempt timeout (AbortSignal.timeout) that covers headers *and* body, so nothing hangs;
 * - retries with exponential backoff and full jitter for connection errors, timeouts, 5xx, 408, 429
 *   and answers whose generation the server aborted (vLLM's finish_reason "abort", a request preempted
 *   and dropped under load; SGLang's unserved {type: "abort"}) — never for other 4xx, error bodies or malformed bodies (those recur on
 *   retry); a 429 or 503's
 *   `Retry-After` (seconds or an HTTP date) is waited out, up to the backoff ceiling;
 * - redirects are not followed: a 3xx is an error naming where it points (fetch would re-send a POST
 *   after a 301/302/303 as a GET without its body and read the answer to another request);
 * - every answer body read under a byte cap (`maxBodyBytes`, default OPENAI_MAX_BODY_BYTES, raised with
 *   $TCOD_MAX_BODY_MB): counted as it arrives and abandoned past the cap, so a runaway server costs an
 *   error naming the cap, not the process's memory or V8's string limit read as "unreachable";
 * - an optional bearer token;
 * - every failure an `HttpBackendError` naming server, endpoint, what happened and what to do.
 */
import { setMaxListeners } from "node:events";
import pLimit from "p-limit";
import { BodyTooLarge, MAX_BODY_CAP_BYTES, mib, readBodyCapped } from "../../http-body.js";
import { AbortedGeneration, excerpt, HttpBackendError, MalformedResponse, UnsupportedRequest } from "./errors.js";

/**
 * The default cap on one answer body. The largest legitimate answers are scoring batches with top-k
 * logprobs: vLLM's prompt_logprobs spend about 80 bytes per alternative ({"id": {"logprob", "rank",
 * "decoded_token"}}), so 16 sequences × 8192 tokens × 21 alternatives ≈ 220 MB; the worker's /score
 * (32 sequences × 4096 tokens × top-20 at ~40 bytes) ≈ 105 MB. 256 MiB holds those; the hard ceiling
 * is V8's longest string (MAX_BODY_CAP_BYTES, about 512 MiB), past which no body can be read as text.
 */
export const OPENAI_MAX_BODY_BYTES = 256 * 1024 * 1024;
/** The environment variable that sets the cap, in MiB. */
export const MAX_BODY_ENV = "TCOD_MAX_BODY_MB";

export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:8000 (no trailing /v1). */
  url: string;
  /** Dialect name for messages ("vllm", "sglang", "worker"). */
  label: string;
  /** Bearer token sent as `Authorization: Bearer …`, where the server wants one. */
  token?: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** Per-attempt timeout (headers and body), ms. */
  timeoutMs: number;
  /** Extra attempts after the first for transient failures (default 3). */
  retries?: number;
  /** First backoff ceiling, ms (default 250); doubles each attempt. */
  baseDelayMs?: number;
  /** Backoff ceiling, ms (default 8000). */
  maxDelayMs?: number;
  /** Uniform [0,1) source for jitter; injectable for deterministic tests. */
  random?: () => number;
  /** The largest answer body read, bytes (default OPENAI_MAX_BODY_BYTES; at most MAX_BODY_CAP_BYTES). */
  maxBodyBytes?: number;
}

export interface RequestOptions {
  /** Override the client's per-attempt timeout (e.g. a long optimiser step). */
  timeoutMs?: number;
  /** Override the retry count (e.g. 0 for a probe). */
  retries?: number;
  /** Statuses that are answers, not failures (the probe reads 404 as "absent"). */
  acceptStatus?: number[];
}

export interface RawResponse {
  status: number;
  text: string;
}

/** Statuses worth retrying: server faults, request timeout, rate limiting. */
function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** Full-jitter exponential backoff (AWS architecture blog): uniform in [0, min(max, base·2^attempt)). */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return random() * Math.min(maxMs, baseMs * 2 ** attempt);
}

export class OpenAIClient {
  readonly url: string;
  readonly label: string;
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly closed = new AbortController();
  private readonly retries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly random: () => number;
  /** The largest answer body read, in bytes (the tokenizer's blocking calls use it too). */
  readonly maxBodyBytes: number;

  constructor(private readonly opts: ClientOptions) {
    if (!/^https?:\/\//.test(opts.url)) {
      throw new HttpBackendError(`${opts.label} backend: url "${opts.url}" is not an http(s) URL`, opts.url, "-", "unsupported", false,
        "Write the server's base URL, e.g. `http://127.0.0.1:8000` (without /v1).");
    }
    this.url = opts.url.replace(/\/+$/, "").replace(/\/v1$/, "");
    this.label = opts.label;
    this.limit = pLimit(Math.max(1, opts.concurrency));
    this.retries = opts.retries ?? 3;
    this.baseDelayMs = opts.baseDelayMs ?? 250;
    this.maxDelayMs = opts.maxDelayMs ?? 8000;
    this.random = opts.random ?? Math.random;
    this.maxBodyBytes = opts.maxBodyBytes ?? OPENAI_MAX_BODY_BYTES;
    if (!Number.isInteger(this.maxBodyBytes) || this.maxBodyBytes < 1 || this.maxBodyBytes > MAX_BODY_CAP_BYTES) {
      throw new HttpBackendError(`${opts.label} backend: the answer size cap ${opts.maxBodyBytes} bytes is not a whole number from 1 to ${MAX_BODY_CAP_BYTES}`, opts.url, "-", "config", false,
        `Set ${MAX_BODY_ENV} to a size in MiB up to ${Math.floor(MAX_BODY_CAP_BYTES / 1048576)} (the longest text JavaScript can hold).`);
    }
    setMaxListeners(0, this.closed.signal); // one listener per request in flight; not a leak
  }

  /** The bearer token this client sends, for the blocking tokenizer calls that bypass fetch. */
  get bearer(): string | undefined {
    return this.opts.token;
  }

  /** Requests waiting for a slot plus those in flight. */
  get pending(): number {
    return this.limit.activeCount + this.limit.pendingCount;
  }

  /**
   * POST a JSON body and parse the JSON answer with a pure parser (which may throw MalformedResponse).
   * The answer is parsed inside the retry loop: one that reports an aborted generation is retried.
   */
  postJson<T>(path: string, body: unknown, parse: (json: unknown) => T, ro: RequestOptions = {}): Promise<T> {
    return this.limit(() => this.withRetries("POST", path, body, ro, (raw, attempt) => this.parseJson(path, raw, parse, attempt)));
  }

  /** GET a JSON answer and parse it. */
  getJson<T>(path: string, parse: (json: unknown) => T, ro: RequestOptions = {}): Promise<T> {
    return this.limit(() => this.withRetries("GET", path, undefined, ro, (raw, attempt) => this.parseJson(path, raw, parse, attempt)));
  }

  /**
   * Turn a raw body into T, mapping every parse failure and error body to an HttpBackendError; an
   * aborted generation is the one retryable failure among them (kind "aborted").
   */
  parseJson<T>(path: string, raw: RawResponse, parse: (json: unknown) => T, attempt = 1): T {
    let json: unknown;
    try {
      json = JSON.parse(raw.text);
    } catch {
      const why = notJson(raw.text);
      throw this.fail(path, "malformed", false, `malformed response: ${why.what}`, why.hint ?? this.dialectHint(), raw.status);
    }
    const reported = errorInBody(json);
    if (reported !== undefined) {
      throw this.fail(path, "server-error", false, `the server answered HTTP ${raw.status} with an error: ${reported}`,
        "The server rejected the request; its message says why (model name, parameters, adapter path…).", raw.status);
    }
    try {
      return parse(json);
    } catch (e) {
      if (e instanceof AbortedGeneration) throw this.fail(path, "aborted", true, `${e.message} (attempt ${attempt})`, e.hint, raw.status, attempt);
      if (e instanceof MalformedResponse) throw this.fail(path, "malformed", false, e.message, e.hint ?? this.dialectHint(), raw.status);
      if (e instanceof UnsupportedRequest) throw this.fail(path, "unsupported", false, e.message, e.hint, raw.status);
      throw e;
    }
  }

  /**
   * One HTTP exchange with retries, inside the concurrency bound. Resolves with any 2xx (or an
   * accepted status); rejects with an HttpBackendError otherwise.
   */
  request(method: "GET" | "POST", path: string, body?: unknown, ro: RequestOptions = {}): Promise<RawResponse> {
    return this.limit(() => this.withRetries(method, path, body, ro, (raw) => raw));
  }

  /** Abort everything in flight; later requests fail at once. */
  close(): void {
    this.limit.clearQueue();
    this.closed.abort(new Error("client closed"));
  }

  /**
   * Attempts until `read` takes an answer; a transient failure — of the exchange, or one `read` throws
   * as retryable (an aborted generation) — is retried up to `retries` times, one budget for both.
   */
  private async withRetries<T>(method: string, path: string, body: unknown, ro: RequestOptions, read: (raw: RawResponse, attempt: number) => T): Promise<T> {
    const retries = ro.retries ?? this.retries;
    const timeoutMs = ro.timeoutMs ?? this.opts.timeoutMs;
    let last: HttpBackendError | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) {
        const backoff = backoffDelay(attempt - 1, this.baseDelayMs, this.maxDelayMs, this.random);
        // The server's own Retry-After, where it gave one, bounded by the backoff ceiling (a long one
        // would read as a hang; the engine's episode retry waits on top of this).
        await sleep(Math.max(backoff, Math.min(last?.retryAfterMs ?? 0, this.maxDelayMs)), this.closed.signal);
      }
      const outcome = await this.once(method, path, body, timeoutMs, ro.acceptStatus ?? [], attempt + 1);
      let failure: HttpBackendError;
      if (outcome instanceof HttpBackendError) failure = outcome;
      else {
        try {
          return read(outcome, attempt + 1);
        } catch (e) {
          if (!(e instanceof HttpBackendError) || !e.retryable) throw e;
          failure = e;
        }
      }
      last = failure;
      if (!failure.retryable || this.closed.signal.aborted) break;
    }
    // Exhausted transient failures stay retryable for the engine (it may retry the episode later).
    throw last!;
  }

  /** One attempt; returns the failure instead of throwing, so the retry loop stays flat. */
  private async once(method: string, path: string, body: unknown, timeoutMs: number, accept: number[], attempt: number): Promise<RawResponse | HttpBackendError> {
    if (this.closed.signal.aborted) return this.fail(path, "unreachable", false, "the client was closed", "The run is shutting down.");
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    // One controller per attempt, aborted by its timer or by close(); cheaper than AbortSignal.any +
    // AbortSignal.timeout per request (measured in bench/openai-client.bench.ts).
    const ac = new AbortController();
    let headersIn = false;
    let status: number | undefined;
    const timer = setTimeout(() => ac.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError")), timeoutMs);
    const onClose = (): void => ac.abort(this.closed.signal.reason);
    this.closed.signal.addEventListener("abort", onClose, { once: true });
    try {
      const res = await fetch(this.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: ac.signal, redirect: "manual" });
      headersIn = true;
      status = res.status;
      // Under the signal too (a stalled body cannot hang us) and under the cap.
      const text = await readBodyCapped(res, this.maxBodyBytes, () => ac.abort(new DOMException("answer over the size cap", "AbortError")));
      if (res.ok || accept.includes(res.status)) return { status: res.status, text };
      if (res.status >= 300 && res.status < 400) {
        const to = res.headers.get("location");
        return this.fail(path, "http", false, `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}: a redirect${to ? ` to ${excerpt(to, 200)}` : " without a Location"}, which tcod does not follow`,
          "A redirect would re-send the request elsewhere (a POST as a GET without its body, after 301/302/303). Write the server's own address in the backend spec's `url` (scheme, host, port; no /v1).", res.status, attempt);
      }
      const failure = this.httpFailure(path, res.status, res.statusText, text, attempt);
      const wait = retryAfterMs(res.headers.get("retry-after"), Date.now());
      if (failure.retryable && wait !== undefined) failure.retryAfterMs = wait;
      return failure;
    } catch (e) {
      if (e instanceof BodyTooLarge) return this.bodyTooLarge(path, e, status, attempt);
      if (this.closed.signal.aborted) return this.fail(path, "unreachable", false, "the client was closed", "The run is shutting down.");
      if (isTimeout(e)) {
        return this.fail(path, "timeout", true, `no complete answer within ${timeoutMs} ms (attempt ${attempt})`,
          "Raise `timeoutMs` in the backend spec, lower `concurrency`, or check the server's load and log.", undefined, attempt);
      }
      const code = networkCode(e);
      if (headersIn) {
        return this.fail(path, "unreachable", true, `the answer broke off mid-body (${code}) (attempt ${attempt})`,
          `The ${this.label} server at ${this.url} closed the connection before its answer was complete: see its log (a crash, an out-of-memory kill) or a proxy's limits.`, undefined, attempt);
      }
      return this.fail(path, "unreachable", true, `unreachable (${code}) (attempt ${attempt})`,
        `Is the ${this.label} server running at ${this.url}? Start it (\`python -m tcod_worker --port …\`, \`vllm serve …\`, ` +
        "`python -m sglang.launch_server …`) or fix `url` in the backend spec.", undefined, attempt);
    } finally {
      clearTimeout(timer);
      this.closed.signal.removeEventListener("abort", onClose);
    }
  }

  /**
   * An answer over the size cap: not retried (the same request gets the same answer; the engine stops
   * the run with this message rather than retry episodes that cannot be read).
   */
  bodyTooLarge(path: string, e: BodyTooLarge, status: number | undefined, attempt = 1): HttpBackendError {
    const what = e.declared !== undefined
      ? `the answer's Content-Length declares ${mib(e.declared)}, more than the ${mib(e.cap)} cap on an answer; it was not read`
      : `the answer passed the ${mib(e.cap)} cap on an answer; the rest was not read`;
    return this.fail(path, "malformed", false, `${status !== undefined ? `HTTP ${status}: ` : ""}${what}`,
      `If answers this large are expected (top-k logprobs for many long sequences), ` +
      `raise it with ${MAX_BODY_ENV}=<MiB> (at most ${Math.floor(MAX_BODY_CAP_BYTES / 1048576)}) or ask for fewer (smaller top-k or score batches); ` +
      `otherwise the server at ${this.url} is misbehaving: see its log.`, status, attempt);
  }

  private httpFailure(path: string, status: number, statusText: string, text: string, attempt: number): HttpBackendError {
    const detail = messageInBody(text) ?? excerpt(text);
    const what = `HTTP ${status}${statusText ? ` ${statusText}` : ""}: ${detail}`;
    if (isRetryableStatus(status)) {
      return this.fail(path, "http", true, `${what} (attempt ${attempt})`,
        status === 429 ? "The server is rate-limiting; lower `concurrency` in the backend spec." : "The server failed internally; see its log.",
        status, attempt);
    }
    let hint: string;
    if (status === 401 || status === 403) hint = "Set the bearer token: the backend spec's `apiKeyEnv`/`tokenEnv` must name an environment variable holding the server's key.";
    else if (status === 404) hint = `The server has no ${path} (or no such model/adapter). Is \`dialect\` right (vllm | sglang | worker)? The startup probe line shows what it offers.`;
    else hint = hintInBody(text) ?? "The server rejected the request; check the model name, sampling parameters and token ids against its limits.";
    return this.fail(path, "http", false, what, hint, status, attempt);
  }

  private dialectHint(): string {
    return `The body does not have the documented ${this.label} shape. Is \`dialect: ${this.label}\` right for this server, and is it a supported version (vLLM ≥ 0.10.2 for return_token_ids)?`;
  }

  fail(path: string, kind: HttpBackendError["kind"], retryable: boolean, what: string, hint: string | undefined, status?: number, attempts = 1): HttpBackendError {
    return new HttpBackendError(`${this.label} server ${this.url} ${path}: ${what}`, this.url, path, kind, retryable, hint, status, attempts);
  }
}

/** The error message a server put in a JSON body at HTTP 200, if any (vLLM, SGLang, FastAPI, AgentGym styles). */
export function errorInBody(json: unknown): string | undefined {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined;
  const o = json as Record<string, unknown>;
  if (o.object === "error") return String(o.message ?? JSON.stringify(o));
  // FastAPI's HTTPException body, `{"detail": …}` and nothing else (no answer of a dialect has that shape).
  if (o.detail !== undefined && Object.keys(o).length === 1) return typeof o.detail === "string" ? o.detail : JSON.stringify(o.detail);
  if (o.success === false) return String(o.error_message ?? o.message ?? "success: false");
  if (o.error !== undefined && o.error !== null && o.choices === undefined) {
    const err = o.error;
    if (typeof err === "string") return err;
    if (typeof err === "object" && err !== null && "message" in err) return String((err as { message: unknown }).message);
    return JSON.stringify(err);
  }
  return undefined;
}

/**
 * Why a body is not JSON, told apart where the cause is plain: nothing at all, an HTML page (a proxy,
 * a login page, another service at that port), a server-sent event stream (a gateway that streams
 * whatever is asked), or bare `NaN`/`Infinity` (Python's json.dumps default
 * for a non-finite float — a diverged model — which JSON cannot carry and tcod never reads as a number).
 */
export function notJson(text: string): { what: string; hint?: string } {
  if (text.trim() === "") {
    return { what: "the body is empty, not JSON",
      hint: "The server (or a proxy in front of it) answered without a body: see its log for a crash mid-answer, and check that `url` is the inference server's own address." };
  }
  if (/^\s*</.test(text)) {
    return { what: `the body is an HTML page, not JSON: ${excerpt(text, 200)}`,
      hint: "Another server answers at this URL (a proxy, a login page, a dashboard): write the inference server's own address in the backend spec's `url` (scheme, host, port; no /v1)." };
  }
  if (/^\s*(data|event|id|retry):/.test(text)) {
    return { what: `the body is a server-sent event stream (\`data:\` lines), not one JSON answer: ${excerpt(text, 200)}`,
      hint: "The answer came streamed, as for `stream: true`, which tcod never sends: a proxy or gateway in front of the server forces streaming. Point the backend spec's `url` at the inference server itself (scheme, host, port; no /v1)." };
  }
  if (/\bNaN\b|\bInfinity\b/.test(text) && parsesAsJson(text.replace(/-?\bInfinity\b|\bNaN\b/g, "null"))) {
    return { what: `the body is not JSON: it holds a bare NaN or Infinity, which JSON cannot carry: ${excerpt(text, 200)}`,
      hint: "The server computed a number that is not finite (a log-probability or loss of a diverged model, an fp16 overflow) and wrote it as Python's json.dumps does by default. Check the model's weights and dtype on the server; tcod never reads such a value as a number." };
  }
  return { what: `the body is not JSON: ${excerpt(text, 200)}` };
}

function parsesAsJson(text: string): boolean {
  try { JSON.parse(text); return true; } catch { return false; }
}

/** A readable message out of an error body (vLLM `message`, FastAPI `detail`, `{error:…}`). */
function messageInBody(text: string): string | undefined {
  try {
    const json = JSON.parse(text) as unknown;
    const inBody = errorInBody(json);
    if (inBody !== undefined) return excerpt(inBody);
    if (json && typeof json === "object" && "detail" in json) return excerpt(JSON.stringify((json as { detail: unknown }).detail));
    if (json && typeof json === "object" && "message" in json) return excerpt(String((json as { message: unknown }).message));
  } catch { /* not JSON: fall back to the raw excerpt */ }
  return undefined;
}

/** The tcod worker's hint beside its error message (`{"error": {"message", "hint"}}`): what to change for a refused request. */
function hintInBody(text: string): string | undefined {
  try {
    const hint = (JSON.parse(text) as { error?: { hint?: unknown } } | null)?.error?.hint;
    return typeof hint === "string" && hint ? excerpt(hint) : undefined;
  } catch { return undefined; }
}

/** A `Retry-After` header (delay-seconds or an HTTP date, RFC 9110 §10.2.3) in ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const h = header.trim();
  if (/^\d+$/.test(h)) return Number(h) * 1000;
  if (!/[A-Za-z]/.test(h)) return undefined; // "-5", "1.5": neither form
  const at = Date.parse(h);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === "TimeoutError" || (e.cause instanceof Error && e.cause.name === "TimeoutError"));
}

function networkCode(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause as { code?: string; message?: string } | undefined;
    return cause?.code ?? cause?.message ?? e.message;
  }
  return String(e);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void { clearTimeout(t); signal.removeEventListener("abort", done); resolve(); }
    signal.addEventListener("abort", done, { once: true });
  });
}
