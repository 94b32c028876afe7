import { afterEach, describe, expect, it } from "vitest";
import { BackendError } from "../../runtime/backends/backend.js";
import { backoffDelay, OpenAIClient } from "../../runtime/backends/openai/client.js";
import { HttpBackendError } from "../../runtime/backends/openai/errors.js";
import { parseVllmSample } from "../../runtime/backends/openai/dialects/vllm.js";
import { deadPort, json, startFake, type FakeServer } from "./fake-server.js";

let fake: FakeServer | undefined;
afterEach(async () => { await fake?.close(); fake = undefined; });

const fast = { label: "vllm", concurrency: 4, timeoutMs: 300, retries: 2, baseDelayMs: 5, maxDelayMs: 20 };
const req = { prompt: [1, 2], maxTokens: 4, temperature: 1, seed: 0 };
const good = { choices: [{ index: 0, finish_reason: "length", token_ids: [5, 6], logprobs: { token_logprobs: [-0.5, -0.25], tokens: ["token_id:5", "token_id:6"] } }] };

async function failure(p: Promise<unknown>): Promise<HttpBackendError> {
  try { await p; } catch (e) { expect(e).toBeInstanceOf(BackendError); expect(e).toBeInstanceOf(HttpBackendError); return e as HttpBackendError; }
  throw new Error("expected a failure");
}

