/**
 * SIGKILL in the middle of a feedback-paced run (examples/texthouse/paced-f2b.tcod, shortened), then
 * `tcod run --resume`: the metrics equal an uninterrupted run's, feedback stages included. The kill
 * lands between checkpoints, so the resume replays steps after the last checkpoint: the tracker's
 * state must come from the checkpoint, not from what the killed process had observed since.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trainRows } from "../helpers/train-rows.js";

const ROOT = join(import.meta.dirname, "../..");
const ARGS = ["examples/texthouse/paced-f2b.tcod", "--set", "steps=12", "--set", "batch=4 tasks × 1 rollout", "--set", "checkpoint_every=3 steps",
  "--set", "eval=[]", "--no-tensorboard", "-q"];
const rows = (dir: string) => readFileSync(join(dir, "metrics.jsonl"), "utf8").split("\n").filter(Boolean)
  .map((l) => { const { time: _t, ...rest } = JSON.parse(l) as Record<string, unknown>; return rest; });

describe("kill -9 and resume a feedback-paced run", () => {
  it("ends with the metrics of an uninterrupted run", async () => {
    const base = mkdtempSync(join(tmpdir(), "tcod-fbkill-"));
    const full = join(base, "full"), killed = join(base, "killed");
    const r = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", ...ARGS, "--out", full], { cwd: ROOT, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);

    const child = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", ...ARGS, "--out", killed], { cwd: ROOT, stdio: "ignore" });
    const exited = new Promise<void>((res) => child.on("exit", () => res()));
    // Past the checkpoint of step 3 and inside the next checkpoint window.
    while (trainRows(join(killed, "metrics.jsonl")) < 5) await new Promise((res) => setTimeout(res, 50));
    child.kill("SIGKILL");
    await exited;
    const seen = trainRows(join(killed, "metrics.jsonl"));
    expect(seen).toBeLessThan(12);
    const again = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", killed, "--no-tensorboard", "-q"], { cwd: ROOT, encoding: "utf8" });
    expect(again.status, again.stderr).toBe(0);
    const a = rows(full), b = rows(killed);
    expect(b).toEqual(a);
    const stages = a.filter((x) => x.kind === "train").map((x) => (x.feedback as { values: Record<string, number> }).values["stage#1"] ?? NaN);
    expect(stages).toHaveLength(12);
    expect(Math.max(...stages)).toBeGreaterThan(0); // the rule moved during the run
  }, 240_000);
});
