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
      expect(e.message).toMatch(/webshop server http:\/\/127\.0\.0\.1:\d+: \/available_actions answered a malformed value: \.clickables/);
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

/** A TextCraft-like server: /create → {id: n++} (or what `routes` says), /reset → a goal; the rest as `routes` say. */
async function textcraft(routes: Record<string, Route>): Promise<string> {
  let ids = 0;
  return webshopLike({
    "/create": (res) => json(JSON.stringify({ id: ids++ }))(res, {}),
    "/reset": json(JSON.stringify({ observation: "Goal: craft stick." })),
    "/step": json(JSON.stringify({ observation: "ok", reward: 0, done: false })),
    ...routes,
  });
}
async function webshopLike(routes: Record<string, Route>): Promise<string> {
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (c: Buffer) => { data += c.toString(); });
    req.on("end", () => (routes[new URL(req.url ?? "/", "http://x").pathname] ?? json('{"detail":"Not Found"}'))(res, data ? JSON.parse(data) as Record<string, unknown> : {}));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const tspec = (server: string, params: Record<string, unknown> = {}): EnvSpec =>
  ({ kind: "textcraft", split: "t", maxTurns: 30, pool: 1, params: { ranges: { t: [0, 4] }, ...params }, server });
const T0 = { id: "0", split: "t" };

describe("AgentGym values that are not what they claim", () => {
  it("an env id that is not an integer (1.5, 1e300; a bare 2.5 from WebShop) is malformed, not sent back", async () => {
    for (const id of ["1.5", "1e300"]) {
      const url = await textcraft({ "/create": json(`{"id": ${id}}`) });
      const e = await failure(agentGymFromSpec("textcraft", tspec(url)).reset(T0));
      expect(e.message).toMatch(/textcraft server http:\/\/127\.0\.0\.1:\d+: \/create answered a malformed value: \.id: expected an integer env id/);
    }
    const url = await webshop({ "/create": json("2.5") });
    const e = await failure(agentGymFromSpec("webshop", spec("webshop", url)).reset({ id: "1", split: "test" }));
    expect(e.message).toMatch(/webshop server http:\/\/127\.0\.0\.1:\d+: \/create answered 2\.5, not an integer env index/);
  });

  it("a reward out of the env's range (ALFWorld, WebShop, TextCraft: 0…1; SciWorld score: -100…100) is malformed", async () => {
    for (const r of ["-1e300", "1e308", "1.5", "-0.5"]) {
      const url = await textcraft({ "/step": json(`{"observation": "ok", "reward": ${r}, "done": true}`) });
      const env = agentGymFromSpec("textcraft", tspec(url));
      await env.reset(T0);
      expect((await failure(env.step("look"))).message).toMatch(/\/step answered a malformed value: \.reward: expected a reward from 0 to 1/);
    }
    const url = await textcraft({
      "/reset": json('{"task_description": "boil water", "observation": "You are in the kitchen."}'),
      "/step": json('{"observation": "ok", "reward": 0, "score": 250, "done": false}'),
    });
    const sci = agentGymFromSpec("sciworld", { ...tspec(url), kind: "sciworld" });
    await sci.reset(T0);
    expect((await failure(sci.step("look"))).message).toMatch(/\.score: expected a score from -100 to 100/);
  });

  it("text that is not text: a lone surrogate (\\ud800) or bytes that are not UTF-8 are malformed; NUL is text and passes", async () => {
    let url = await textcraft({ "/step": json('{"observation": "a\\ud800b", "reward": 0, "done": false}') });
    let env = agentGymFromSpec("textcraft", tspec(url));
    await env.reset(T0);
    expect((await failure(env.step("look"))).message).toMatch(/\/step answered a malformed value: \.observation: a lone surrogate \(U\+D800\) at character 1, which is not text/);
    url = await textcraft({ "/step": (res) => { res.writeHead(200); res.end(Buffer.concat([Buffer.from('{"observation": "caf'), Buffer.from([0xe9]), Buffer.from('", "reward": 0, "done": false}')])); } });
    env = agentGymFromSpec("textcraft", tspec(url));
    await env.reset(T0);
    expect((await failure(env.step("look"))).message).toMatch(/\/step answered bytes that are not UTF-8 text/);
    url = await textcraft({ "/step": json('{"observation": "a\\u0000b", "reward": 0, "done": false}') });
    env = agentGymFromSpec("textcraft", tspec(url));
    await env.reset(T0);
    expect((await env.step("look")).observation).toBe("a\u0000b");
  });
});

