/** AgentGym adapters: ALFWorld and WebShop against protocol-exact fakes, SciWorld against a real server. */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvSpec } from "../../plan/schema.js";
import { agentGymFromSpec, AlfworldAgentGym, type AgentGymEnv } from "../../runtime/envs/agentgym/index.js";
import { EnvConfigError, EnvError } from "../../runtime/envs/env.js";
import { bridgeEnv, bridgesDir } from "../../runtime/envs/bridge/locate.js";
import { HANG, fakeAlfworld, fakeWebshop, serve, type FakeServer } from "./fake-agentgym.js";
import { missing } from "./requirements.js";

// The first 40 rows of kokolerk/TCOD TCOD_examples/alfworld/alfworld_data/train_expert.jsonl.
const SAMPLE = fileURLToPath(new URL("../fixtures/envs/alfworld_train_expert.sample.jsonl", import.meta.url));
const sampleFile = process.env.TCOD_TRINITY_SAMPLE ?? SAMPLE;
const MAPPINGS = fileURLToPath(new URL("../fixtures/envs/alfworld_mappings.sample.json", import.meta.url));

const spec = (kind: string, over: Partial<EnvSpec>): EnvSpec => ({ kind, split: "train", maxTurns: 30, pool: 1, params: {}, ...over });

describe("ALFWorld over AgentGym with a Trinity task file", () => {
  let fake: FakeServer;
  const games = new Map<number, string>([[1000, "pick_heat_then_place_in_recep-Plate-None-Fridge-7/trial_T20190909_065023_650475"]]);
  const gold = ["go to diningtable 1", "take plate 2 from diningtable 1", "go to microwave 1", "heat plate 2 with microwave 1",
    "go to fridge 1", "open fridge 1", "move plate 2 to fridge 1"];
  beforeAll(async () => { fake = await serve(fakeAlfworld(games, { winAfter: gold })); });
  afterAll(() => fake.close());

  it("reads task ids and actions from the file; game_file resolves through the mappings to the server's game index", async () => {
    const env = agentGymFromSpec("alfworld", spec("alfworld", { server: fake.url, taskFile: sampleFile, params: { mappings: [MAPPINGS] } }));
    const tasks = await env.tasks("train");
    expect(tasks).toHaveLength(40);
    expect(tasks[0]).toEqual({ id: games.get(1000), split: "train", actions: gold });
    expect(tasks.filter((t) => t.actions === undefined || t.actions.length === 0)).toHaveLength(1);
    expect(await env.expertPath({ id: tasks[0]!.id, split: "train" })).toEqual(gold);

    const obs = await env.reset(tasks[0]!);
    expect(fake.calls.at(-1)).toEqual({ route: "/reset", body: { id: 0, game: 1000, world_type: "Text" } });
    expect(obs.task).toBe("heat some plate and put it in fridge.");
    // The official workflows' first observation: the server drops textworld's intro paragraph and
    // joins the others with "\n" (agentenv-alfworld env_wrapper.py reset); both are put back.
    expect(obs.text).toBe("-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a diningtable 1.\n\nYour task is to: heat some plate and put it in fridge.");
    expect(obs.admissible).toEqual(["go to diningtable 1", "look", "inventory"]);
    // b2f: replay all but the last expert action, then the student's last move wins.
    for (const a of gold.slice(0, -1)) expect((await env.step(a)).done).toBe(false);
    expect(await env.step(gold.at(-1)!)).toMatchObject({ done: true, won: true, reward: 1 });
    await expect(env.step("look")).rejects.toThrow(/step\(\) before a successful reset/);
    await env.close();
    expect(fake.calls.some((c) => c.route === "/close")).toBe(false); // the ALFWorld server has no /close
    // first_observation: "server" shows the server's text; other values are refused.
    const raw = agentGymFromSpec("alfworld", spec("alfworld", { server: fake.url, taskFile: sampleFile, params: { mappings: [MAPPINGS], first_observation: "server" } }));
    expect((await raw.reset(tasks[0]!)).text).toBe("You are in the middle of a room. Looking quickly around you, you see a diningtable 1.\nYour task is to: heat some plate and put it in fridge.");
    expect(() => agentGymFromSpec("alfworld", spec("alfworld", { server: fake.url, taskFile: sampleFile, params: { mappings: [MAPPINGS], first_observation: "raw" } }))).toThrow(/first_observation must be "official" or "server"/);
  });

  it("a game the server maps to another trial is a config error; a missing mappings param names what to pass", async () => {
    const env = agentGymFromSpec("alfworld", spec("alfworld", { server: fake.url, taskFile: sampleFile, params: { mappings: [MAPPINGS] } }));
    const second = (await env.tasks("train"))[1]!;
    await expect(env.reset(second)).rejects.toThrow(/list index out of range/); // index 1007 is not served by the fake
    const noMap = () => agentGymFromSpec("alfworld", spec("alfworld", { server: fake.url, taskFile: sampleFile }));
    expect(noMap).toThrow(EnvConfigError);
    try { noMap(); } catch (e) { expect((e as EnvConfigError).hint).toContain("mappings_train.json"); }
    await expect(env.tasks("valid_seen")).rejects.toThrow(/reads split "train" from/);
  });

  it("parses the AVAILABLE ACTIONS suffix when the server puts the list in the observation", async () => {
    const f2 = await serve(fakeAlfworld(games, { winAfter: ["go to fridge 1"], suffixForm: true }));
    const env = agentGymFromSpec("alfworld", spec("alfworld", { server: f2.url, params: { ranges: { train: [1000, 1001] } } }));
    const [t] = await env.tasks("train");
    expect(t).toEqual({ id: "1000", split: "train" });
    await env.reset(t!);
    const r = await env.step("look");
    expect(r).toMatchObject({ observation: "Nothing happens.", admissible: ["go to fridge 1", "open fridge 1", "look"], done: false });
    await f2.close();
  });

  it("the server's error key is an EnvError; an unknown split lists the ranges", async () => {
    const env = agentGymFromSpec("alfworld", spec("alfworld", { server: fake.url }));
    await expect(env.tasks("valid_unseen")).rejects.toMatchObject({ constructor: EnvConfigError });
    await expect(env.tasks("valid_unseen")).rejects.toHaveProperty("hint", expect.stringContaining("train = 0…2419, valid_train = 2420…2619"));
    await expect(env.reset({ id: "5", split: "train" })).rejects.toThrow(/list index out of range/);
  });
});

