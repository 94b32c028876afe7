/**
 * The bridge client against hostile bridge processes (test/fixtures/envs/fake_bridge.py modes, no
 * Java): replies of the wrong shape or id, NaN, half a line, lone surrogates, a crash mid-episode,
 * an interpreter that cannot run, a bridge module that is not there. Each is an error naming the
 * bridge and what it did — retryable where a fresh bridge may do better (the engine drops the
 * episode, retries, and stops the run with its checkpoint if it keeps failing), an EnvConfigError
 * with a hint where no retry can help — never a TypeError, a silent value or a wait for the timeout.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { BridgeEnv } from "../../runtime/envs/bridge/adapter.js";
import { createScienceWorld, scienceWorldFromSpec } from "../../runtime/envs/scienceworld/index.js";
import { textWorldExpressFromSpec } from "../../runtime/envs/twx/index.js";
import type { EnvSpec } from "../../plan/schema.js";
import { EnvConfigError, EnvError } from "../../runtime/envs/env.js";

const script = fileURLToPath(new URL("../fixtures/envs/fake_bridge.py", import.meta.url));
const timeouts = { startMs: 20_000, resetMs: 20_000, stepMs: 8_000 };
let envs: BridgeEnv[] = [];
const fake = (mode: string, command = "python3", args = [script, mode]) => {
  const env = new BridgeEnv("fake", { kind: "fake", command, args, installHint: "install the fake" }, timeouts);
  envs.push(env);
  return env;
};
afterEach(async () => {
  await Promise.all(envs.map((e) => e.close()));
  envs = [];
});

/** The error a step of `mode` rejects with, after a successful reset, and how long it took. */
async function stepError(mode: string): Promise<{ e: unknown; ms: number; env: BridgeEnv }> {
  const env = fake(mode);
  await env.reset({ id: "a:0", split: "train" });
  const t0 = Date.now();
  const e = await env.step("go").then(() => undefined, (x: unknown) => x);
  return { e, ms: Date.now() - t0, env };
}

describe("hostile bridge replies", () => {
  it("a crash mid-episode is a retryable EnvError with the traceback's last lines; the next reset restarts", async () => {
    const { e, env } = await stepError("crash-step");
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).retryable).toBe(true);
    expect((e as Error).message).toMatch(/fake bridge exited with code 1 mid-call.*Traceback.*Py4JNetworkError/s);
    await env.reset({ id: "a:0", split: "train" });
    expect(env.stats.starts).toBe(2);
  }, 30_000);

  it("a reward of NaN (not JSON) fails the step at once, naming the line, instead of waiting for the timeout", async () => {
    const { e, ms } = await stepError("nan-step");
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).retryable).toBe(true);
    expect((e as Error).message).toMatch(/fake bridge answered step with a line that is not JSON.*NaN/);
    expect(ms).toBeLessThan(timeouts.stepMs);
  }, 30_000);

  it("a reward that is a string is a malformed answer naming the field, not a value passed on", async () => {
    const { e } = await stepError("string-reward");
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).retryable).toBe(true);
    expect((e as Error).message).toMatch(/fake bridge: step answered a malformed value: \.reward: .*"0\.5"/);
  }, 30_000);

  it("a step without `done` is a malformed answer naming the field", async () => {
    const { e } = await stepError("missing-field");
    expect(e).toBeInstanceOf(EnvError);
    expect((e as Error).message).toMatch(/fake bridge: step answered a malformed value: \.done/);
  }, 30_000);

  it("a reset answered ok without a result is a malformed answer, not a TypeError", async () => {
    const e = await fake("no-result").reset({ id: "a:0", split: "train" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as Error).message).toMatch(/fake bridge: reset answered a malformed value/);
  }, 30_000);

  it("a reply under another id fails the pending call at once and restarts the bridge", async () => {
    const { e, ms, env } = await stepError("wrong-id");
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).retryable).toBe(true);
    expect((e as Error).message).toMatch(/fake bridge answered id 102, but the call waiting is step \(id 2\)/);
    expect(ms).toBeLessThan(timeouts.stepMs);
    await env.reset({ id: "a:0", split: "train" });
    expect(env.stats.starts).toBe(2);
  }, 30_000);

  it("a bridge that does not know an op (older than tcod) is an EnvConfigError with a hint, not an uncaught non-retryable fault", async () => {
    const { e } = await stepError("old-bridge");
    expect(e).toBeInstanceOf(EnvConfigError);
    expect((e as Error).message).toMatch(/fake bridge refused step: unknown op 'step'/);
    expect((e as EnvConfigError).hint).toMatch(/TCOD_BRIDGES_DIR/);
  }, 30_000);

  it("half a reply then silence times out, naming the timeout's param and the bridge's stderr", async () => {
    const env = new BridgeEnv("fake", { kind: "fake", command: "python3", args: [script, "partial-hang"], installHint: "i" }, { ...timeouts, stepMs: 1_000 });
    envs.push(env);
    await env.reset({ id: "a:0", split: "train" });
    await expect(env.step("go")).rejects.toThrow(/step did not answer within 1 s \(the env's step_timeout_s; .*stderr: .*waiting for the simulator/s);
  }, 30_000);

  it("lone surrogates and bytes that are not UTF-8 arrive as text (already handled)", async () => {
    const env = fake("surrogate");
    await env.reset({ id: "a:0", split: "train" });
    const r = await env.step("go");
    expect(r.observation).toBe("a\udc80b");
    expect(r.admissible).toEqual(["x\ufffd\ufffd\ufffd\ufffd"]);
  }, 30_000);

  it("a library's prints on stdout between replies are not taken for replies (already handled)", async () => {
    const env = fake("chatty");
    await env.reset({ id: "a:0", split: "train" });
    expect(await env.step("go")).toMatchObject({ reward: 0.5, done: true });
  }, 30_000);
});

