/**
 * Start and stop a tcod worker process (`python -m tcod_worker …`) for a run or a test. Waits for the
 * worker's one stdout line `tcod-worker listening on http://HOST:PORT …` (port 0 = an ephemeral
 * port), and fails with the worker's own stderr when it exits first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { isIP } from "node:net";
import { delimiter, dirname, join, resolve } from "node:path";
import { packageFile } from "../../../plan/package-files.js";
import { BackendError } from "../backend.js";

/**
 * The worker/ folder tcod ships: found from this module's own location (source or bundled dist/),
 * never from the current directory, so `tcod run` only ever starts the worker of the installed tcod.
 */
export function packageWorkerDir(from?: string): string {
  const init = packageFile(join("worker", "tcod_worker", "__init__.py"), from);
  if (init) return dirname(dirname(init));
  throw new BackendError("cannot find the tcod worker (worker/tcod_worker) in the tcod installation; the install is incomplete", "worker", false,
    "Reinstall tcod; the worker ships in its worker/ folder.");
}

export interface WorkerProcessOptions {
  /** Arguments after `-m tcod_worker` (e.g. ["--model", "config:tiny", "--device", "cpu"]); `--port 0` is added unless given. */
  args: string[];
  /** Processes (GPUs) of the worker, under torchrun when > 1 (default $TCOD_WORKER_NPROC, else 1). */
  nproc?: number;
  /** The python to run (default: $TCOD_PYTHON, else the package's worker/.venv/bin/python where it exists, else python3). */
  python?: string;
  /** The worker/ directory (default: the one tcod ships, packageWorkerDir()), put on PYTHONPATH. */
  workerDir?: string;
  /** How long to wait for the listening line (default 180 s: the first torch import is slow). */
  startupTimeoutMs?: number;
  env?: Record<string, string>;
  /** Run the worker in its own process group, so a terminal Ctrl-C reaches only tcod, which checkpoints and then stops it. */
  detached?: boolean;
}

export interface WorkerProcess {
  url: string;
  process: ChildProcess;
  /** SIGTERM, then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/**
 * The python that runs the worker: $TCOD_PYTHON when the user set it (explicit configuration), else
 * the virtual environment beside the shipped worker (worker/ci-install.sh makes it), else python3.
 */
export function defaultWorkerPython(workerDir = packageWorkerDir()): string {
  if (process.env.TCOD_PYTHON) return process.env.TCOD_PYTHON;
  const venv = join(workerDir, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

export function startWorker(o: WorkerProcessOptions): Promise<WorkerProcess> {
  const workerDir = resolve(o.workerDir ?? packageWorkerDir());
  const python = o.python ?? defaultWorkerPython(workerDir);
  // Several GPUs: the worker runs under torchrun, one process a GPU (DDP, or FSDP2 for big models).
  const nproc = o.nproc ?? Number(process.env.TCOD_WORKER_NPROC ?? "1");
  if (!Number.isInteger(nproc) || nproc < 1) throw new BackendError(`TCOD_WORKER_NPROC must be a whole number ≥ 1, got '${process.env.TCOD_WORKER_NPROC}'`, "worker", false, "Set it to the number of GPUs the worker should use, e.g. TCOD_WORKER_NPROC=2.");
  const launcher = nproc > 1 ? ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", String(nproc)] : [];
  // --error-format json: a refusal to start comes as one JSON line, reported at the file it names (workerRefusal).
  const args = [...launcher, "-m", "tcod_worker", ...(o.args.includes("--port") ? [] : ["--port", "0"]), "--error-format", "json", ...o.args];
  const env = { ...process.env, PYTHONPATH: [workerDir, process.env.PYTHONPATH].filter(Boolean).join(delimiter), PYTHONUNBUFFERED: "1", ...o.env };
  const child = spawn(python, args, { env, stdio: ["ignore", "pipe", "pipe"], ...(o.detached ? { detached: true } : {}) });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => { stderr = (stderr + c.toString()).slice(-4000); });
  const command = `${python} ${args.join(" ")}`;

  return new Promise((resolveP, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new BackendError(`the tcod worker did not start within ${o.startupTimeoutMs ?? 180_000} ms (${command})\n${stderr}`, "worker", false,
        "Run the command by hand to see what it waits for; the first import of torch can be slow on a cold disk."));
    }, o.startupTimeoutMs ?? 180_000);
    const onData = (c: Buffer): void => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.stdout!.resume();
      const url = m[1]!;
      resolveP({ url, process: child, stop: () => stopChild(child) });
    };
    child.stdout!.on("data", onData);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(new BackendError(`cannot start the tcod worker (${command}): ${e.message}`, "worker", false,
        "Install the worker (worker/ci-install.sh) or point TCOD_PYTHON at a python that has torch, transformers and peft."));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(workerRefusal(stderr) ?? new BackendError(`the tcod worker exited (${signal ?? `code ${code}`}) before listening (${command}):\n${stderr.trim()}`, "worker", false,
        "Read the worker's message above; `python -m tcod_worker --help` lists its options."));
    });
  });
}

