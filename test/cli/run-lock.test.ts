/**
 * One run per run folder (RUN_DIR/run.lock): a second `tcod run --out` or a `--resume` on a folder
 * whose run is still going is refused (TC7009, naming the pid) and the first run goes on intact;
 * a lock left by a process that has ended is taken over with a note; the lock is gone after a run.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { acquireRunLock } from "../../runtime/run-lock.js";
import { RunFolderError } from "../../runtime/checkpoint.js";
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

  describe("a lock tcod did not write (was: any text it could not read taken for a stale lock and the folder taken over)", () => {
    const folder = (lock: string | Buffer) => {
      const dir = mkdtempSync(join(tmpdir(), "tcod-lock-"));
      writeFileSync(join(dir, "run.lock"), lock);
      return dir;
    };
    it.each([
      ["not JSON", "pid 4242 on gpu-7\n", /is not a run lock tcod wrote: not JSON \(.* at line 1, column 1\)/, 1],
      ["JSON cut short", '{"pid": 42', /is not a run lock tcod wrote: not JSON \(.* at line 1, column 11\)/, 11],
      ["a list", "[1]", /is not a run lock tcod wrote: it holds a list, not an object/, undefined],
      ["a pid that is no process id", JSON.stringify({ pid: "42", host: hostname(), started: "x" }), /its `pid` is "42", not a process id/, undefined],
      ["no host", JSON.stringify({ pid: 42, started: "x" }), /it has no string `host` and `started`/, undefined],
    ])("%s: TC7014 naming the file and line, the lock left as it is", (_, text, message, column) => {
      const dir = folder(text);
      const notes: string[] = [];
      const err = (() => { try { acquireRunLock(dir, (m) => notes.push(m)); } catch (e) { return e; } })();
      expect(err).toBeInstanceOf(RunFolderError);
      const e = err as RunFolderError;
      expect(e.code).toBe("TC7014");
      expect(e.message).toMatch(message);
      expect(e.where).toEqual({ file: join(dir, "run.lock"), line: 1, ...(column !== undefined ? { column } : {}) });
      expect(e.hint).toContain(`if no run is using ${dir}, remove ${join(dir, "run.lock")}`);
      expect(notes).toEqual([]);
      expect(readFileSync(join(dir, "run.lock"), "utf8")).toBe(text);
    });

    it.each([["empty", ""], ["zeros a power loss left", Buffer.alloc(64)]])("%s: cut off by a crash, taken over with a note naming the file", (_, text) => {
      const dir = folder(text);
      const notes: string[] = [];
      const lock = acquireRunLock(dir, (m) => notes.push(m));
      expect(notes).toEqual([`${join(dir, "run.lock")}:1: the lock is empty (a run was cut off by a crash while it took the folder); taking the run folder over`]);
      expect((JSON.parse(readFileSync(join(dir, "run.lock"), "utf8")) as { pid: number }).pid).toBe(process.pid);
      lock.release();
      expect(existsSync(join(dir, "run.lock"))).toBe(false);
    });

    it("tcod run on such a folder: exit 1, TC7014 at the lock, nothing run", () => {
      const dir = folder("hello\n");
      const r = tcodSync(["run", SRC, "--set", "steps=2", "--out", dir, "-q"]);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^${join(dir, "run.lock").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:1:1 error TC7014: `));
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(existsSync(join(dir, "metrics.jsonl"))).toBe(false);
    }, 60_000);
  });
});