describe("AgentGym servers that hand out one env id twice", () => {
  it("a second /create answering an id another instance holds (a restarted server, or a broken one): the older instance's next call fails, never steps the other's env", async () => {
    const stepped: unknown[] = [];
    const url = await textcraft({
      "/create": json('{"id": 0}'),
      "/step": (res, body) => { stepped.push(body.action); json('{"observation": "ok", "reward": 0, "done": false}')(res, body); },
    });
    const a = agentGymFromSpec("textcraft", tspec(url));
    const b = agentGymFromSpec("textcraft", tspec(url));
    await a.reset(T0);
    await b.reset(T0);
    const e = await failure(a.step("a's move"));
    expect(e.message).toMatch(/textcraft server http:\/\/127\.0\.0\.1:\d+: \/create handed env id 0 to another episode while this one held it/);
    expect(stepped).toEqual([]); // a's move never reached b's env
    expect((await b.step("b's move")).observation).toBe("ok");
    // a starts over: it takes id 0 again, and now b is the one that lost it.
    await a.reset(T0);
    await failure(b.step("b's second move"));
    expect(stepped).toEqual(["b's move"]);
    await a.close();
    await b.close();
  });
});

describe("AgentGym rate limits and timeouts", () => {
  it("HTTP 429 is retryable; its Retry-After is waited out before the error (up to the request's timeout)", async () => {
    const url = await textcraft({ "/step": (res) => { res.writeHead(429, { "retry-after": "1" }); res.end('{"detail": "slow down"}'); } });
    const env = agentGymFromSpec("textcraft", tspec(url));
    await env.reset(T0);
    const t0 = Date.now();
    const e = await failure(env.step("look"));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(e.message).toMatch(/\/step answered HTTP 429 \(it asked to retry after 1 s; waited\)/);
  });

  it("a timeout param past what a timer can hold is refused when the env is made (it failed at the first request, an internal RangeError)", () => {
    for (const key of ["step_timeout_s", "reset_timeout_s"]) {
      expect(() => agentGymFromSpec("textcraft", tspec("http://127.0.0.1:1", { [key]: 1e10 })))
        .toThrow(new RegExp(`textcraft: param ${key} must be at most 2147483 seconds`));
    }
  });
});

describe("AgentGym connection faults say what happened", () => {
  it("a server that closes the connection without answering is not called unreachable (nor told to be started)", async () => {
    const url = await textcraft({ "/step": (res) => { res.socket?.destroy(); } });
    const env = agentGymFromSpec("textcraft", tspec(url));
    await env.reset(T0);
    const e = await failure(env.step("look"));
    expect(e.message).toMatch(/textcraft server http:\/\/127\.0\.0\.1:\d+: \/step closed the connection without answering \(UND_ERR_SOCKET\)/);
    expect(e.message).not.toMatch(/unreachable|start it with/);
  });

  it("a timeout names the param that sets it (step_timeout_s for /step, reset_timeout_s for /create and /reset)", async () => {
    let url = await textcraft({ "/step": () => undefined });
    let env = agentGymFromSpec("textcraft", tspec(url, { step_timeout_s: 0.3 }));
    await env.reset(T0);
    expect((await failure(env.step("look"))).message).toMatch(/\/step did not answer within 0\.3 s \(the env's param step_timeout_s\)/);
    url = await textcraft({ "/reset": () => undefined });
    env = agentGymFromSpec("textcraft", tspec(url, { reset_timeout_s: 0.3 }));
    expect((await failure(env.reset(T0))).message).toMatch(/\/reset did not answer within 0\.3 s \(the env's param reset_timeout_s\)/);
  });
});

describe("AgentGym NaN and Infinity", () => {
  it("a reward of NaN or Infinity (Python's json.dumps writes them) is named as such, not just 'non-JSON'", async () => {
    for (const bad of ["NaN", "Infinity", "-Infinity"]) {
      const url = await textcraft({ "/step": json(`{"observation": "ok", "reward": ${bad}, "done": false}`) });
      const env = agentGymFromSpec("textcraft", tspec(url));
      await env.reset(T0);
      expect((await failure(env.step("look"))).message)
        .toMatch(/\/step answered NaN or Infinity, which JSON has no form for \(Python's json\.dumps writes them for a float nan or inf\)/);
    }
  });
});
