/**
 * Errors of the OpenAI-compatible client. Every failure is a `BackendError` (the engine drops the
 * episode, counts it and, where `retryable`, retries later) that names the server, the endpoint,
 * what happened and what to do.
 */
import { BackendError } from "../backend.js";

/** What went wrong, so callers and tests can branch without parsing messages. */
export type FailureKind =
  | "unreachable" // connection refused / reset / DNS
  | "timeout" // no complete answer within the per-request timeout
  | "http" // a non-2xx status
  | "server-error" // HTTP 200 whose body reports an error ({"error":…}, {success:false})
  | "malformed" // HTTP 200 whose body is not the documented shape
  | "aborted" // HTTP 200 whose generation the server gave up on (vLLM's finish_reason "abort", SGLang's unserved {type: "abort"}): retried
  | "unsupported" // a request this server/dialect cannot answer as configured
  | "mismatch" // teacher and student disagree (tokenizer fingerprint)
  | "config"; // local configuration is wrong (a LoRA directory that does not exist, a model not served)

export class HttpBackendError extends BackendError {
  /** A 429/503's `Retry-After`, in ms: the client waits at least this long (up to its ceiling) before the next attempt. */
  retryAfterMs?: number;
  constructor(
    message: string,
    server: string,
    readonly endpoint: string,
    readonly kind: FailureKind,
    retryable: boolean,
    hint: string | undefined,
    readonly status?: number,
    readonly attempts = 1,
  ) {
    super(message, server, retryable, hint);
    this.name = "HttpBackendError";
  }
}

/**
 * A response body that does not have the documented shape. Thrown by the pure dialect parsers
 * (which do not know the server); the client rewraps it as an `HttpBackendError` of kind "malformed".
 */
export class MalformedResponse extends Error {
  /**
   * `field` is a JSON path such as `choices[0].prompt_logprobs[3]["17"].logprob`; `hint`, where the
   * parser knows better than "is the dialect right?" what to do (a truncated prompt, another model).
   */
  constructor(readonly field: string, readonly problem: string, readonly hint?: string) {
    super(`malformed response: ${field}: ${problem}`);
    this.name = "MalformedResponse";
  }
}

/**
 * An answer that reports its generation aborted (vLLM finishes a request it preempted and dropped
 * under load with finish_reason "abort"; SGLang one it dropped unserved with {type: "abort"} and no
 * client-error status): the same request may well succeed again, so the client
 * retries it within its bounded policy, as it does a 503, and reports the last one if every attempt aborts.
 */
export class AbortedGeneration extends MalformedResponse {
  constructor(field: string, problem: string, hint?: string) {
    super(field, problem, hint);
    this.name = "AbortedGeneration";
  }
}

/** A request the dialect refuses to build (e.g. T≠1 scoring against raw logprobs). */
export class UnsupportedRequest extends Error {
  constructor(message: string, readonly hint: string) {
    super(message);
    this.name = "UnsupportedRequest";
  }
}

/** A short, single-line excerpt of a response body for error messages. */
export function excerpt(body: string, max = 300): string {
  const flat = body.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}… (${flat.length} chars)`;
}

/** Render a value for "got …" in messages without dumping whole arrays. */
export function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === "object") return `an object with keys [${Object.keys(value as object).slice(0, 8).join(", ")}]`;
  if (typeof value === "number" && !Number.isFinite(value)) return `number ${value} (past what a double holds)`;
  return `${typeof value} ${excerpt(JSON.stringify(value), 60)}`;
}
