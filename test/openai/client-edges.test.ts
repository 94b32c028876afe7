/**
 * The OpenAI-compatible client against misbehaving peers it did not cover before: redirects (a 302
 * made fetch re-send the POST as a body-less GET elsewhere and accept that answer; a redirect loop
 * cost 21 requests an attempt and read as "unreachable — is the server running?"), `Retry-After` on
 * 429/503 (ignored: the retries were spent within milliseconds), and a body that breaks off after
 * the headers (reported as an unreachable server). The AgentGym client and the tokenizer's blocking
 * calls refuse redirects too. Every answer body is read under a byte cap (it was read whole: a
 * runaway server could make the process hold gigabytes, and past V8's longest string the failure read
 * as "unreachable — is the server running?").
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
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BackendError } from "../../runtime/backends/backend.js";
import { createRemoteModels } from "../../runtime/backends/openai/models.js";
import { agentGymFromSpec } from "../../runtime/envs/agentgym/index.js";
import { capBytesFromMiB } from "../../runtime/http-body.js";

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
    const poster = new SyncPoster({ "content-type": "application/json" }, 2000, 1 << 20);
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

describe("answer bodies are read under a byte cap", () => {
  const CAP = 64 * 1024;
  /** Streams `total` bytes of spaces in 1 KiB chunks (chunked: no Content-Length), stopping when the client hangs up. */
  const stream = (total: number, sent: { bytes: number; closed: boolean }) => (_q: unknown, res: import("node:http").ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.on("close", () => { sent.closed = true; });
    const chunk = Buffer.alloc(1024, 0x20);
    const pump = () => {
      while (!sent.closed && sent.bytes < total && res.write(chunk)) sent.bytes += chunk.length;
      if (sent.bytes >= total && !sent.closed) res.end();
    };
    res.on("drain", pump);
    pump();
  };

  it("an answer streamed past the cap is a TC7004 naming the URL, the cap and TCOD_MAX_BODY_MB; the read stops there", async () => {
    const sent = { bytes: 0, closed: false };
    fake = await startFake(stream(256 * 1024 * 1024, sent));
    const e = await failure(client(fake.url, { maxBodyBytes: CAP }).postJson("/v1/completions", {}, (j) => j));
    expect(e.code).toBe("TC7004");
    expect(e.kind).toBe("malformed");
    expect(e.retryable).toBe(false); // the same request gets the same answer
    expect(e.status).toBe(200);
    expect(e.message).toContain(`vllm server ${fake.url} /v1/completions: HTTP 200: the answer passed the 65536 bytes cap on an answer; the rest was not read`);
    expect(e.hint).toContain("TCOD_MAX_BODY_MB=<MiB>");
    expect(fake.seen).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(sent.closed).toBe(true); // the connection was closed, not drained
    expect(sent.bytes).toBeLessThan(32 * 1024 * 1024);
  });

  it("a body of exactly the cap, sent in chunks, is read", async () => {
    const body = JSON.stringify({ choices: [{ text: "x".repeat(CAP - 40) }] });
    const padded = body + " ".repeat(CAP - Buffer.byteLength(body));
    expect(Buffer.byteLength(padded)).toBe(CAP);
    fake = await startFake((_q, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      let at = 0;
      const next = () => { if (at >= padded.length) { res.end(); return; } res.write(padded.slice(at, at += 4096)); setImmediate(next); };
      next();
    });
    const got = await client(fake.url, { maxBodyBytes: CAP }).postJson("/v1/completions", {}, (j) => j as { choices: { text: string }[] });
    expect(got.choices[0]!.text).toHaveLength(CAP - 40);
  });

  it("a declared Content-Length over the cap is refused before the body is read", async () => {
    const sent = { bytes: 0, closed: false };
    fake = await startFake((_q, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(2 * 1024 ** 3) });
      res.on("close", () => { sent.closed = true; });
      const chunk = Buffer.alloc(1 << 16, 0x20);
      const pump = () => { while (!sent.closed && sent.bytes < 2 * 1024 ** 3 && res.write(chunk)) sent.bytes += chunk.length; };
      res.on("drain", pump);
      pump();
    });
    const e = await failure(client(fake.url, { maxBodyBytes: CAP }).getJson("/v1/models", (j) => j));
    expect(e.message).toContain("the answer's Content-Length declares 2048 MiB, more than the 65536 bytes cap on an answer; it was not read");
    expect(e.retryable).toBe(false);
  });

  it("a cap that is not a size, or past what a string can hold, is refused when the client is made", () => {
    for (const maxBodyBytes of [0, 1.5, 2 ** 40]) {
      expect(() => client("http://127.0.0.1:1", { maxBodyBytes })).toThrow(/answer size cap .* is not a whole number/);
    }
  });

  it("TCOD_MAX_BODY_MB reaches the clients of tcod run; a value that is not a size stops the run first", async () => {
    fake = await startFake((_q, res) => { res.writeHead(200, { "content-type": "application/json" }); res.end(JSON.stringify({ status: "ok", pad: "x".repeat(4096) })); });
    const m = { path: "m", backend: { kind: "worker" as const, url: fake.url, start: false, concurrency: 1, timeoutMs: 2000 } };
    const setup = { student: m, teacher: m, agent: {} as never, seed: 1, runDir: mkdtempSync(join(tmpdir(), "tcod-cap-")) };
    const quiet = { log: () => {} };
    const e = await failure(createRemoteModels(setup, { ...quiet, maxBodyMb: "0.001" }));
    expect(e.message).toContain("/health: HTTP 200: the answer passed the 1048 bytes cap");
    for (const bad of ["lots", "0", "-3", "100000"]) {
      const b = await createRemoteModels(setup, { ...quiet, maxBodyMb: bad }).then(() => undefined, (x: unknown) => x);
      expect(b).toBeInstanceOf(BackendError);
      expect((b as BackendError).message).toMatch(/^TCOD_MAX_BODY_MB must be (a positive number of MiB|at most 511 MiB)/);
    }
  });

  it("reads a cap in MiB from text or a number", () => {
    expect(capBytesFromMiB("256")).toBe(256 * 1024 * 1024);
    expect(capBytesFromMiB(0.5)).toBe(512 * 1024);
    expect(capBytesFromMiB("1e3")).toEqual({ problem: expect.stringContaining("positive number of MiB") });
    expect(capBytesFromMiB(512)).toEqual({ problem: expect.stringContaining("at most 511 MiB") });
  });

  it("the tokenizer's blocking call stops reading at the cap and says so; under the cap it reads the text", async () => {
    const w = new Worker(`
      const { createServer } = require("node:http");
      const { parentPort } = require("node:worker_threads");
      const s = createServer((req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        if (req.url === "/small") { res.end(JSON.stringify({ tokens: [1, 2, 3] })); return; }
        let closed = false;
        res.on("close", () => { closed = true; });
        const chunk = Buffer.alloc(1024, 0x20);
        const pump = () => { while (!closed && res.write(chunk)); };
        res.on("drain", pump);
        pump();
      });
      s.listen(0, "127.0.0.1", () => parentPort.postMessage(s.address().port));`, { eval: true });
    const port = await new Promise<number>((r) => w.once("message", r));
    const poster = new SyncPoster({ "content-type": "application/json" }, 5000, CAP);
    try {
      expect(poster.post(`http://127.0.0.1:${port}/tokenize`, { prompt: "x" })).toEqual({ error: "too-large", status: 200, cap: CAP });
      expect(poster.post(`http://127.0.0.1:${port}/small`, { prompt: "x" })).toMatchObject({ status: 200, text: '{"tokens":[1,2,3]}' });
    } finally { await poster.close(); await w.terminate(); }
  });

  it("an AgentGym answer past the env's max_body_mb names the param; a max_body_mb that is not a size is refused", async () => {
    const sent = { bytes: 0, closed: false };
    fake = await startFake(stream(256 * 1024 * 1024, sent));
    const spec = (params: Record<string, unknown>) => ({ kind: "webshop", split: "test", maxTurns: 5, pool: 1, params, server: fake!.url });
    const env = agentGymFromSpec("webshop", spec({ max_body_mb: 0.0625 }));
    const e = await env.reset({ id: "1", split: "test" }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).message).toMatch(/\/create answered more than the 65536 bytes limit; the rest was not read \(raise the limit with the env's param max_body_mb/);
    expect(() => agentGymFromSpec("webshop", spec({ max_body_mb: "big" }))).toThrow(/param max_body_mb must be a positive number of MiB, got "big"/);
    expect(() => agentGymFromSpec("webshop", spec({ max_body_mb: 4096 }))).toThrow(/param max_body_mb must be at most 511 MiB/);
  });
});
