/**
 * A repeated-fault harness for `tcod run`: starts a run, SIGKILLs it at points drawn from a seeded
 * RNG across its whole life, and resumes it each time (`--resume RUN_DIR`, or the original command
 * when the folder does not hold a plan yet), until it completes. Kill points, by kind:
 *   "row"        0–0.4 s after the run has appended a new metrics row (mid-step);
 *   "checkpoint" the moment a checkpoint write begins (a checkpoint.tmp-* folder appears), plus 0–30 ms;
 *   "startup"    0.05–0.7 s after the process was spawned (compile, module load, checkpoint read).
 * The first kill is a "checkpoint" kill of the fresh run (its step-0 checkpoint: the run has none
 * yet). Kills that find the process already finished are not counted. The same seed gives the same
 * sequence of kinds and delays (the wall-clock position of a kill still varies with machine load).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, watch } from "node:fs";
import { join } from "node:path";
import { rng } from "./prng.js";

export type KillKind = "row" | "checkpoint" | "startup";

export interface KillRecord { kind: KillKind; delayMs: number; killed: boolean; resumed: boolean; rowsBefore: number }

export interface HarnessResult { kills: KillRecord[]; finalCode: number | null; finalStdout: string; finalStderr: string; processes: number }

export interface HarnessOptions {
  cli: string;
  cwd: string;
  /** The original command's arguments after `run` (file and flags), without --out. */
  args: string[];
  runDir: string;
  kills: number;
  seed: number;
  /** Extra flags for every invocation (e.g. -q, --no-tensorboard). */
  common?: string[];
  log?: (line: string) => void;
}

const rowsIn = (f: string): number => (existsSync(f) ? readFileSync(f, "utf8").split("\n").filter((l) => l.length > 0).length : 0);

export async function killAndResume(o: HarnessOptions): Promise<HarnessResult> {
  const r = rng(o.seed);
  const kinds: KillKind[] = ["row", "checkpoint", "startup"];
  const kills: KillRecord[] = [];
  const metrics = join(o.runDir, "metrics.jsonl");
  mkdirSync(o.runDir, { recursive: true }); // watched from the start (`tcod run --out` takes an empty folder)
  let processes = 0;
  const start = (): { child: ChildProcess; resumed: boolean; done: Promise<{ code: number | null; stdout: string; stderr: string }> } => {
    const resumed = existsSync(join(o.runDir, "plan.json"));
    const args = resumed ? ["run", "--resume", o.runDir] : ["run", ...o.args, "--out", o.runDir];
    const child = spawn(process.execPath, [o.cli, ...args, ...(o.common ?? [])], { cwd: o.cwd, stdio: ["ignore", "pipe", "pipe"] });
    processes++;
    let stdout = "", stderr = "";
    child.stdout!.on("data", (b: Buffer) => { stdout += b.toString(); });
    child.stderr!.on("data", (b: Buffer) => { stderr = (stderr + b.toString()).slice(-20_000); });
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => child.on("close", (code) => res({ code, stdout, stderr })));
    return { child, resumed, done };
  };
  while (kills.filter((k) => k.killed).length < o.kills) {
    // The first kill lands in the first checkpoint write: the run has no checkpoint yet.
    const kind = kills.length === 0 ? "checkpoint" : kinds[Math.floor(r() * kinds.length)]!;
    const u = r();
    const rowsBefore = rowsIn(metrics);
    const p = start();
    let exited = false;
    void p.done.then(() => { exited = true; });
    const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
    let delayMs = 0;
    if (kind === "startup") {
      delayMs = Math.round(50 + u * 650);
      await sleep(delayMs);
    } else if (kind === "row") {
      delayMs = Math.round(u * 400);
      while (!exited && rowsIn(metrics) <= rowsBefore) await sleep(20);
      await sleep(delayMs);
    } else {
      delayMs = Math.round(u * 30);
      await new Promise<void>((res) => {
        const timer = setInterval(() => { if (exited) { clearInterval(timer); w.close(); res(); } }, 50);
        const w = watch(o.runDir, (_ev, name) => {
          if (name?.startsWith("checkpoint.tmp-")) { clearInterval(timer); w.close(); res(); }
        });
      });
      await sleep(delayMs);
    }
    const killed = !exited && p.child.kill("SIGKILL");
    const result = await p.done;
    kills.push({ kind, delayMs, killed, resumed: p.resumed, rowsBefore });
    o.log?.(`${kind} +${delayMs} ms: ${killed ? "killed" : `exited ${result.code}`}${p.resumed ? " (resumed run)" : ""}, rows before ${rowsBefore}`);
    if (!killed) {
      if (result.code !== 0) return { kills, finalCode: result.code, finalStdout: result.stdout, finalStderr: result.stderr, processes };
      // Finished before the kill: the run is over (a completed run cannot be killed again).
      return { kills, finalCode: 0, finalStdout: result.stdout, finalStderr: result.stderr, processes };
    }
  }
  const last = start();
  const result = await last.done;
  return { kills, finalCode: result.code, finalStdout: result.stdout, finalStderr: result.stderr, processes };
}
