/**
 * Weights & Biases logging through the wandb Python package: a child process runs wandb_sink.py and
 * takes one JSON line per metrics row (the same scalar names as TensorBoard). Python is
 * TCOD_PYTHON, else python3. The process starts (and imports wandb) before the run, so a missing
 * package fails early; the W&B run itself is created only once the engine has taken the run folder
 * (`begin`), so a refused --resume leaves none. The W&B run id is kept in RUN_DIR/wandb-id so
 * `--resume` continues the same W&B run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { packageFile } from "../../plan/package-files.js";
import { createInterface, type Interface } from "node:readline";
import { UserError } from "../../plan/errors.js";
import type { Scalars } from "./scalars.js";

/** W&B logging cannot start (TC7011). */
export class WandbError extends UserError {
  readonly code = "TC7011";
  constructor(message: string, hint: string, file?: string) {
    super(message, { hint, ...(file !== undefined ? { where: { file } } : {}) });
  }
}

export interface WandbOptions { project: string; runDir: string; name: string; config: unknown; python?: string }

export class WandbSink {
  private started = false;

  private constructor(private readonly o: WandbOptions, private readonly sink: SinkProcess, private readonly id: string | undefined) {}

  /**
   * Starts the sink process and waits until it has imported wandb: a Python without it fails here,
   * before the run starts anything. No W&B run is created and nothing is written yet (see begin).
   */
  static async open(o: WandbOptions): Promise<WandbSink> {
    const id = savedRunId(o.runDir);
    const sink = SinkProcess.start(o.python);
    await sink.expect("loaded");
    return new WandbSink(o, sink, id);
  }

  /**
   * Creates (or, on a resume, continues) the W&B run: called once the engine has taken the run
   * folder, so a resume it refuses leaves no W&B run, no wandb/ folder and no wandb-id behind.
   */
  async begin(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const id = this.id ?? randomBytes(6).toString("hex");
    writeFileSync(join(this.o.runDir, ID_FILE), id + "\n");
    const ready = this.sink.expect("ready");
    this.sink.send({ init: { project: this.o.project, name: this.o.name, id, dir: resolve(this.o.runDir), config: this.o.config } });
    await ready;
  }

  log(step: number, scalars: Scalars): void {
    if (this.started) this.sink.send({ step, scalars });
  }

  /** Finishes the W&B run (syncs it, in online mode), if one was begun, and waits for the sink to exit. */
  async close(): Promise<void> {
    await this.sink.end(this.started ? { finish: true } : undefined);
  }
}

/**
 * The check `--wandb` makes before anything starts, on its own: the sink process starts, imports wandb
 * and is closed again, creating no W&B run and writing nothing; a Python without wandb is the
 * WandbError `tcod run --wandb` reports. A sweep makes it once, before any point starts.
 */
export async function checkWandb(python?: string): Promise<void> {
  const sink = SinkProcess.start(python);
  await sink.expect("loaded");
  await sink.end(undefined);
}

/** The wandb_sink.py process: JSON lines in, one word per answer out. */
class SinkProcess {
  private constructor(readonly python: string, private readonly child: ChildProcess, private readonly lines: Interface, private readonly done: Promise<number>) {}

  static start(python = process.env.TCOD_PYTHON ?? "python3"): SinkProcess {
    const env = { WANDB_SILENT: "true", ...process.env }; // wandb's banner would break the progress bar
    const child = spawn(python, [sinkScript()], { stdio: ["pipe", "pipe", "inherit"], env });
    const done = new Promise<number>((res) => {
      child.on("error", () => res(127));
      child.on("exit", (code) => res(code ?? 1));
    });
    const lines = createInterface({ input: child.stdout! });
    child.stdin!.on("error", () => {});
    return new SinkProcess(python, child, lines, done);
  }

  send(message: unknown): void {
    this.child.stdin!.write(JSON.stringify(message) + "\n");
  }

  /** Ends the sink's input (after `last`, where given) and waits for it to exit. */
  async end(last: unknown): Promise<void> {
    this.child.stdin!.end(last === undefined ? "" : JSON.stringify(last) + "\n");
    await this.done;
  }

  /** The sink's next line must be `word`; anything else (an error line, an exit) is a WandbError. */
  async expect(word: string): Promise<void> {
    const answer = await new Promise<string>((res) => {
      this.lines.once("line", res);
      void this.done.then(() => res(""));
    });
    if (answer === word) return;
    const code = await Promise.race([this.done, new Promise<number>((r) => setTimeout(() => r(-1), 100))]);
    if (code === -1) this.child.kill(); // a sink that answered something else and lives on would keep tcod from exiting
    throw new WandbError(
      `--wandb: W&B logging did not start (${answer || (code === 127 ? `cannot run ${this.python}` : `the W&B sink exited with code ${code}`)})`,
      `Install the wandb package for ${this.python} (pip install wandb), or point TCOD_PYTHON at a Python that has it; WANDB_MODE=offline logs without an account.`,
    );
  }
}

/** RUN_DIR/wandb-id: the W&B run a resume continues. */
const ID_FILE = "wandb-id";

/**
 * A W&B run id as RUN_DIR/wandb-id may hold it (tcod writes 12 hex digits; W&B's own are letters and
 * digits): wandb makes it part of folder names under RUN_DIR/wandb/, so a hand-edited id with a
 * path separator, `..`, a control character or nothing at all is refused rather than passed on.
 */
export const WANDB_ID = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

/**
 * The id RUN_DIR/wandb-id holds (undefined: none yet); one that is no W&B run id is TC7011 naming the
 * file. Read-only: `tcod run --resume` calls it before it writes anything, and the sink again on open.
 */
export function savedRunId(runDir: string): string | undefined {
  const file = join(runDir, ID_FILE);
  if (!existsSync(file)) return undefined;
  let id: string;
  try { id = readFileSync(file, "utf8").trim(); } catch (e) {
    throw new WandbError(`--wandb: ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, `Move ${file} out of the way to log this run to a new W&B run.`, file);
  }
  if (!WANDB_ID.test(id) || id.includes("..")) {
    throw new WandbError(`--wandb: ${file} holds ${JSON.stringify(id.slice(0, 60))}, not a W&B run id (letters, digits, \`_\`, \`-\` and \`.\`, at most 128, no \`..\`)`,
      `Write the id of the W&B run to continue into ${file} (tcod wrote 12 hex digits there), or remove the file to log to a new W&B run.`, file);
  }
  return id;
}

/** wandb_sink.py, shipped under runtime/sinks/ of the package. */
function sinkScript(): string {
  const found = packageFile(join("runtime", "sinks", "wandb_sink.py"));
  if (!found) throw new WandbError("--wandb: the W&B sink script is missing from this installation", "Reinstall tcod.");
  return found;
}
