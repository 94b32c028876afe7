import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { OpenAIClient } from "../../runtime/backends/openai/client.js";
import { HttpBackendError } from "../../runtime/backends/openai/errors.js";
import { assertSameTokenizer, fingerprintParts, tokenizerDifferences } from "../../runtime/backends/openai/fingerprint.js";
import { RemoteTokenizer, vllmTokenizerWire, sglangTokenizerWire } from "../../runtime/backends/openai/tokenizer.js";
import { deadPort, startFake } from "./fake-server.js";

const workers: Worker[] = [];
afterAll(async () => { await Promise.all(workers.map((w) => w.terminate())); });

async function tokenizerServer(data: { template?: string; shift?: number; noChat?: boolean }): Promise<string> {
  const w = new Worker(new URL("./fixtures/fake-vllm-server.mjs", import.meta.url), { workerData: data });
  workers.push(w);
  const port = await new Promise<number>((r) => w.once("message", r));
  return `http://127.0.0.1:${port}`;
}

function remote(url: string, o: Partial<Parameters<typeof RemoteTokenizer.create>[2]> = {}): RemoteTokenizer {
  const client = new OpenAIClient({ url, label: "vllm", concurrency: 2, timeoutMs: 2000 });
  return RemoteTokenizer.create(client, o.chatTemplate ? sglangTokenizerWire() : vllmTokenizerWire("m"), { timeoutMs: 2000, ...o });
}

describe("RemoteTokenizer (vLLM /tokenize, /detokenize; docs/REFERENCES.md#vllm)", () => {
  it("cuts chat segments out of the server's template renderings", async () => {
    const url = await tokenizerServer({ template: "chatml" });
    const t = remote(url);
    const [start, end] = [1, 2]; // <|im_start|>, <|im_end|>
    const enc = (s: string) => t.encode(s);
    expect(t.renderSystem("be brief")).toEqual([start, ...enc("system be brief"), end]);
    expect(t.renderUser("go to desk 1")).toEqual([start, ...enc("user go to desk 1"), end]);
    expect(t.assistantPrefix()).toEqual([start, ...enc("assistant")]);
    expect(t.assistantSuffix()).toEqual([end]);
    expect(t.stopTokens).toEqual([end]); // first id of the assistant suffix
    expect(t.decode(enc("open drawer 2"))).toBe("open drawer 2");
    // segments compose to exactly the server's rendering of the whole conversation
    const composed = [...t.renderSystem("be brief"), ...t.renderUser("look"), ...t.assistantPrefix(), ...enc("go"), ...t.assistantSuffix()];
    const client = new OpenAIClient({ url, label: "vllm", concurrency: 1, timeoutMs: 2000 });
    const whole = await client.postJson("/tokenize", { messages: [{ role: "system", content: "be brief" }, { role: "user", content: "look" }, { role: "assistant", content: "go" }] }, (j) => (j as { tokens: number[] }).tokens);
    expect(composed).toEqual(whole);
    expect(t.fingerprint()).toMatch(/^sha256:[0-9a-f]{32}$/);
    await t.close();
  });

  it("uses a text chat template where the server cannot render messages (SGLang)", async () => {
    const url = await tokenizerServer({ template: "chatml", noChat: true });
    try { remote(url); expect.unreachable(); } catch (e) {
      expect((e as HttpBackendError).message).toContain("did not render chat messages");
      expect((e as HttpBackendError).hint).toMatch(/chatTemplate/);
    }
    const t = remote(url, {
      chatTemplate: { system: "<|im_start|>system\n{content}<|im_end|>\n", user: "<|im_start|>user\n{content}<|im_end|>\n", assistantPrefix: "<|im_start|>assistant\n", assistantSuffix: "<|im_end|>\n" },
    });
    expect(t.renderUser("look")).toEqual([1, ...t.encode("user look"), 2]);
    expect(t.assistantSuffix()).toEqual([2]);
  });

  it("gives up on a tokenizer server that never answers (a blocking call cannot hang)", async () => {
    // A server on this thread cannot answer while the thread blocks: exactly a stalled server.
    const fake = await startFake(() => { /* never answers */ });
    const t0 = Date.now();
    try {
      RemoteTokenizer.create(new OpenAIClient({ url: fake.url, label: "vllm", concurrency: 1, timeoutMs: 200 }), vllmTokenizerWire("m"), { timeoutMs: 200 });
      expect.unreachable();
    } catch (e) {
      expect((e as HttpBackendError).kind).toBe("timeout");
      expect((e as HttpBackendError).message).toContain("/tokenize: tokenizer call got no answer");
      expect((e as HttpBackendError).message).toContain("(attempt 3)");
    } finally {
      await fake.close();
    }
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it("fails clearly when the tokenizer server is down", async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    try { remote(url); expect.unreachable(); } catch (e) {
      expect(e).toBeInstanceOf(HttpBackendError);
      expect((e as HttpBackendError).kind).toBe("unreachable");
      expect((e as HttpBackendError).message).toContain("/tokenize");
    }
  });
});

describe("tokenizer fingerprint check", () => {
  it("accepts two servers with the same tokenizer and template", async () => {
    const a = remote(await tokenizerServer({ template: "chatml" }));
    const b = remote(await tokenizerServer({ template: "chatml" }));
    expect(a.fingerprint()).toBe(b.fingerprint());
    expect(() => assertSameTokenizer({ tokenizer: a, server: "s" }, { tokenizer: b, server: "t" })).not.toThrow();
  });

  it("refuses a teacher with another chat template and explains what differs", async () => {
    const a = remote(await tokenizerServer({ template: "chatml" }));
    const b = remote(await tokenizerServer({ template: "bracket" }));
    expect(a.fingerprint()).not.toBe(b.fingerprint());
    try { assertSameTokenizer({ tokenizer: a, server: "http://s" }, { tokenizer: b, server: "http://t" }); expect.unreachable(); } catch (e) {
      const err = e as HttpBackendError;
      expect(err.kind).toBe("mismatch");
      expect(err.retryable).toBe(false);
      expect(err.message).toContain("teacher (http://t) and student (http://s) do not share a tokenizer");
      expect(err.message).toContain("chat template assistantPrefix");
      expect(err.hint).toMatch(/same tokenizer/);
    }
  });

  it("names differing probe encodings for a different vocabulary", async () => {
    const a = remote(await tokenizerServer({ template: "chatml" }));
    const b = remote(await tokenizerServer({ template: "chatml", shift: 7 }));
    const diffs = tokenizerDifferences(fingerprintParts(a), fingerprintParts(b));
    expect(diffs.some((d) => d.startsWith('encode("hello world"): student ['))).toBe(true);
    expect(tokenizerDifferences({ ...fingerprintParts(a), vocabSize: 10 }, { ...fingerprintParts(a), vocabSize: 12 })).toEqual(["vocabulary size: student 10, teacher 12"]);
  });
});
