/**
 * LoRA hot-load between optimiser steps (docs/REFERENCES.md#vllm, #sglang):
 * unload the adapter under its name (older vLLM rejects a duplicate name; SkyRL and the SGLang doc
 * both unload then load), load the new directory under the same name, then reset the prefix cache
 * where the server has a route for it (cached prefixes were computed with the old weights).
 *
 *   vLLM:   POST /v1/unload_lora_adapter {lora_name} → POST /v1/load_lora_adapter {lora_name, lora_path}
 *           (text bodies) → POST /reset_prefix_cache (dev mode only)
 *   SGLang: POST /unload_lora_adapter {lora_name} → POST /load_lora_adapter {lora_name, lora_path}
 *           ({success, error_message, loaded_adapters}) → POST /flush_cache
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { errorInBody, type OpenAIClient } from "./client.js";
import type { DialectName } from "./dialects/dialect.js";
import { excerpt, HttpBackendError } from "./errors.js";

export interface LoraRoutes { load: string; unload: string; resetCache: string }

export function loraRoutes(dialect: DialectName): LoraRoutes {
  return dialect === "sglang"
    ? { load: "/load_lora_adapter", unload: "/unload_lora_adapter", resetCache: "/flush_cache" }
    : { load: "/v1/load_lora_adapter", unload: "/v1/unload_lora_adapter", resetCache: "/reset_prefix_cache" };
}

export interface HotLoadOptions {
  name: string;
  /** The PEFT adapter directory, as the *server* sees it. */
  path: string;
  /** Check `path/adapter_config.json` on this machine first (default: when the server is on loopback). */
  checkLocalPath?: boolean;
  /** Whether the server has a cache-reset route (from the probe); "unknown" tries and tolerates 404. */
  resetCache: "yes" | "no" | "unknown";
}

export interface HotLoadResult { unloaded: boolean; cacheReset: boolean }

/** FastAPI's answer for a route that does not exist (as opposed to "no such adapter"). */
function isMissingRoute(status: number, text: string): boolean {
  return status === 404 && /^\s*\{\s*"detail"\s*:\s*"Not Found"\s*\}\s*$/.test(text);
}

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "localhost" || host === "127.0.0.1" || host === "::1" || host === "[::1]";
}

export async function hotLoadLora(client: OpenAIClient, dialect: DialectName, o: HotLoadOptions): Promise<HotLoadResult> {
  const routes = loraRoutes(dialect);
  if (o.checkLocalPath ?? isLoopback(client.url)) {
    if (!existsSync(join(o.path, "adapter_config.json"))) {
      throw new HttpBackendError(
        `${client.label} server ${client.url} ${routes.load}: LoRA adapter directory ${o.path} ${existsSync(o.path) ? "has no adapter_config.json" : "does not exist"}`,
        client.url, routes.load, "config", false,
        "The trainer must save a PEFT adapter there (adapter_config.json + adapter_model.safetensors) before the hot-load; check the save path, and that the inference server can read it.");
    }
  }
  const missingRoute = (path: string): HttpBackendError => client.fail(path, "unsupported", false, "the server has no runtime LoRA loading route",
    dialect === "sglang"
      ? "Start SGLang with --enable-lora --max-lora-rank R --lora-target-modules all."
      : "Start vLLM with --enable-lora --max-lora-rank R and the environment variable VLLM_ALLOW_RUNTIME_LORA_UPDATING=True.");

  // 1. Unload; "no such adapter" (first load, or a restarted server) is fine.
  const un = await client.request("POST", routes.unload, { lora_name: o.name }, { acceptStatus: [400, 404] });
  if (isMissingRoute(un.status, un.text)) throw missingRoute(routes.unload);
  const unloaded = un.status < 300 && bodyError(un.text) === undefined;

  // 2. Load under the same name.
  const ld = await client.request("POST", routes.load, { lora_name: o.name, lora_path: o.path }, { acceptStatus: [400, 404, 422] });
  if (isMissingRoute(ld.status, ld.text)) throw missingRoute(routes.load);
  const err = ld.status >= 300 ? (bodyError(ld.text) ?? excerpt(ld.text)) : bodyError(ld.text);
  if (err !== undefined) {
    throw client.fail(routes.load, "server-error", false, `loading LoRA adapter '${o.name}' from ${o.path} failed: ${err}`,
      "Check that the directory exists on the server's machine and holds a PEFT adapter whose rank ≤ the server's --max-lora-rank and whose target modules the server allows.", ld.status);
  }

  // 3. Reset the prefix cache.
  if (o.resetCache === "no") return { unloaded, cacheReset: false };
  const rc = await client.request("POST", routes.resetCache, undefined, { acceptStatus: [404, 405] });
  return { unloaded, cacheReset: rc.status < 300 && bodyError(rc.text) === undefined };
}

/** An error carried in a JSON body (SGLang `{success:false}`, vLLM `{object:"error"}`); text bodies are vLLM's success messages. */
function bodyError(text: string): string | undefined {
  try { return errorInBody(JSON.parse(text)); } catch { return undefined; }
}
