/**
 * Whether the Python worker can run here (worker/.venv or $TCOD_PYTHON with torch, transformers,
 * peft). Under CI a missing worker is an error, elsewhere the suite is skipped with the reason.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { join } from "node:path";
import { defaultWorkerPython } from "../../runtime/backends/openai/worker-process.js";

export const python = defaultWorkerPython();

/** undefined when the worker is available; else why not (and, under CI, throws). */
export function workerMissing(suite: string): string | undefined {
  let missing: string | undefined;
  try {
    // The first import of torch + transformers takes seconds on a quiet machine but minutes on a
    // loaded one (over 120 s was seen with two cores at load 12): a slow import is not a missing one.
    execFileSync(python, ["-c", "import torch, transformers, peft"], { stdio: "pipe", timeout: 600_000 });
  } catch (e) {
    missing = `${python} cannot import torch, transformers and peft (${(e as Error).message.split("\n")[0]}); run worker/ci-install.sh`;
  }
  if (missing && process.env.CI) throw new Error(`CI must run ${suite}: ${missing}`);
  if (missing) console.warn(`skipping ${suite}: ${missing}`);
  return missing;
}

/** `tcod run ARGS…` in `cwd`, its `start: true` workers on the CPU; the finished process. */
export function tcodRunOnCpu(cwd: string, args: string[], timeoutMs: number): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [join(import.meta.dirname, "../../bin/tcod.mjs"), "run", ...args], {
    cwd, encoding: "utf8", timeout: timeoutMs, env: { ...process.env, TCOD_WORKER_ARGS: "--device cpu" },
  });
}
