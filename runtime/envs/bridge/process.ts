/**
 * `BridgeProcess`: a child process that speaks JSON lines over stdio (bridges/tcod_bridges/jsonl.py).
 * One request at a time is the normal use (one episode per env instance), but ids make replies
 * unambiguous. Every call has a timeout: a call that does not answer in time kills the whole process
 * group (the bridge and its JVM) and rejects with a retryable EnvError, so a hung step never hangs a run.
 * A process that exits rejects every pending call with an EnvError carrying the tail of its stderr.
 * A process that breaks the protocol (a reply under another id, a reply line that is not JSON) fails
 * the waiting call at once and is killed, rather than leaving the call to its timeout.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readLines } from "./lines.js";
import { EnvConfigError, EnvError } from "../env.js";
import { preview } from "../agentgym/http.js";

export interface BridgeProcessOptions {
  /** The env kind, for error messages. */
  kind: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Time for the bridge to print its ready line (JVM start-up included). */
  startTimeoutMs: number;
  /** What to install when the command or package is missing. */
  installHint: string;
  /** Longest stdout line accepted (default 64 MiB); a longer one fails the pending calls (retryable) and restarts the bridge. */
  maxLineBytes?: number;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  op: string;
}

interface Reply {
  id?: number | null;
  ok?: boolean;
  result?: unknown;
  error?: { kind: string; message: string; hint?: string | null; retryable?: boolean };
  ready?: boolean;
  fatal?: string;
  hint?: string | null;
  versions?: Record<string, string>;
}

const STDERR_TAIL = 4000;

export class BridgeProcess {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stderrTail = "";
  private exited = false;
  /** Package versions the bridge reported at start. */
  versions: Record<string, string> = {};

  constructor(private readonly opts: BridgeProcessOptions) {}

