/**
 * Exact resume under repeated faults: texthouse TCOD-b2f (12 steps of 8 tasks, a checkpoint every
 * 2 steps, seed 7) SIGKILLed at seeded random points across its whole life — mid-step, during checkpoint
 * writes, during the start-up of a resumed run, before its first checkpoint — and resumed each time.
 * The result must equal an uninterrupted run: the same metrics but for wall times, byte-identical
 * student weights and optimiser state.
 */
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { killAndResume } from "../helpers/kill-harness.js";

const ROOT = join(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");
const ARGS = ["examples/texthouse/tcod-b2f.tcod", "--set", "steps=12", "--seed", "7", "--set", "checkpoint_every=2 steps", "--set", "batch=8 tasks × 1 rollout"];
const COMMON = ["-q", "--no-tensorboard"];

const metrics = (dir: string) => readFileSync(join(dir, "metrics.jsonl"), "utf8").split("\n").filter((l) => l.length > 0)
  .map((l) => { const { time: _t, ...rest } = JSON.parse(l) as { time: unknown }; return rest; });
const studentFiles = (dir: string) => {
  const d = join(dir, "checkpoint", "student");
  return Object.fromEntries(readdirSync(d).sort().map((f) => [f, readFileSync(join(d, f)).toString("base64")]));
};

describe("repeated SIGKILL and resume", () => {
  it("texthouse b2f killed at random points 10 times ends exactly like an uninterrupted run", async () => {
    const base = mkdtempSync(join(tmpdir(), "tcod-kill-"));
    const full = join(base, "full"), killed = join(base, "killed");
    const r = spawnSync(process.execPath, [CLI, "run", ...ARGS, "--out", full, ...COMMON], { cwd: ROOT, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const log: string[] = [];
    const h = await killAndResume({ cli: CLI, cwd: ROOT, args: ARGS, runDir: killed, kills: 10, seed: 7, common: COMMON, log: (l) => log.push(l) });
    expect(h.finalCode, `${log.join("\n")}\n${h.finalStderr}`).toBe(0);
    expect(h.finalStderr).not.toMatch(/\n\s+at /); // never a stack trace
    expect(h.kills.filter((k) => k.killed).length, log.join("\n")).toBe(10);
    expect(new Set(h.kills.filter((k) => k.killed).map((k) => k.kind)).size, log.join("\n")).toBeGreaterThanOrEqual(2);
    expect(metrics(killed)).toEqual(metrics(full));
    expect(studentFiles(killed)).toEqual(studentFiles(full));
    expect(readdirSync(killed).filter((f) => /^checkpoint\.(tmp|old)-/.test(f))).toEqual([]);
  }, 1_800_000); // ~1.5 min of CPU; on a loaded shared 2-core machine the wall time was 11 min
});