describe("a bridge that cannot start", () => {
  it("an interpreter that is not executable is an EnvConfigError with the install hint, not a retryable fault", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-bridge-"));
    const py = join(dir, "python3");
    writeFileSync(py, "#!/bin/sh\nexit 0\n");
    chmodSync(py, 0o644);
    const e = await fake("ok", py).tasks("train").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvConfigError);
    expect((e as Error).message).toMatch(/cannot run ".*python3" \(not executable\)/);
    expect((e as EnvConfigError).hint).toBe("install the fake");
  }, 30_000);

  it("a bridge module that is not installed is an EnvConfigError naming the module", async () => {
    const e = await fake("ok", "python3", ["-m", "tcod_bridges.no_such_bridge"]).tasks("train").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvConfigError);
    expect((e as Error).message).toMatch(/fake bridge cannot start: .*No module named 'tcod_bridges/);
    expect((e as EnvConfigError).hint).toMatch(/TCOD_BRIDGES_DIR/);
  }, 30_000);

  it("TCOD_BRIDGES_DIR naming a folder without tcod_bridges is an EnvConfigError naming it, not 'python3 not found'", async () => {
    const saved = process.env.TCOD_BRIDGES_DIR;
    process.env.TCOD_BRIDGES_DIR = "/nonexistent/bridges";
    try {
      expect(() => createScienceWorld()).toThrow(EnvConfigError);
      expect(() => createScienceWorld()).toThrow(/TCOD_BRIDGES_DIR=\/nonexistent\/bridges has no tcod_bridges/);
    } finally {
      if (saved === undefined) delete process.env.TCOD_BRIDGES_DIR; else process.env.TCOD_BRIDGES_DIR = saved;
    }
  });
});

describe("bridge env params", () => {
  const spec = (kind: string, params: Record<string, unknown>): EnvSpec => ({ kind, split: "train", maxTurns: 30, pool: 1, params });
  it("a step_limit the JVM cannot hold, or below 1, is an EnvConfigError at load, not a Java error at start", () => {
    for (const [make, kind] of [[scienceWorldFromSpec, "scienceworld"], [textWorldExpressFromSpec, "textworld_express"]] as const) {
      for (const bad of [1e20, 2 ** 31, -3, 0, 2.5, "10"]) {
        expect(() => make(spec(kind, { step_limit: bad })), `${kind} ${bad}`).toThrow(EnvConfigError);
        expect(() => make(spec(kind, { step_limit: bad }))).toThrow(/param step_limit must be an integer from 1 to 2147483647/);
      }
      expect(make(spec(kind, { step_limit: 2 ** 31 - 1 }))).toBeInstanceOf(BridgeEnv);
    }
  });
});