  get alive(): boolean {
    return this.child !== undefined && !this.exited;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Spawns the bridge and waits for its ready line. */
  start(): Promise<void> {
    const { kind } = this.opts;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (e?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (e) { this.kill(); reject(e); } else resolve();
      };
      const child = spawn(this.opts.command, this.opts.args, {
        env: this.opts.env ?? process.env, cwd: this.opts.cwd, detached: true, stdio: ["pipe", "pipe", "pipe"],
      });
      this.child = child;
      this.exited = false;
      const timer = setTimeout(() => settle(new EnvError(
        `${kind} bridge did not start within ${this.opts.startTimeoutMs / 1000} s (the env's start_timeout_s)${this.tail()}`, kind)), this.opts.startTimeoutMs);
      child.on("error", (e: NodeJS.ErrnoException) => {
        this.exited = true;
        // Not found or not executable will not change on a retry: stop the run with the install hint.
        const why = e.code === "ENOENT" ? "not found" : e.code === "EACCES" ? "not executable" : undefined;
        settle(why
          ? new EnvConfigError(`${kind}: cannot run "${this.opts.command}" (${why})`, kind, this.opts.installHint)
          : new EnvError(`${kind} bridge failed to spawn: ${e.message}`, kind));
        this.failAll(new EnvError(`${kind} bridge failed: ${e.message}`, kind));
      });
      // A write to a bridge that died (EPIPE) must not crash Node: the process is dead from now on,
      // pending calls fail with a retryable EnvError and the next reset starts a fresh bridge.
      child.stdin.on("error", (e: Error) => {
        this.kill();
        this.exited = true;
        this.failAll(new EnvError(`${kind} bridge stopped reading requests (${e.message})${this.tail()}`, kind));
      });
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (d: string) => { this.stderrTail = (this.stderrTail + d).slice(-STDERR_TAIL); });
      child.on("exit", (code, signal) => {
        this.exited = true;
        const why = signal ? `was killed (${signal})` : `exited with code ${code}`;
        settle(this.missingModule() ?? new EnvError(`${kind} bridge ${why} before it was ready${this.tail()}`, kind));
        this.failAll(new EnvError(`${kind} bridge ${why} mid-call${this.tail()}`, kind));
      });
      const maxLine = this.opts.maxLineBytes ?? 64 * 1024 * 1024;
      const overflow = (bytes: number) => {
        const e = new EnvError(`${kind} bridge printed a line of more than ${maxLine} bytes (${bytes} so far); the bridge is restarted`, kind);
        settle(e);
        this.kill();
        this.exited = true;
        this.failAll(e);
      };
      readLines(child.stdout, maxLine, (line) => {
        let msg: Reply;
        try {
          msg = JSON.parse(line) as Reply;
        } catch {
          // A line that opens like a reply is one the bridge could not write as JSON (Python writes a
          // NaN reward as the bare word NaN): fail the waiting call now rather than at its timeout.
          // Anything else is a library's print, kept for the stderr tail.
          if (line.trimStart().startsWith("{") && this.pending.size > 0) {
            return this.desync(`answered ${this.waitingOp()} with a line that is not JSON (${preview(line)})`);
          }
          this.stderrTail = (this.stderrTail + `\n[stdout, not JSON] ${line}`).slice(-STDERR_TAIL);
          return;
        }
        if (msg.fatal !== undefined) {
          settle(new EnvConfigError(`${kind}: ${msg.fatal}`, kind, msg.hint ?? this.opts.installHint));
        } else if (msg.ready) {
          this.versions = msg.versions ?? {};
          settle();
        } else this.onReply(msg);
      }, overflow);
      this.updateRef();
    });
  }

  /** Sends one request; rejects with EnvError on timeout (after killing the process) or exit. */
  call<T>(op: string, args: Record<string, unknown>, timeoutMs: number, timeoutParam?: string): Promise<T> {
    const { kind } = this.opts;
    const child = this.child;
    if (!child || this.exited) {
      return Promise.reject(new EnvError(`${kind} bridge is not running (${op}); reset the env to restart it${this.tail()}`, kind));
    }
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.kill();
        const param = timeoutParam ? ` (the env's ${timeoutParam}; raise it if the env is slow rather than stuck)` : "";
        reject(new EnvError(`${kind} bridge: ${op} did not answer within ${timeoutMs / 1000} s${param}; the instance was killed and restarts on the next reset${this.tail()}`, kind));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer, op });
      this.updateRef();
      child.stdin.write(JSON.stringify({ id, op, args }) + "\n", (e) => {
        if (!e) return;
        this.kill();
        this.exited = true;
        this.settle(id, undefined, new EnvError(`${kind} bridge: cannot send ${op}: ${e.message}; the instance restarts on the next reset`, kind));
      });
    });
  }

  /** Asks the bridge to exit, then kills it if it has not within `graceMs`. */
  async close(graceMs = 3000): Promise<void> {
    const child = this.child;
    if (!child || this.exited) return;
    const gone = new Promise<void>((r) => child.once("exit", () => r()));
    try {
      child.stdin.end(JSON.stringify({ id: 0, op: "close" }) + "\n");
    } catch { /* already closed */ }
    const timer = setTimeout(() => this.kill(), graceMs);
    await gone;
    clearTimeout(timer);
  }

  /** Kills the bridge and everything it started (its process group: the JVM too). */
  kill(): void {
    const child = this.child;
    if (!child || this.exited || child.pid === undefined) return;
    this.exited = true; // dead from now on, even before the exit event arrives
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      try { child.kill("SIGKILL"); } catch { /* gone */ }
    }
  }

  private onReply(msg: Reply): void {
    if (typeof msg.id !== "number") {
      this.stderrTail = (this.stderrTail + `\n[bridge] ${msg.error?.message ?? JSON.stringify(msg)}`).slice(-STDERR_TAIL);
      return;
    }
    if (!this.pending.has(msg.id) && this.pending.size > 0) {
      // A timed-out call kills the bridge, so no late reply can arrive: another id means the bridge
      // lost track of the protocol, and the waiting call would otherwise sit out its whole timeout.
      const [id, p] = [...this.pending.entries()][0]!;
      return this.desync(`answered id ${msg.id}, but the call waiting is ${p.op} (id ${id})`);
    }
    if (msg.ok) return this.settle(msg.id, msg.result);
    const err = msg.error ?? { kind: "env", message: "unknown error" };
    const { kind } = this.opts;
    const message = typeof err.message === "string" ? err.message : `an error without a message (${preview(msg.error)})`;
    const op = this.pending.get(msg.id)?.op ?? "a request";
    // "protocol": the bridge does not understand what this tcod sends (an unknown op: bridges/ older
    // or newer than tcod). No retry helps, and it is the installation's fault, not the curriculum's.
    this.settle(msg.id, undefined, err.kind === "config"
      ? new EnvConfigError(message, kind, err.hint ?? undefined)
      : err.kind === "protocol"
        ? new EnvConfigError(`${kind} bridge refused ${op}: ${message}`, kind,
          "the bridge does not match this tcod: point TCOD_BRIDGES_DIR at the bridges/ folder of the same tcod version (or unset it), or reinstall tcod")
        : new EnvError(message, kind, err.retryable ?? true, typeof err.hint === "string" ? err.hint : undefined));
  }

  private settle(id: number, value: unknown, error?: Error): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    this.updateRef();
    if (error) p.reject(error); else p.resolve(value);
  }

  private failAll(e: Error): void {
    for (const id of [...this.pending.keys()]) this.settle(id, undefined, e);
  }

  /** An idle bridge must not keep Node alive; a pending call must. */
  private updateRef(): void {
    const c = this.child;
    if (!c) return;
    const busy = this.pending.size > 0;
    for (const h of [c, c.stdout, c.stderr, c.stdin] as unknown as { ref?: () => void; unref?: () => void }[]) {
      if (busy) h.ref?.(); else h.unref?.();
    }
  }

  /** The bridge broke the protocol: fail every waiting call (retryable) and kill it; the next reset restarts it. */
  private desync(what: string): void {
    const { kind } = this.opts;
    this.kill();
    this.failAll(new EnvError(`${kind} bridge ${what}; the bridge is restarted on the next reset${this.tail()}`, kind));
  }

  private waitingOp(): string {
    return [...this.pending.values()][0]?.op ?? "a call";
  }

  /**
   * A bridge that died before ready because Python could not import a module (the bridge module
   * itself: PYTHONPATH lacks bridges/; or a dependency of it): no retry will find it.
   */
  private missingModule(): EnvConfigError | undefined {
    const m = /ModuleNotFoundError: No module named '([^']+)'|No module named ([\w.]+)/.exec(this.stderrTail);
    if (!m) return undefined;
    const module = m[1] ?? m[2]!;
    const { kind } = this.opts;
    return new EnvConfigError(`${kind} bridge cannot start: ${this.opts.command}: No module named '${module}'`, kind,
      module.startsWith("tcod_bridges")
        ? "set TCOD_BRIDGES_DIR to the bridges/ folder of the tcod source tree (the folder that holds tcod_bridges/), or reinstall tcod"
        : this.opts.installHint);
  }

  private tail(): string {
    const t = this.stderrTail.trim();
    return t ? `; stderr: …${t.slice(-800)}` : "";
  }
}
