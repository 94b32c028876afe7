/**
 * Weights & Biases logging through the wandb Python package: a child process runs wandb_sink.py and
 * takes one JSON line per metrics row (the same scalar names as TensorBoard). Python is
 * TCOD_PYTHON, else python3. The W&B run id is kept in RUN_DIR/wandb-id so `--resume` continues the
 * same W&B run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { packageFile } from "../../plan/package-files.js";
import { createInterface } from "node:readline";
import { UserError } from "../../plan/errors.js";
import type { Scalars } from "./scalars.js";

/** W&B logging cannot start (TC7011). */
export class WandbError extends UserError {
  readonly code = "TC7011";
  constructor(message: string, hint: string) {
    super(message, { hint });
  }
}

export interface WandbOptions { project: string; runDir: string; name: string; config: unknown; python?: string }

export class WandbSink {
  private constructor(private child: ChildProcess, private done: Promise<number>) {}

  static async start(o: WandbOptions): Promise<WandbSink> {
    const python = o.python ?? process.env.TCOD_PYTHON ?? "python3";
    const idFile = join(o.runDir, "wandb-id");
    const id = existsSync(idFile) ? readFileSync(idFile, "utf8").trim() : randomBytes(6).toString("hex");
    writeFileSync(idFile, id + "\n");
    const env = { WANDB_SILENT: "true", ...process.env }; // wandb's banner would break the progress bar
    const child = spawn(python, [sinkScript()], { stdio: ["pipe", "pipe", "inherit"], env });
    const done = new Promise<number>((res) => {
      child.on("error", () => res(127));
      child.on("exit", (code) => res(code ?? 1));
    });
    const lines = createInterface({ input: child.stdout! });
    const first = new Promise<string>((res) => {
      lines.once("line", res);
      done.then(() => res(""));
    });
    child.stdin!.on("error", () => {});
    child.stdin!.write(JSON.stringify({ init: { project: o.project, name: o.name, id, dir: resolve(o.runDir), config: o.config } }) + "\n");
    const answer = await first;
    if (answer !== "ready") {
      const code = await Promise.race([done, new Promise<number>((r) => setTimeout(() => r(-1), 100))]);
      throw new WandbError(
        `--wandb: W&B logging did not start (${answer || (code === 127 ? `cannot run ${python}` : `the W&B sink exited with code ${code}`)})`,
        `Install the wandb package for ${python} (pip install wandb), or point TCOD_PYTHON at a Python that has it; WANDB_MODE=offline logs without an account.`,
      );
    }
    return new WandbSink(child, done);
  }

  log(step: number, scalars: Scalars): void {
    this.child.stdin!.write(JSON.stringify({ step, scalars }) + "\n");
  }

  /** Finishes the W&B run (syncs it, in online mode) and waits for the sink to exit. */
  async close(): Promise<void> {
    this.child.stdin!.end(JSON.stringify({ finish: true }) + "\n");
    await this.done;
  }
}

/** wandb_sink.py, shipped under runtime/sinks/ of the package. */
function sinkScript(): string {
  const found = packageFile(join("runtime", "sinks", "wandb_sink.py"));
  if (!found) throw new WandbError("--wandb: the W&B sink script is missing from this installation", "Reinstall tcod.");
  return found;
}
