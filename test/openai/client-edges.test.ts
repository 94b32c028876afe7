/**
 * The OpenAI-compatible client against misbehaving peers it did not cover before: redirects (a 302
 * made fetch re-send the POST as a body-less GET elsewhere and accept that answer; a redirect loop
 * cost 21 requests an attempt and read as "unreachable — is the server running?"), `Retry-After` on
 * 429/503 (ignored: the retries were spent within milliseconds), and a body that breaks off after
 * the headers (reported as an unreachable server). The AgentGym client and the tokenizer's blocking
 * calls refuse redirects too.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAIClient, retryAfterMs } from "../../runtime/backends/openai/client.js";
import { HttpBackendError } from "../../runtime/backends/openai/errors.js";
import { SyncPoster } from "../../runtime/backends/openai/sync-http.js";
import { AgentGymHttp } from "../../runtime/envs/agentgym/http.js";
import { EnvError } from "../../runtime/envs/env.js";
import { startFake, type FakeServer } from "./fake-server.js";

let fake: FakeServer | undefined;
afterEach(async () => { await fake?.close(); fake = undefined; });

const client = (url: string, o: Partial<ConstructorParameters<typeof OpenAIClient>[0]> = {}) =>
  new OpenAIClient({ url, label: "vllm", concurrency: 2, timeoutMs: 2000, retries: 2, baseDelayMs: 1, maxDelayMs: 5000, random: () => 0.5, ...o });

async function failure(p: Promise<unknown>): Promise<HttpBackendError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(HttpBackendError);
  return e as HttpBackendError;
}

describe("redirects are refused, not followed", () => {
  it("a 302 to another route: one request, an error naming the Location; no GET is sent", async () => {
    fake = await startFake((q, res) => {
      if (q.method === "POST") { res.writeHead(302, { location: "/elsewhere" }); res.end(); return; }
      res.writeHead(200, { "content-type": "application/json" }); res.end('{"choices":[]}');
    });
    const e = await failure(client(fake.url).postJson("/v1/completions", { prompt: [1] }, (j) => j));
    expect(fake.seen.map((s) => `${s.method} ${s.path}`)).toEqual(["POST /v1/completions"]);
    expect(e.kind).toBe("http");
    expect(e.status).toBe(302);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("a redirect to /elsewhere, which tcod does not follow");
    expect(e.hint).toContain("`url`");
  });

  it("a redirect loop: one request, not 21 per attempt read as an unreachable server", async () => {
    fake = await startFake((_q, res) => { res.writeHead(307, { location: "/v1/completions" }); res.end(); });
    const e = await failure(client(fake.url).postJson("/v1/completions", {}, (j) => j));
    expect(fake.seen).toHaveLength(1);
    expect(e.kind).toBe("http");
    expect(e.message).not.toContain("unreachable");
  });

  it("the tokenizer's blocking call sees the redirect's status and Location", async () => {
    // The server runs in a worker thread: the blocking call stalls this thread's event loop.
    const w = new Worker(`
      const { createServer } = require("node:http");
      const { parentPort } = require("node:worker_threads");
      let n = 0;
      const s = createServer((req, res) => { n++; if (req.url === "/_seen") { res.end(String(n - 1)); return; } res.writeHead(301, { location: "http://elsewhere.invalid/tokenize" }); res.end(); });
      s.listen(0, "127.0.0.1", () => parentPort.postMessage(s.address().port));`, { eval: true });
    const port = await new Promise<number>((r) => w.once("message", r));
    const poster = new SyncPoster({ "content-type": "application/json" }, 2000);
    try {
      const a = poster.post(`http://127.0.0.1:${port}/tokenize`, { prompt: "x" });
      expect(a).toMatchObject({ status: 301, location: "http://elsewhere.invalid/tokenize" });
      expect(await (await fetch(`http://127.0.0.1:${port}/_seen`)).text()).toBe("1");
    } finally { await poster.close(); await w.terminate(); }
  });

  it("an AgentGym server's redirect is a non-retryable EnvError naming it; the POST is not re-sent as a GET", async () => {
    const seen: string[] = [];
    const server: Server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.method === "POST") { res.writeHead(303, { location: "/create-get" }); res.end(); return; }
      res.writeHead(200, { "content-type": "application/json" }); res.end("7");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const http = new AgentGymHttp({ kind: "webshop", server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, timeoutMs: 2000, startHint: "start it" });
      const e = await http.post("/create", {}).then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(EnvError);
      expect((e as EnvError).retryable).toBe(false);
      expect((e as EnvError).message).toContain("HTTP 303, a redirect to \"/create-get\"");
      expect(seen).toEqual(["POST /create"]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe("Retry-After", () => {
  it("a 429 with Retry-After: 1 is retried no sooner than a second later", async () => {
    const at: number[] = [];
    fake = await startFake((_q, res, n) => {
      at.push(Date.now());
      if (n === 1) { res.writeHead(429, { "retry-after": "1" }); res.end("slow down"); return; }
      res.writeHead(200, { "content-type": "application/json" }); res.end("{}");
    });
    await client(fake.url).postJson("/v1/completions", {}, (j) => j);
    expect(at).toHaveLength(2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950);
  });

  it("a 503 with an HTTP date is waited out; without the header the backoff alone applies", async () => {
    const at: number[] = [];
    fake = await startFake((_q, res, n) => {
      at.push(Date.now());
      if (n === 1) { res.writeHead(503, { "retry-after": new Date(Date.now() + 2000).toUTCString() }); res.end("<html>busy</html>"); return; }
      if (n === 2) { res.writeHead(503); res.end("<html>busy</html>"); return; }
      res.writeHead(200, { "content-type": "application/json" }); res.end("{}");
    });
    await client(fake.url).postJson("/v1/completions", {}, (j) => j);
    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(900); // HTTP dates have whole seconds
    expect(at[2]! - at[1]!).toBeLessThan(500);
  });

  it("a Retry-After past the backoff ceiling waits the ceiling, not an hour", async () => {
    fake = await startFake((_q, res) => { res.writeHead(429, { "retry-after": "3600" }); res.end("later"); });
    const t0 = Date.now();
    const e = await failure(client(fake.url, { retries: 1, maxDelayMs: 200 }).postJson("/v1/completions", {}, (j) => j));
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(e.status).toBe(429);
    expect(e.retryAfterMs).toBe(3_600_000);
    expect(fake.seen).toHaveLength(2);
  });

  it("reads delay-seconds and HTTP dates; ignores what it cannot read", () => {
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(retryAfterMs("120", now)).toBe(120_000);
    expect(retryAfterMs("Wed, 21 Oct 2015 07:28:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Wed, 21 Oct 2015 07:27:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs("-5", now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});

describe("a body that breaks off", () => {
  it("after the headers is reported as such (retryable), not as an unreachable server", async () => {
    fake = await startFake((_q, res) => { res.writeHead(200, { "content-length": "1000" }); res.write('{"choices":[{"tex'); setTimeout(() => res.destroy(), 10); });
    const e = await failure(client(fake.url, { retries: 1 }).postJson("/v1/completions", {}, (j) => j));
    expect(e.retryable).toBe(true);
    expect(e.message).toContain("the answer broke off mid-body");
    expect(e.hint).toContain("closed the connection before its answer was complete");
    expect(e.hint).not.toContain("Is the");
  });
});
