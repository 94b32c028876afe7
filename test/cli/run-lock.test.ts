/**
 * One run per run folder (RUN_DIR/run.lock): a second `tcod run --out` or a `--resume` on a folder
 * whose run is still going is refused (TC7009, naming the pid) and the first run goes on intact;
 * a lock left by a process that has ended is taken over with a note; the lock is gone after a run.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { trainRows } from "../helpers/train-rows.js";

const ROOT = join(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");
const SRC = "examples/texthouse/tcod-f2b.tcod";
const tcodSync = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: "utf8" });

describe("run folder lock", () => {
  it("refuses a second run and a --resume while the first runs; the first ends intact and unlocks", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "tcod-lock-")), "run");
    const first = spawn(process.execPath, [CLI, "run", SRC, "--set", "steps=5000", "--set", "batch=2 tasks × 1 rollout", "--out", out, "-q"], { cwd: ROOT, stdio: "ignore" });
    const exited = new Promise<number | null>((r) => first.on("exit", (code) => r(code)));
    const metrics = join(out, "metrics.jsonl");
    while (trainRows(metrics) < 2) await new Promise((r) => setTimeout(r, 100));
    for (const args of [["run", SRC, "--out", out, "-q"], ["run", "--resume", out, "-q"]]) {
      const second = tcodSync(args);
      expect(second.status).toBe(1);
      expect(second.stderr).toContain("TC7009");
      expect(second.stderr).toContain(`${out} is in use by pid ${first.pid}`);
      expect(second.stderr).toContain("hint:");
      expect(second.stderr).not.toMatch(/internal error|\n\s+at /);
    }
    first.kill("SIGTERM");
    expect(await exited).toBe(143);
    const state = JSON.parse(readFileSync(join(out, "checkpoint", "state.json"), "utf8")) as { learnerStep: number };
    expect(state.learnerStep).toBeGreaterThanOrEqual(2);
    expect(trainRows(metrics)).toBe(state.learnerStep);
    expect(existsSync(join(out, "run.lock"))).toBe(false);
  }, 120_000);

  it("takes over a lock whose process has ended, with a note, and removes it at the end", () => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const pid = Number(dead.stdout);
    const out = join(mkdtempSync(join(tmpdir(), "tcod-lock-")), "run");
    mkdirSync(out);
    writeFileSync(join(out, "run.lock"), JSON.stringify({ pid, host: hostname(), started: "2026-01-01T00:00:00.000Z" }));
    const r = tcodSync(["run", SRC, "--set", "steps=2", "--set", "batch=2 tasks × 1 rollout", "--out", out, "-q"]);
    expect(r.stderr).toContain(`was left by pid ${pid}`);
    expect(r.status).toBe(0);
    expect(trainRows(join(out, "metrics.jsonl"))).toBe(2);
    expect(existsSync(join(out, "run.lock"))).toBe(false);
  }, 60_000);
});
