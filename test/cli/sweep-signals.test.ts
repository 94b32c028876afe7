/**
 * The sweep parent (`tcod run FILE --sweep`, bin/run-many.ts) on SIGTERM (what SLURM, Kubernetes,
 * systemd and `timeout` send) and SIGHUP (a closed terminal) does what it does on Ctrl-C: the signal
 * goes on to each running point, which finishes its step and checkpoints; the sweep exits
 * 128 + the signal's number (143, 129), as `tcod run` does. A signal to the sweep's whole process
 * group reaches each point once, through the sweep, so the points checkpoint then too.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { trainRows } from "../helpers/train-rows.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");

// Long enough that no point finishes before the signal; checkpoints only at step 0 and on the stop.
const SOURCE = `import { f2b } from "std/tcod"
import { texthouse } from "std/envs"

model m { path: "x" }
let k = 2 steps

curriculum long {
  teacher: m
  student: m
  env:     texthouse()
  steps:   2000
  batch:   2 tasks × 1 rollout
  horizon: f2b(every: k, max: 6 turns)
  checkpoint_every: 1000 steps
}
sweep grid product { k: [2 steps, 3 steps] }
`;
const POINTS = ["long@k=2steps", "long@k=3steps"];

// "sweep": the signal is sent to the sweep's process alone (`kill PID`, Kubernetes). "group": to its
// whole process group, as a terminal sends Ctrl-C and SIGHUP, `timeout` and SLURM SIGTERM; each point
// must still see it once (a second one would mean "quit now, without a checkpoint").
describe.skipIf(process.platform === "win32").each([
  ["SIGTERM", 143, "sweep"],
  ["SIGHUP", 129, "sweep"],
  ["SIGTERM", 143, "group"],
  ["SIGHUP", 129, "group"],
  ["SIGINT", 130, "group"],
] as const)("tcod run --sweep on %s sent to the %s", (signal, status, target) => {
  it(`each running point checkpoints at the end of its step; the sweep exits ${status}`, async () => {
    const { out, sweep } = startSweep("tcod-sweep-sig-");
    let stderr = "";
    sweep.stderr.on("data", (b: Buffer) => { stderr += b.toString(); });
    const exited = new Promise<number | null>((r) => sweep.on("exit", (code) => r(code)));
    try {
      const { metrics, seen } = await twoStepsEach(out);
      if (target === "group") process.kill(-sweep.pid!, signal);
      else sweep.kill(signal);
      expect(await exited, stderr).toBe(status);
      expect(stderr).toContain(`${signal === "SIGINT" ? "interrupt" : signal}: each running point finishes its step and checkpoints`);

      const rec = JSON.parse(readFileSync(join(out, "sweep.json"), "utf8")) as { points: { name: string; status: string; exitCode: number }[] };
      for (const [i, p] of POINTS.entries()) {
        expectStopCheckpoint(join(out, p), metrics[i]!, seen[i]!);
        expect(rec.points.find((x) => x.name === p)).toMatchObject({ status: "interrupted", exitCode: status });
      }
    } finally {
      try { process.kill(-sweep.pid!, "SIGKILL"); } catch { /* the group has ended */ }
    }
  }, 120_000);
});

/**
 * SIGKILL cannot be caught, so the sweep cannot pass it on: each point watches the pipe the sweep
 * gave it as stdin (`--watch-parent`), which closes when the sweep dies however it dies, and then
 * stops as on SIGHUP — it finishes its step, checkpoints and exits — instead of running on orphaned.
 * What it says meanwhile reaches its stderr.log, which is its stderr itself, not a pipe through the sweep.
 */
describe.skipIf(process.platform === "win32" || !existsSync("/proc/self"))("tcod run --sweep killed by SIGKILL", () => {
  it("each point notices the sweep is gone, checkpoints and exits within seconds", async () => {
    const { out, sweep } = startSweep("tcod-sweep-kill-");
    const exited = new Promise<NodeJS.Signals | null>((r) => sweep.on("exit", (_, sig) => r(sig)));
    // The points: the sweep's children, each the pid of its run folder's run.lock.
    const pids: number[] = [];
    try {
      const { metrics, seen } = await twoStepsEach(out);
      for (const p of POINTS) pids.push((JSON.parse(readFileSync(join(out, p, "run.lock"), "utf8")) as { pid: number }).pid);
      for (const pid of pids) expect(parentOf(pid)).toBe(sweep.pid);
      sweep.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      const t0 = Date.now();
      while (pids.some(alive) && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
      expect(pids.filter(alive), "points still running 10 s after the sweep was killed").toEqual([]);
      for (const [i, p] of POINTS.entries()) {
        expectStopCheckpoint(join(out, p), metrics[i]!, seen[i]!);
        // The folder is free again: the point released its lock.
        expect(existsSync(join(out, p, "run.lock"))).toBe(false);
        // What the point said while winding down, after the sweep was gone, is in its stderr.log,
        // under the attempt's header (no footer: the sweep that would write it is gone).
        const log = readFileSync(join(out, p, "stderr.log"), "utf8");
        expect(log.slice(0, log.indexOf("\n"))).toMatch(/^--- \S+ start long@k=\dsteps ---$/);
        expect(log).toContain("the sweep that started this point is gone: finishing the current step, then checkpointing\n");
        expect(log).not.toMatch(/^--- \S+ (completed|interrupted|failed)/m);
      }
    } finally {
      try { process.kill(-sweep.pid!, "SIGKILL"); } catch { /* the group has ended */ }
      for (const pid of pids) try { process.kill(-pid, "SIGKILL"); } catch { /* the point's group has ended */ }
    }
  }, 120_000);
});

/** The sweep of SOURCE over POINTS, two at a time, in a new folder; in its own process group, so that
 *  whatever is left (without the fixes: the points, orphaned) can be killed at the end. */
function startSweep(prefix: string): { out: string; sweep: ChildProcessByStdio<null, Readable, Readable> } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, "package.json"), "{}");
  const file = join(dir, "sweep.tcod");
  writeFileSync(file, SOURCE);
  const out = join(dir, "out");
  const sweep = spawn(process.execPath, [CLI, "run", file, "--sweep", "--parallel", "2", "--out", out], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], detached: true });
  return { out, sweep };
}

/** Waits (up to 60 s) until every point has written two training rows; each point's metrics file and rows then. */
async function twoStepsEach(out: string): Promise<{ metrics: string[]; seen: number[] }> {
  const metrics = POINTS.map((p) => join(out, p, "metrics.jsonl"));
  const deadline = Date.now() + 60_000;
  while (metrics.some((m) => trainRows(m) < 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const seen = metrics.map(trainRows);
  expect(Math.min(...seen)).toBeGreaterThanOrEqual(2);
  return { metrics, seen };
}

/** The point's checkpoint is the one of the stop (the scheduled ones are at steps 0 and 1000), at the last step written. */
function expectStopCheckpoint(pointDir: string, metrics: string, seen: number): void {
  const state = JSON.parse(readFileSync(join(pointDir, "checkpoint", "state.json"), "utf8")) as { learnerStep: number };
  expect(state.learnerStep).toBeGreaterThanOrEqual(seen);
  expect(state.learnerStep).toBeLessThan(1000);
  expect(trainRows(metrics)).toBe(state.learnerStep);
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); } catch { return false; }
  // A zombie has exited; only its parent (here init) has yet to reap it.
  try { return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8")); } catch { return false; }
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}