describe("WebShop over AgentGym", () => {
  let fake: FakeServer;
  beforeAll(async () => { fake = await serve(fakeWebshop()); });
  afterAll(() => fake.close());

  it("env_idx, bare-int /create, [obs, null] /reset, admissible from /available_actions, reward at Buy Now", async () => {
    const env = agentGymFromSpec("webshop", spec("webshop", { server: fake.url, split: "test" }));
    const tasks = await env.tasks("test");
    expect(tasks).toHaveLength(500);
    const obs = await env.reset(tasks[7]!);
    expect(fake.calls.find((c) => c.route === "/reset")!.body).toEqual({ env_idx: 48_000_000, session_id: 7 });
    expect(obs.task).toBe("Find me slip resistant men's shoes, price lower than 50.00 dollars (goal 7)");
    // As the official TCOD WebShop workflows list them: the search form, then every clickable.
    expect(obs.admissible).toEqual(["search[<query>]", "click[search]"]);
    expect((await env.step("search[men shoes]")).admissible).toEqual(["click[back to search]", "click[b07xyz]"]);
    await env.step("click[b07xyz]");
    expect(await env.step("click[buy now]")).toMatchObject({ done: true, reward: 0.75, won: false, score: 0.75, admissible: [] });
    const train = await env.tasks("train");
    expect(train[0]!.id).toBe("1500");
  });

  it("task-file rows with task_id (and actions) become session ids", async () => {
    const { writeFileSync, mkdtempSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "tcod-ws-"));
    const file = join(dir, "ws.jsonl");
    writeFileSync(file, '{"task_id": 1503, "target": ""}\n\n{"task_id": 1777, "target": "", "actions": ["search[shoe]", "click[b07xyz]", "click[buy now]"]}\n');
    const env = agentGymFromSpec("webshop", spec("webshop", { server: fake.url, taskFile: file }));
    const tasks = await env.tasks("train");
    expect(tasks).toEqual([{ id: "1503", split: "train" }, { id: "1777", split: "train", actions: ["search[shoe]", "click[b07xyz]", "click[buy now]"] }]);
    expect(await env.expertPath(tasks[0]!)).toEqual([]);
    await env.reset(tasks[1]!);
    expect(fake.calls.at(-2)!.body).toEqual({ env_idx: expect.any(Number), session_id: 1777 });
    writeFileSync(file, '{"task_id": 1}\n{"target": ""}\n');
    expect(() => agentGymFromSpec("webshop", spec("webshop", { server: fake.url, taskFile: file }))).toThrow(/ws.jsonl:2 has none of game_file, task_id, task_desc/);
  });
});

