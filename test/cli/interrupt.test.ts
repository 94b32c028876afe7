/**
 * Ctrl-C on the embedded backend stops at the end of the step it arrived in, with a checkpoint —
 * not at the next scheduled checkpoint (here 100 steps away). The embedded backend's steps never
 * leave the microtask queue, so the engine lets the event loop turn once per step.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trainRows } from "../helpers/train-rows.js";

const ROOT = join(import.meta.dirname, "../..");

describe("SIGINT", () => {
  it("stops at the end of the current step with a checkpoint, exit 130", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "tcod-sigint-")), "run");
    const child = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "examples/texthouse/tcod-f2b.tcod", "--set", "steps=300",
      "--set", "batch=2 tasks × 1 rollout", "--set", "checkpoint_every=100 steps", "--out", out, "-q"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (c: Buffer) => { stdout += c.toString(); });
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const metrics = join(out, "metrics.jsonl");
    while (trainRows(metrics) < 3) await new Promise((r) => setTimeout(r, 100));
    const seen = trainRows(metrics);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const state = JSON.parse(readFileSync(join(out, "checkpoint", "state.json"), "utf8")) as { learnerStep: number };
    // The step in flight when the signal came finishes (and maybe the one whose rows were being read).
    expect(state.learnerStep).toBeGreaterThanOrEqual(seen);
    expect(state.learnerStep).toBeLessThanOrEqual(seen + 2);
    expect(trainRows(metrics)).toBe(state.learnerStep);
    expect(stdout).toContain(`interrupted after step ${state.learnerStep}`);
  }, 120_000);
});
