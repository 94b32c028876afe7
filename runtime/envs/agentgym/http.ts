/**
 * HTTP for AgentGym env servers (reference §1.1): every request has a timeout; errors that arrive as
 * HTTP 200 with an `error` key, non-2xx statuses, refused connections and timeouts all become
 * EnvErrors naming the server, the route and what to check. A body is read as a stream and cut off
 * at `maxBodyBytes` (the env's param max_body_mb; a declared Content-Length above it is refused before
 * reading): a runaway or hostile server costs a retryable EnvError, never the process's memory.
 * A body that is not UTF-8 is refused, not patched with U+FFFD. HTTP 429 and 503 are retryable; their
 * Retry-After is waited out (up to the request's timeout) before the error, so the engine's retry
 * comes when the server asked. Other 4xx answers and redirects are not retryable: the engine stops
 * the run on them with a checkpoint (runtime/nodes/retry.ts).
 */
import { retryAfterMs } from "../../backends/openai/client.js";
import { BodyTooLarge, mib, readBodyBytesCapped } from "../../http-body.js";
import { EnvError } from "../env.js";

/** The largest answer read from an env server (WebShop pages are tens of KB; ALFWorld's are smaller). */
export const AGENTGYM_MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface AgentGymHttpOptions {
  kind: string;
  server: string;
  timeoutMs: number;
  /** How to start the server, for connection errors. */
  startHint: string;
  /** Answers longer than this are refused (default AGENTGYM_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
}

/** A short, safe rendering of any JSON value for a message (deep nesting and huge values included). */
export function preview(v: unknown, max = 200): string {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > max ? `${s.slice(0, max)}…` : s;
  } catch {
    return Array.isArray(v) ? "(an array nested too deeply to show)" : "(a value nested too deeply to show)";
  }
}

/** An EnvError from the server's own `error` key (HTTP 200). */
export class ServerReportedError extends EnvError {
  constructor(message: string, env: string, readonly route: string, retryable: boolean) { super(message, env, retryable); }
}

