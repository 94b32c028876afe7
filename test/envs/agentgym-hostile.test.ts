/**
 * Hostile AgentGym servers: answers of the wrong shape (clickables null or not a list, a missing
 * field, deeply nested JSON, a nested `error`) and bodies far past the size limit (a declared 2 GB
 * Content-Length; 2 GB streamed without one). Each is a retryable EnvError naming the route —
 * never a crash, never the whole body in memory. The servers are started here, on 127.0.0.1.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { EnvSpec } from "../../plan/schema.js";
import { agentGymFromSpec } from "../../runtime/envs/agentgym/index.js";
import { AGENTGYM_MAX_BODY_BYTES } from "../../runtime/envs/agentgym/http.js";
import { EnvError } from "../../runtime/envs/env.js";

const spec = (kind: string, server: string): EnvSpec => ({ kind, split: "test", maxTurns: 30, pool: 1, params: {}, server });
const DEEP = 200_000;
const deepArray = () => "[".repeat(DEEP) + "]".repeat(DEEP);

type Route = (res: ServerResponse, body: Record<string, unknown>) => void;
const json = (value: string): Route => (res) => { res.writeHead(200, { "content-type": "application/json" }); res.end(value); };

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); })));
  servers = [];
});

/** A WebShop-like server whose routes answer what the test says (the rest as the protocol does). */
async function webshop(routes: Record<string, Route>): Promise<string> {
  const base: Record<string, Route> = {
    "/create": json("48000000"),
    "/reset": json(JSON.stringify(["WebShop [SEP] Instruction: [SEP] Find shoes [SEP] Search", null])),
    "/available_actions": json(JSON.stringify({ has_search_bar: true, clickables: ["search"] })),
    "/step": json(JSON.stringify({ state: "ok", reward: 0, done: false, info: null })),
  };
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (c: Buffer) => { data += c.toString(); });
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      (routes[path] ?? base[path] ?? json('{"detail":"Not Found"}'))(res, data ? JSON.parse(data) as Record<string, unknown> : {});
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function failure(p: Promise<unknown>): Promise<EnvError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(EnvError);
  expect((e as EnvError).retryable).toBe(true);
  return e as EnvError;
}

describe("AgentGym answers are validated", () => {
  it("clickables: null is an empty list (no clickables), as an absent key", async () => {
    const url = await webshop({ "/available_actions": json('{"has_search_bar": true, "clickables": null}') });
    const env = agentGymFromSpec("webshop", spec("webshop", url));
    expect((await env.reset({ id: "1", split: "test" })).admissible).toEqual(["search[<query>]"]);
  });

  it("clickables that are not a list of strings: a retryable EnvError naming the route and field", async () => {
    for (const bad of ['"back to search"', "5", '[1, 2]', '{"a": 1}']) {
      const url = await webshop({ "/available_actions": json(`{"has_search_bar": false, "clickables": ${bad}}`) });
      const e = await failure(agentGymFromSpec("webshop", spec("webshop", url)).reset({ id: "1", split: "test" }));
      expect(e.message).toMatch(/webshop server: \/available_actions answered a malformed value: \.clickables/);
    }
  });

  it("a missing or mistyped field of /step, a /reset that is not [observation, …]", async () => {
    let url = await webshop({ "/step": json('{"state": "x", "reward": "0.5", "done": false}') });
    let env = agentGymFromSpec("webshop", spec("webshop", url));
    await env.reset({ id: "1", split: "test" });
    expect((await failure(env.step("search[x]"))).message).toMatch(/\/step answered a malformed value: \.reward: .*expected number/);
    url = await webshop({ "/reset": json('{"observation": "hi"}') });
    env = agentGymFromSpec("webshop", spec("webshop", url));
    expect((await failure(env.reset({ id: "1", split: "test" }))).message).toMatch(/\/reset answered a malformed value/);
  });

  it("deeply nested JSON: as a field value it is refused without walking it; as an unknown key it is ignored; as an error it is shown safely", async () => {
    let url = await webshop({ "/available_actions": json(`{"has_search_bar": true, "clickables": ${deepArray()}}`) });
    let e = await failure(agentGymFromSpec("webshop", spec("webshop", url)).reset({ id: "1", split: "test" }));
    expect(e.message).toMatch(/\.clickables\[0\]: .*expected string.*nested too deeply to show/);
    url = await webshop({ "/step": json(`{"state": "fine", "reward": 0, "done": false, "info": ${deepArray()}}`) });
    const env = agentGymFromSpec("webshop", spec("webshop", url));
    await env.reset({ id: "1", split: "test" });
    expect((await env.step("search[x]")).observation).toBe("fine");
    url = await webshop({ "/step": json(`{"error": ${deepArray()}}`) });
    const env2 = agentGymFromSpec("webshop", spec("webshop", url));
    await env2.reset({ id: "1", split: "test" });
    e = await failure(env2.step("search[x]"));
    expect(e.message).toMatch(/\/step: \(an array nested too deeply to show\)/);
    url = await webshop({ "/reset": json(deepArray()) });
    e = await failure(agentGymFromSpec("webshop", spec("webshop", url)).reset({ id: "1", split: "test" }));
    expect(e.message).toMatch(/\/reset answered a malformed value/);
  });
});

describe("AgentGym body size limit", () => {
  it("a declared 2 GB answer is refused before a byte is read", async () => {
    let wrote = 0;
    const url = await webshop({
      "/step": (res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": String(2 * 1024 ** 3) });
        const chunk = Buffer.alloc(1 << 20, 0x20);
        const pump = () => { while (wrote < 2 * 1024 **3 && res.write(chunk)) wrote += chunk.length; };
        res.on("drain", pump);
        pump();
      },
    });
    const env = agentGymFromSpec("webshop", spec("webshop", url));
    await env.reset({ id: "1", split: "test" });
    const e = await failure(env.step("search[x]"));
    expect(e.message).toMatch(/\/step declared a 2048 MiB answer \(Content-Length\), more than the 16 MiB limit; it was not read/);
  });

  it("2 GB streamed without a Content-Length is cut off at the limit; memory stays flat", async () => {
    let wrote = 0;
    let closed = false;
    const url = await webshop({
      "/step": (res) => {
        res.writeHead(200, { "content-type": "application/json" }); // chunked: no length to check up front
        res.on("close", () => { closed = true; });
        const chunk = Buffer.alloc(1 << 20, 0x20);
        const pump = () => { while (!closed && wrote < 2 * 1024 **3 && res.write(chunk)) wrote += chunk.length; };
        res.on("drain", pump);
        pump();
      },
    });
    const env = agentGymFromSpec("webshop", spec("webshop", url));
    await env.reset({ id: "1", split: "test" });
    const before = process.memoryUsage().rss;
    const e = await failure(env.step("search[x]"));
    expect(e.message).toMatch(/\/step answered more than the 16 MiB limit; the rest was not read/);
    // The client stopped reading: the server wrote far less than 2 GB, and this process holds at most
    // about the limit (plus what sits in socket buffers).
    expect(wrote).toBeLessThan(512 * 1024 ** 2);
    expect(process.memoryUsage().rss - before).toBeLessThan(8 * AGENTGYM_MAX_BODY_BYTES);
    // The instance recovers: the next reset creates a fresh env.
    await env.reset({ id: "1", split: "test" });
  });
});
