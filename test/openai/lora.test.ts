import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAIClient } from "../../runtime/backends/openai/client.js";
import { HttpBackendError } from "../../runtime/backends/openai/errors.js";
import { hotLoadLora } from "../../runtime/backends/openai/lora.js";
import { json, startFake, type FakeServer } from "./fake-server.js";
import { readFileSync } from "node:fs";

let fake: FakeServer | undefined;
afterEach(async () => { await fake?.close(); fake = undefined; });

const client = (url: string, label = "vllm") => new OpenAIClient({ url, label, concurrency: 2, timeoutMs: 1000, retries: 1, baseDelayMs: 1 });
const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));

function adapterDir(): string {
  const d = join(mkdtempSync(join(tmpdir(), "tcod-lora-")), "step-3");
  mkdirSync(d);
  writeFileSync(join(d, "adapter_config.json"), JSON.stringify({ r: 8 }));
  return d;
}
async function failure(p: Promise<unknown>): Promise<HttpBackendError> {
  try { await p; } catch (e) { expect(e).toBeInstanceOf(HttpBackendError); return e as HttpBackendError; }
  throw new Error("expected a failure");
}

describe("LoRA hot-load (docs/REFERENCES.md#vllm, #sglang)", () => {
  it("vLLM: unload → load under the same name → reset the prefix cache, with text bodies", async () => {
    fake = await startFake((s, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(s.path.includes("unload") ? `Success: LoRA adapter 'student' removed successfully.` : s.path.includes("load") ? "Success: LoRA adapter 'student' added successfully." : "");
    });
    const dir = adapterDir();
    const out = await hotLoadLora(client(fake.url), "vllm", { name: "student", path: dir, resetCache: "yes" });
    expect(out).toEqual({ unloaded: true, cacheReset: true });
    expect(fake.seen.map((s) => s.path)).toEqual(["/v1/unload_lora_adapter", "/v1/load_lora_adapter", "/reset_prefix_cache"]);
    expect(fake.seen[0]!.body).toEqual({ lora_name: "student" });
    expect(fake.seen[1]!.body).toEqual({ lora_name: "student", lora_path: dir });
  });

  it("vLLM: a first load tolerates 'adapter not found' on unload and skips a reset the server lacks", async () => {
    fake = await startFake((s, res) => {
      if (s.path === "/v1/unload_lora_adapter") json(res, 404, { object: "error", message: "The lora adapter 'student' cannot be found.", type: "NotFoundError", code: 404 });
      else if (s.path === "/reset_prefix_cache") json(res, 404, { detail: "Not Found" });
      else { res.writeHead(200); res.end("Success: LoRA adapter 'student' added successfully."); }
    });
    const out = await hotLoadLora(client(fake.url), "vllm", { name: "student", path: adapterDir(), resetCache: "unknown" });
    expect(out).toEqual({ unloaded: false, cacheReset: false });
    const again = await hotLoadLora(client(fake.url), "vllm", { name: "student", path: adapterDir(), resetCache: "no" });
    expect(again.cacheReset).toBe(false);
    expect(fake.seen.filter((s) => s.path === "/reset_prefix_cache")).toHaveLength(1);
  });

  it("SGLang: JSON answers; a load that reports success:false names the adapter path and the server's reason", async () => {
    fake = await startFake((s, res) => {
      if (s.path === "/load_lora_adapter") json(res, 200, fixture("sglang-lora-load-missing.json"));
      else json(res, 200, { success: true, error_message: "", loaded_adapters: {} });
    });
    const dir = adapterDir();
    const e = await failure(hotLoadLora(client(fake.url, "sglang"), "sglang", { name: "student", path: dir, resetCache: "yes" }));
    expect(e.kind).toBe("server-error");
    expect(e.message).toContain(`loading LoRA adapter 'student' from ${dir} failed`);
    expect(e.message).toContain("No such file or directory");
    expect(fake.seen.map((s) => s.path)).toEqual(["/unload_lora_adapter", "/load_lora_adapter"]);
  });

  it("SGLang: a successful load flushes the cache", async () => {
    fake = await startFake((s, res) => json(res, 200, s.path === "/load_lora_adapter" ? fixture("sglang-lora-load.json") : { success: true }));
    const out = await hotLoadLora(client(fake.url, "sglang"), "sglang", { name: "student", path: adapterDir(), resetCache: "yes" });
    expect(out.cacheReset).toBe(true);
    expect(fake.seen.map((s) => s.path)).toEqual(["/unload_lora_adapter", "/load_lora_adapter", "/flush_cache"]);
  });

  it("a missing local adapter directory fails before any request", async () => {
    fake = await startFake((_s, res) => json(res, 200, {}));
    const e = await failure(hotLoadLora(client(fake.url), "vllm", { name: "student", path: "/nonexistent/step-9", resetCache: "yes" }));
    expect(e.kind).toBe("config");
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("LoRA adapter directory /nonexistent/step-9 does not exist");
    expect(e.hint).toMatch(/PEFT adapter/);
    expect(fake.seen).toHaveLength(0);
  });

  it("a server without runtime LoRA routes says how to enable them", async () => {
    fake = await startFake((_s, res) => json(res, 404, { detail: "Not Found" }));
    const e = await failure(hotLoadLora(client(fake.url), "vllm", { name: "student", path: adapterDir(), resetCache: "yes" }));
    expect(e.kind).toBe("unsupported");
    expect(e.hint).toContain("VLLM_ALLOW_RUNTIME_LORA_UPDATING=True");
  });

  it("vLLM rejecting the load (400) is an error naming the path", async () => {
    fake = await startFake((s, res) => {
      if (s.path === "/v1/load_lora_adapter") json(res, 400, { object: "error", message: "LoRA rank 64 is greater than max_lora_rank 16.", type: "BadRequestError", code: 400 });
      else { res.writeHead(200); res.end("ok"); }
    });
    const e = await failure(hotLoadLora(client(fake.url), "vllm", { name: "student", path: adapterDir(), resetCache: "yes" }));
    expect(e.message).toContain("greater than max_lora_rank 16");
    expect(e.status).toBe(400);
  });
});