/**
 * The worker's refusal to start (`--error-format json`: a line `{"tcod_worker_error": {message, hint,
 * file, line, column}}` on its stderr — a bad model config, a folder that is no model) as a coded
 * error at the file it names; undefined when its stderr holds none (it died otherwise).
 */
export function workerRefusal(stderr: string): BackendError | undefined {
  for (const line of stderr.split("\n").reverse()) {
    if (!line.startsWith('{"tcod_worker_error":')) continue;
    let e: unknown;
    try { e = (JSON.parse(line) as { tcod_worker_error: unknown }).tcod_worker_error; } catch { continue; }
    if (typeof e !== "object" || e === null || typeof (e as { message?: unknown }).message !== "string") continue;
    const { message, hint, file, line: at, column } = e as { message: string; hint?: unknown; file?: unknown; line?: unknown; column?: unknown };
    const where = typeof file === "string" && file
      ? { file, ...(Number.isInteger(at) ? { line: at as number, ...(Number.isInteger(column) ? { column: column as number } : {}) } : {}) }
      : undefined;
    return new BackendError(message, "worker", false, typeof hint === "string" ? hint : undefined, where);
  }
  return undefined;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => { clearTimeout(kill); r(); });
    child.kill("SIGTERM");
  });
}

/** 127.0.0.0/8, ::1 and localhost: the only hosts a worker may listen on without a token. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1";
  return false;
}

/**
 * Start the worker a `kind: "worker", start: true` backend spec asks for: it listens on the spec's
 * host and port, serves `student` as --model and, where given, `teacher` beside it (one process, so
 * the exact reverse-KL loss is available). Extra flags (--lora-rank, --device, --vocab…) pass through.
 * It is protected by a bearer token: the one the spec's tokenEnv names, else a fresh random one for
 * this run (returned, for the run's clients). A host beyond loopback without tokenEnv is refused. Its
 * /save and /load are confined to `roots` (the run folder).
 */
export function startWorkerForSpec(spec: { url: string; tokenEnv?: string }, o: { student: string; teacher?: string; extraArgs?: string[]; env?: Record<string, string>; roots?: string[] } & Pick<WorkerProcessOptions, "python" | "workerDir" | "startupTimeoutMs" | "detached">): Promise<WorkerProcess & { token: string }> {
  const u = new URL(spec.url);
  if (u.protocol !== "http:") throw new BackendError(`cannot start a worker for ${spec.url}: the worker serves plain http`, spec.url, false, "Use an http:// URL for a worker the run starts itself.");
  const given = spec.tokenEnv ? process.env[spec.tokenEnv] : undefined;
  if (spec.tokenEnv && !given) {
    throw new BackendError(`cannot start a worker for ${spec.url}: environment variable ${spec.tokenEnv} (named by tokenEnv) is not set`, spec.url, false,
      `Export ${spec.tokenEnv}=<a long random token> before \`tcod run\`.`);
  }
  if (!given && !isLoopbackHost(u.hostname)) {
    throw new BackendError(`refusing to start a worker on ${u.hostname} without a token: anyone who can reach that address could train, save and load the model`, spec.url, false,
      "Use http://127.0.0.1:PORT for a worker on this machine, or give the model worker(url, start: true, token_env: \"NAME\") with NAME set to a long random token.");
  }
  const token = given ?? randomBytes(32).toString("hex");
  const roots = (o.roots ?? []).flatMap((r) => ["--root", resolve(r)]);
  const args = ["--model", o.student, "--host", u.hostname.replace(/^\[|\]$/g, ""), "--port", u.port || "80", ...(o.teacher ? ["--teacher", o.teacher] : []), ...roots, ...(o.extraArgs ?? [])];
  return startWorker({ args, python: o.python, workerDir: o.workerDir, startupTimeoutMs: o.startupTimeoutMs, detached: o.detached, env: { ...o.env, TCOD_WORKER_TOKEN: token } })
    .then((w) => ({ ...w, token }));
}