describe("faults over HTTP", () => {
  it("a server that never answers a step: timeout → retryable EnvError, never a hang", async () => {
    const fake = await serve((route) => (route === "/step" ? HANG : route === "/create" ? { id: 0 }
      : { id: 0, observation: "Your task is to: wait.", available_actions: [], task_type: "x/y" }));
    const env = agentGymFromSpec("alfworld", spec("alfworld", { server: fake.url, params: { step_timeout_s: 0.5 } })) as AlfworldAgentGym;
    await env.reset({ id: "3", split: "train" });
    const e = await env.step("look").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).message).toMatch(/\/step did not answer within 0.5 s/);
    expect((e as EnvError).retryable).toBe(true);
    await env.reset({ id: "3", split: "train" });
    expect(env.stats.creates).toBe(2); // the instance re-created its server-side env
    await fake.close();
  });

  it("an unreachable server names the URL and how to start it", async () => {
    const closed = await serve(() => null);
    await closed.close(); // a port nobody listens on
    const env = agentGymFromSpec("webshop", spec("webshop", { server: closed.url, split: "test" }));
    const e = await env.reset({ id: "0", split: "test" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as Error).message).toMatch(/unreachable.*ECONNREFUSED.*webshop --host 127.0.0.1 --port 36003/);
    expect(() => agentGymFromSpec("webshop", spec("webshop", {}))).toThrow(/needs the URL of its AgentGym server/);
  });
});

const skipSci = missing("scienceworld") !== undefined;

async function startServer(port = 0): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn("python3", ["-m", "tcod_bridges.agentgym_server", "--port", String(port)], {
    cwd: bridgesDir(), env: bridgeEnv(), stdio: ["ignore", "pipe", "inherit"], detached: true,
  });
  const line = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("agentgym_server did not start in 90 s")), 90_000);
    createInterface({ input: proc.stdout! }).once("line", (l) => { clearTimeout(t); resolve(l); });
    proc.once("exit", (c) => reject(new Error(`agentgym_server exited ${c}`)));
  });
  return { proc, port: (JSON.parse(line) as { port: number }).port };
}

describe.skipIf(skipSci)("SciWorld over the AgentGym protocol, against a real ScienceWorld server", () => {
  let server: { proc: ChildProcess; port: number };
  let env: AgentGymEnv;
  beforeAll(async () => {
    server = await startServer();
    env = agentGymFromSpec("sciworld", spec("sciworld", { server: `http://127.0.0.1:${server.port}`, params: { ranges: { train: [0, 14], test: [21, 30] } } }));
  }, 120_000);
  afterAll(async () => {
    await env.close();
    try { process.kill(-server.proc.pid!, "SIGKILL"); } catch { /* gone */ }
  });

  it("create/reset/step/close; score (0–100) becomes the reward as best_score/100; errors by key", async () => {
    expect(await env.health()).toBe(true);
    const tasks = await env.tasks("train");
    expect(tasks.map((t) => t.id)).toEqual(Array.from({ length: 14 }, (_, i) => String(i)));
    const obs = await env.reset(tasks[3]!);
    expect(obs.task).toContain("boil water");
    expect(obs.text).toMatch(/This (room|outside location) is called/);
    const r1 = await env.step("open door to kitchen");
    expect(r1.observation).toBe("The door is now open.");
    expect(r1.score).toBeGreaterThan(0);
    expect(r1.reward).toBeCloseTo(r1.score! / 100, 10);
    const r2 = await env.step("bogus action");
    expect(r2).toMatchObject({ observation: "No known action matches that input.", reward: 0, score: r1.score, done: false });
    await expect(env.reset({ id: "99", split: "train" })).rejects.toBeInstanceOf(EnvConfigError);
  }, 120_000);

  it("a server that dies mid-episode is a retryable EnvError; after a restart the instance re-creates its env", async () => {
    await env.reset({ id: "0", split: "train" });
    process.kill(-server.proc.pid!, "SIGKILL");
    const e = await env.step("look around").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).retryable).toBe(true);
    server = await startServer(server.port);
    const before = (env as unknown as { stats: { creates: number } }).stats.creates;
    await env.reset({ id: "0", split: "train" });
    expect((env as unknown as { stats: { creates: number } }).stats.creates).toBe(before + 1);
  }, 180_000);
});