describe("OpenAIClient against a scripted server", () => {
  it("retries a 500 and then succeeds", async () => {
    fake = await startFake((_s, res, n) => (n < 3 ? json(res, 500, "boom: CUDA out of memory") : json(res, 200, good)));
    const c = new OpenAIClient({ ...fast, url: fake.url });
    const out = await c.postJson("/v1/completions", {}, (j) => parseVllmSample(j, req));
    expect(out.tokens).toEqual([5, 6]);
    expect(fake.seen).toHaveLength(3);
  });

  it("gives up on a persistent 500 with the server, endpoint, status and body excerpt", async () => {
    fake = await startFake((_s, res) => json(res, 500, { detail: "worker crashed: CUDA out of memory" }));
    const c = new OpenAIClient({ ...fast, url: fake.url });
    const e = await failure(c.postJson("/v1/completions", {}, (j) => j));
    expect(fake.seen).toHaveLength(3); // 1 + 2 retries
    expect(e.kind).toBe("http");
    expect(e.status).toBe(500);
    expect(e.retryable).toBe(true);
    expect(e.server).toBe(fake.url);
    expect(e.endpoint).toBe("/v1/completions");
    expect(e.message).toContain(`vllm server ${fake.url} /v1/completions: HTTP 500`);
    expect(e.message).toContain("CUDA out of memory");
    expect(e.hint).toMatch(/log/);
  });

  it("does not retry a 4xx and surfaces vLLM's error message", async () => {
    fake = await startFake((_s, res) => json(res, 400, { object: "error", message: "maximum context length is 4096 tokens", type: "BadRequestError", code: 400 }));
    const c = new OpenAIClient({ ...fast, url: fake.url });
    const e = await failure(c.postJson("/v1/completions", {}, (j) => j));
    expect(fake.seen).toHaveLength(1);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("HTTP 400");
    expect(e.message).toContain("maximum context length is 4096 tokens");
  });

  it("names the missing route on a 404 and asks about the dialect", async () => {
    fake = await startFake((_s, res) => json(res, 404, { detail: "Not Found" }));
    const e = await failure(new OpenAIClient({ ...fast, url: fake.url }).postJson("/generate", {}, (j) => j));
    expect(e.hint).toMatch(/dialect/);
    expect(e.message).toContain("/generate");
  });

  it("times out a server that never answers, retries, and does not hang", async () => {
    fake = await startFake(() => { /* never respond */ });
    const c = new OpenAIClient({ ...fast, url: fake.url, timeoutMs: 100, retries: 1 });
    const e = await failure(c.postJson("/v1/completions", {}, (j) => j));
    expect(e.kind).toBe("timeout");
    expect(e.retryable).toBe(true);
    expect(e.message).toContain("no complete answer within 100 ms (attempt 2)");
    expect(e.hint).toMatch(/timeoutMs/);
    expect(fake.seen).toHaveLength(2);
  });

  it("times out a body that stalls after the headers", async () => {
    fake = await startFake((_s, res) => { res.writeHead(200, { "content-type": "application/json" }); res.write('{"choices": ['); });
    const c = new OpenAIClient({ ...fast, url: fake.url, timeoutMs: 100, retries: 0 });
    const e = await failure(c.postJson("/v1/completions", {}, (j) => j));
    expect(e.kind).toBe("timeout");
  });

  it("reports an unreachable server with what to do", async () => {
    const port = await deadPort();
    const c = new OpenAIClient({ ...fast, url: `http://127.0.0.1:${port}`, retries: 1 });
    const e = await failure(c.request("GET", "/health"));
    expect(e.kind).toBe("unreachable");
    expect(e.retryable).toBe(true);
    expect(e.attempts).toBe(2);
    expect(e.message).toContain("ECONNREFUSED");
    expect(e.hint).toMatch(/running at/);
  });

  it("retries a connection reset mid-answer", async () => {
    fake = await startFake((_s, res, n) => { if (n === 1) res.socket?.destroy(); else json(res, 200, good); });
    const out = await new OpenAIClient({ ...fast, url: fake.url }).postJson("/v1/completions", {}, (j) => parseVllmSample(j, req));
    expect(out.logprobs).toEqual([-0.5, -0.25]);
    expect(fake.seen).toHaveLength(2);
  });

  it("reports a non-JSON body as malformed without retrying", async () => {
    fake = await startFake((_s, res) => { res.writeHead(200); res.end("<html>proxy error</html>"); });
    const e = await failure(new OpenAIClient({ ...fast, url: fake.url }).postJson("/v1/completions", {}, (j) => j));
    expect(e.kind).toBe("malformed");
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("the body is an HTML page, not JSON: <html>proxy error</html>");
    expect(e.hint).toMatch(/Another server answers at this URL/);
    expect(fake.seen).toHaveLength(1);
  });

  it("reports a JSON body of the wrong shape by naming the field", async () => {
    fake = await startFake((_s, res) => json(res, 200, { choices: [{ finish_reason: "stop", token_ids: [5], logprobs: { token_logprobs: ["x"] } }] }));
    const e = await failure(new OpenAIClient({ ...fast, url: fake.url }).postJson("/v1/completions", {}, (j) => parseVllmSample(j, req)));
    expect(e.kind).toBe("malformed");
    expect(e.message).toContain('choices[0].logprobs.token_logprobs[0]: expected a log-probability (a number ≤ 0), got string "x"');
  });

  it("treats HTTP 200 with an error body as a failure", async () => {
    fake = await startFake((_s, res, n) => json(res, 200, n === 1 ? { error: "model not loaded" } : { success: false, error_message: "adapter not found", loaded_adapters: {} }));
    const c = new OpenAIClient({ ...fast, url: fake.url });
    const e1 = await failure(c.postJson("/v1/completions", {}, (j) => j));
    expect(e1.kind).toBe("server-error");
    expect(e1.message).toContain("model not loaded");
    const e2 = await failure(c.postJson("/load_lora_adapter", {}, (j) => j));
    expect(e2.message).toContain("adapter not found");
    expect(fake.seen).toHaveLength(2);
  });

  it("sends the bearer token and JSON body", async () => {
    fake = await startFake((_s, res) => json(res, 200, { ok: true }));
    await new OpenAIClient({ ...fast, url: `${fake.url}/v1/`, token: "s3cret" }).postJson("/v1/completions", { a: 1 }, (j) => j);
    expect(fake.seen[0]!.headers.authorization).toBe("Bearer s3cret");
    expect(fake.seen[0]!.path).toBe("/v1/completions"); // a trailing /v1 in the url is not doubled
    expect(fake.seen[0]!.body).toEqual({ a: 1 });
  });

  it("keeps at most `concurrency` requests in flight", async () => {
    fake = await startFake((_s, res) => { setTimeout(() => json(res, 200, { ok: true }), 20); });
    const c = new OpenAIClient({ ...fast, url: fake.url, concurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, () => c.postJson("/x", {}, (j) => j)));
    expect(fake.seen).toHaveLength(12);
    expect(fake.maxInFlight).toBe(3);
  });

  it("close() aborts requests in flight at once", async () => {
    fake = await startFake(() => { /* never respond */ });
    const c = new OpenAIClient({ ...fast, url: fake.url, timeoutMs: 60_000 });
    const p = failure(c.request("GET", "/health"));
    await new Promise((r) => setTimeout(r, 30));
    c.close();
    const e = await p;
    expect(e.message).toContain("closed");
    expect(e.retryable).toBe(false);
  });

  it("rejects a url that is not http(s)", () => {
    expect(() => new OpenAIClient({ ...fast, url: "localhost:8000" })).toThrow(/not an http\(s\) URL/);
  });
});

describe("backoff", () => {
  it("doubles the ceiling per attempt, caps it, and jitters below it", () => {
    expect(backoffDelay(0, 100, 1000, () => 0.999)).toBeCloseTo(99.9);
    expect(backoffDelay(3, 100, 1000, () => 0.5)).toBe(400);
    expect(backoffDelay(10, 100, 1000, () => 0.5)).toBe(500);
    expect(backoffDelay(2, 100, 1000, () => 0)).toBe(0);
  });
});