/** The env param that sets a route's timeout (adapter.ts: /create and /reset take reset_timeout_s). */
function timeoutParam(route: string): string {
  return /^\/(create|reset)(\?|$)/.test(route) ? "reset_timeout_s" : "step_timeout_s";
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

export class AgentGymHttp {
  readonly base: string;
  constructor(readonly opts: AgentGymHttpOptions) {
    this.base = opts.server.replace(/\/+$/, "");
  }

  post<T>(route: string, body: unknown, timeoutMs = this.opts.timeoutMs): Promise<T> {
    return this.request<T>(route, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body ?? {}) }, timeoutMs);
  }

  get<T>(route: string, query: Record<string, string | number>, timeoutMs = this.opts.timeoutMs): Promise<T> {
    const q = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
    return this.request<T>(q ? `${route}?${q}` : route, { method: "GET" }, timeoutMs);
  }

  private async request<T>(route: string, init: RequestInit, timeoutMs: number): Promise<T> {
    const { kind } = this.opts;
    const url = `${this.base}${route}`;
    const stop = new AbortController();
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), stop.signal]);
    let res: Response;
    try {
      res = await fetch(url, { ...init, signal, redirect: "manual" }); // a POST redirected by 301/302/303 would arrive as a GET without its body
    } catch (e) {
      const err = e as Error & { cause?: unknown };
      if (err.name === "TimeoutError" || err.name === "AbortError") {
        throw new EnvError(`${kind} server ${this.base}: ${route} did not answer within ${timeoutMs / 1000} s (the env's param ${timeoutParam(route)})`, kind);
      }
      const cause = err.cause as { code?: string; message?: string } | undefined;
      const code = cause?.code ?? cause?.message ?? err.message;
      if (code === "UND_ERR_SOCKET" || code === "ECONNRESET") {
        // It took the connection, then dropped it: running, so "start it" would mislead.
        throw new EnvError(`${kind} server ${this.base}: ${route} closed the connection without answering (${code}); the server may have failed on this request: see its log`, kind);
      }
      throw new EnvError(`${kind} server ${this.base} unreachable on ${route} (${code}); ${this.opts.startHint}`, kind);
    }
    let text: string;
    try {
      text = await this.readCapped(res, route, stop);
    } catch (e) {
      if (e instanceof EnvError) throw e;
      const err = e as Error;
      if (err.name === "TimeoutError" || err.name === "AbortError") {
        throw new EnvError(`${kind} server ${this.base}: ${route} did not finish its answer within ${timeoutMs / 1000} s (the env's param ${timeoutParam(route)})`, kind);
      }
      throw new EnvError(`${kind} server ${this.base}: ${route} broke off mid-answer (${err.message})`, kind);
    }
    if (res.status >= 300 && res.status < 400) {
      const to = res.headers.get("location");
      throw new EnvError(`${kind} server ${this.base}: ${route} answered HTTP ${res.status}, a redirect${to ? ` to ${preview(to)}` : ""}, which tcod does not follow; give the server's own address`, kind, false);
    }
    if (!res.ok) {
      // AgentGym's WebShop client retries 503; every 5xx is worth an episode retry, and so is a 429
      // (rate limited: nothing was done). Retry-After, where it fits in the timeout, is waited out here.
      const limited = res.status === 429 || res.status === 503;
      const wait = limited ? retryAfterMs(res.headers.get("retry-after"), Date.now()) : undefined;
      let asked = "";
      if (wait !== undefined) {
        const fits = wait <= timeoutMs;
        if (fits) await new Promise<void>((r) => setTimeout(r, wait));
        asked = ` (it asked to retry after ${Math.ceil(wait / 1000)} s; ${fits ? "waited" : `more than the ${timeoutMs / 1000} s timeout, so not waited`})`;
      }
      throw new EnvError(`${kind} server ${this.base}: ${route} answered HTTP ${res.status}${asked}: ${text.slice(0, 300)}`, kind, res.status >= 500 || res.status === 429);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // Python's json.dumps (allow_nan=True, its default) writes a float nan/inf as bare NaN/Infinity.
      if (/(^|[\[:,]\s*)-?(NaN|Infinity)\s*([,\]}]|$)/.test(text)) {
        throw new EnvError(`${kind} server ${this.base}: ${route} answered NaN or Infinity, which JSON has no form for (Python's json.dumps writes them for a float nan or inf): ${JSON.stringify(text.slice(0, 200))}; a reward or score must be a finite number`, kind);
      }
      throw new EnvError(`${kind} server ${this.base}: ${route} answered non-JSON: ${JSON.stringify(text.slice(0, 200))}`, kind);
    }
    if (body !== null && typeof body === "object" && !Array.isArray(body) && "error" in body) {
      const raw = (body as { error: unknown }).error;
      const msg = typeof raw === "string" ? raw.slice(0, 1000) : preview(raw);
      // "has finished" (step after done) is a caller bug; anything else (a lost id after a server
      // restart, a simulator crash) is worth a fresh instance and an episode retry.
      throw new ServerReportedError(`${kind} server ${this.base}: ${route}: ${msg}`, kind, route, !/has finished/.test(msg));
    }
    return body as T;
  }

  /** The body as text, read chunk by chunk and abandoned (connection closed) past the size limit. */
  private async readCapped(res: Response, route: string, stop: AbortController): Promise<string> {
    const limit = this.opts.maxBodyBytes ?? AGENTGYM_MAX_BODY_BYTES;
    let bytes: Buffer;
    try {
      bytes = await readBodyBytesCapped(res, limit, () => stop.abort());
    } catch (e) {
      if (!(e instanceof BodyTooLarge)) throw e;
      const what = e.declared !== undefined
        ? `declared a ${mib(e.declared)} answer (Content-Length), more than the ${mib(limit)} limit; it was not read`
        : `answered more than the ${mib(limit)} limit; the rest was not read`;
      throw new EnvError(`${this.opts.kind} server ${this.base}: ${route} ${what} (raise the limit with the env's param max_body_mb, in MiB, if answers this large are expected)`, this.opts.kind);
    }
    if (!res.ok) return bytes.toString("utf8"); // only quoted in the status's message
    try {
      return UTF8.decode(bytes);
    } catch {
      // Decoding with replacement would hand the agent U+FFFD where the server's text was.
      throw new EnvError(`${this.opts.kind} server ${this.base}: ${route} answered bytes that are not UTF-8 text (${JSON.stringify(bytes.subarray(0, 200).toString("latin1"))}); the server must send UTF-8 JSON`, this.opts.kind);
    }
  }
}
