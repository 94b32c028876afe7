/**
 * SIGTERM to `tcod run` on a worker it started (CPU, tiny model): the run finishes its step,
 * checkpoints and exits 143, and the worker is stopped. The process guard, which kills the
 * workers on SIGTERM/SIGHUP when nothing else handles them, used to act on the same signal,
 * kill the worker mid-step and re-raise the signal, which the run took as a second one: it quit
 * without a checkpoint.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workerMissing } from "../helpers/worker.js";
import { trainRows } from "../helpers/train-rows.js";
import { freePort, portFree } from "../helpers/ports.js";

const ROOT = join(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");
const missing = workerMissing("the SIGTERM-on-worker test");


describe.skipIf(missing !== undefined)("SIGTERM to a run on its own worker", () => {
  it("finishes the step, checkpoints, exits 143 and stops the worker", async () => {
    const port = await freePort();
    const out = join(mkdtempSync(join(tmpdir(), "tcod-sigterm-worker-")), "run");
    const cur = "texthouse_sft_teacher";
    const run = spawn(process.execPath, [CLI, "run", "examples/texthouse/gpu/sft-teacher.tcod", "--out", out,
      "--set", `config="config:tiny"`, "--set", `url="http://127.0.0.1:${port}"`, "--set", `${cur}.steps=500`,
      "--set", `${cur}.batch=2 tasks × 0 rollouts`, "--set", `${cur}.eval=[]`, "--set", `${cur}.max_turns=4 turns`],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TCOD_WORKER_ARGS: "--device cpu" } });
    let stderr = "";
    run.stderr.on("data", (c) => { stderr += String(c); });
    run.stdout.on("data", (c) => { stderr += String(c); });   // the progress lines, wherever they go
    const exited = new Promise<number | null>((r) => run.on("exit", (code) => r(code)));
    const metrics = join(out, "metrics.jsonl");
    const deadline = Date.now() + 540_000;
    while (trainRows(metrics) < 2 && run.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(trainRows(metrics), stderr).toBeGreaterThanOrEqual(2);
    run.kill("SIGTERM");
    expect(await exited, stderr).toBe(143);
    expect(stderr).toContain("SIGTERM: finishing the current step, then checkpointing");
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
    const state = JSON.parse(readFileSync(join(out, "checkpoint", "state.json"), "utf8")) as { learnerStep: number };
    expect(state.learnerStep).toBe(trainRows(metrics));   // the checkpoint holds the last step written
    expect(state.learnerStep).toBeGreaterThanOrEqual(2);
    expect(existsSync(join(out, "checkpoint", "student", "config.json"))).toBe(true);
    expect(await portFree(port)).toBe(true);   // the worker was stopped
  }, 600_000);
});
