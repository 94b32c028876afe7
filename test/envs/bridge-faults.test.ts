/** The bridge client against a fake bridge that hangs, crashes or misprints (no Java needed). */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { composeRuntime } from "../../bin/compose.js";
import { runPlan } from "../../runtime/engine.js";
import { BRIDGE_REFUSED_STEP_HINT, BridgeEnv } from "../../runtime/envs/bridge/adapter.js";
import { EnvConfigError, EnvError } from "../../runtime/envs/env.js";
import { ScriptedStudent, ScriptedTeacher } from "../runtime/doubles.js";
import { testPlan, type TestPlanOptions } from "../runtime/plans.js";

composeRuntime();

const script = fileURLToPath(new URL("../fixtures/envs/fake_bridge.py", import.meta.url));
const timeouts = { startMs: 20_000, resetMs: 20_000, stepMs: 1_500 };
const fake = (mode: string, command = "python3") =>
  new BridgeEnv("fake", { kind: "fake", command, args: [script, mode], installHint: "install the fake" }, timeouts);

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

describe("bridge faults", () => {
  it("a hung step times out: EnvError (retryable), the process is killed, the next reset restarts it", async () => {
    const env = fake("hang-step");
    await env.reset({ id: "a:0", split: "train" });
    const pid = env.pid!;
    const e = await env.step("go").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).message).toMatch(/step did not answer within 1.5 s/);
    expect((e as EnvError).retryable).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(pid)).toBe(false);
    await expect(env.step("go")).rejects.toThrow(/before a successful reset/);
    await env.reset({ id: "a:0", split: "train" });
    expect(env.stats.starts).toBe(2);
    expect(env.pid).not.toBe(pid);
    await env.close();
  }, 30_000);

  it("a line over the reader's cap is a retryable EnvError, not a crash; the next reset restarts the bridge", async () => {
    const env = new BridgeEnv("fake", { kind: "fake", command: "python3", args: [script, "huge-line"], installHint: "install the fake" }, { ...timeouts, stepMs: 45_000 });
    await env.reset({ id: "a:0", split: "train" });
    const e = await env.step("go").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).message).toMatch(/printed a line of more than 67108864 bytes/);
    expect((e as EnvError).retryable).toBe(true);
    await env.reset({ id: "a:0", split: "train" });
    expect(env.stats.starts).toBe(2);
    await env.close();
  }, 60_000);

  it("a bridge that dies before ready is an EnvError with its stderr", async () => {
    const e = await fake("crash-start").reset({ id: "a:0", split: "train" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as Error).message).toMatch(/exited with code 7 before it was ready.*JVM could not start/s);
  }, 30_000);

  it("a missing package or interpreter is an EnvConfigError with the install hint", async () => {
    const e1 = await fake("fatal").tasks("train").catch((x: unknown) => x);
    expect(e1).toBeInstanceOf(EnvConfigError);
    expect((e1 as EnvConfigError).hint).toBe("pip install scienceworld");
    const e2 = await fake("ok", "/nonexistent/python9").tasks("train").catch((x: unknown) => x);
    expect(e2).toBeInstanceOf(EnvConfigError);
    expect((e2 as EnvConfigError).hint).toBe("install the fake");
  }, 30_000);

  it("stray stdout lines do not break the protocol; config errors carry the bridge's hint", async () => {
    const env = fake("garbage");
    expect(await env.tasks("train")).toEqual([{ id: "a:0", split: "train" }, { id: "a:1", split: "train" }]);
    await env.reset({ id: "a:0", split: "train" });
    expect(await env.step("go")).toMatchObject({ reward: 0.5, done: true, score: 50 });
    await expect(env.expertPath({ id: "a:0", split: "train" })).rejects.toMatchObject({ constructor: EnvConfigError, hint: "h" });
    const pid = env.pid!;
    await env.close();
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it("close() leaves no process behind", () => {
    const out = execFileSync("ps", ["-eo", "args"]).toString();
    expect(out).not.toContain("fake_bridge.py hang-step");
  });
});

describe("a bridge answering a step after its episode ended", () => {
  it("is a non-retryable EnvError naming the bridge and the action, with a hint", async () => {
    const env = fake("after-done");
    await env.reset({ id: "a:0", split: "train" });
    expect(await env.step("inc")).toMatchObject({ done: false });
    const e = await env.step("inc").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).retryable).toBe(false);
    expect((e as EnvError).message).toBe('fake bridge refused step "inc" of an episode its last answer left running: fake a:0: step() after the episode ended; reset a task first');
    expect((e as EnvError).hint).toBe(BRIDGE_REFUSED_STEP_HINT);
    await env.close();
  }, 30_000);

  /** A run of `o` against the after-done bridge: its result, or what it threw. */
  async function run(o: TestPlanOptions) {
    const runDir = mkdtempSync(join(tmpdir(), "tcod-bridge-done-"));
    const student = new ScriptedStudent();
    const res = await runPlan(testPlan({ steps: 2, tasksPerStep: 1, maxTurns: 4, pool: 1, ...o }), {
      runDir, faults: { maxRetries: 1, backoffMs: 0 },
      models: async () => ({ student, teacher: new ScriptedTeacher(), tokenizer: student.tokenizer }),
      envFactory: () => new BridgeEnv("fake", { kind: "fake", command: "python3", args: [script, "after-done"], installHint: "x" }, timeouts),
    }).catch((x: unknown) => x);
    return { runDir, res };
  }

  // Each was a RunFault or an EnvError thrown out of the engine (`tcod: internal error` and a stack
  // trace) where the fault met no episode's retries: the start evaluation, a b2f expert path.
  const places: [string, TestPlanOptions, RegExp][] = [
    ["in a training episode", {}, /^episode 0 \(task a:\d\) failed \(env fake: fake bridge refused step "inc"/],
    ["in the start evaluation", { evalEvery: 1 }, /^episode 0 \(task a:\d\) failed \(env fake: fake bridge refused step "inc"/],
    ["in a b2f expert path (the bridge's gold path replays the episode)", { prefix: "b2f" }, /^expert path of task a:\d failed \(env fake: fake a:0: step\(\) after the episode ended/],
  ];
  for (const [where, o, message] of places) {
    it(`${where}: the run fails as TC7016 with a message and a hint, not an internal error`, async () => {
      const { runDir, res } = await run(o);
      expect(res).not.toBeInstanceOf(Error);
      const r = res as Awaited<ReturnType<typeof runPlan>>;
      expect(r.status).toBe("failed");
      expect(r.code).toBe("TC7016");
      expect(r.message).toMatch(message);
      expect(r.message).toContain("retrying cannot mend this");
      expect(r.message).toContain(`--resume ${runDir}`);
      expect(r.hint).toMatch(/^The (bridge and tcod disagree|environment failed)/);
      expect(existsSync(join(runDir, "metrics.jsonl"))).toBe(true);
    }, 60_000);
  }
});
