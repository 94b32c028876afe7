/**
 * `BridgeEnv`: an `EnvAdapter` over a JSON-lines bridge process (ScienceWorld, TextWorldExpress).
 * The bridge ops are tasks / reset / step / gold / optimal / ping (bridges/tcod_bridges/*_bridge.py).
 *
 * Answers are checked against schemas.ts (a malformed one is a retryable EnvError naming the op and
 * field). Faults: a dead or killed bridge (JVM crash, step timeout) makes the current call reject with a
 * retryable EnvError; the next reset() starts a fresh process (the instance restarts itself), so the
 * engine's drop-and-retry of the episode needs nothing else. Unknown tasks and splits are
 * EnvConfigErrors with the valid values in the hint.
 */
import { EnvConfigError, EnvError, type EnvAdapter, type Observation, type StepResult, type TaskRef } from "../env.js";
import { BridgeProcess, type BridgeProcessOptions } from "./process.js";
import { Actions, parseResult, ResetResult, StepResult as StepAnswer, TaskIds } from "./schemas.js";

export interface BridgeTimeouts {
  /** Bridge start (JVM launch). */
  startMs: number;
  /** reset / tasks / gold (task loads; ScienceWorld gold-path generation takes seconds). */
  resetMs: number;
  /** One step, optimal or ping. */
  stepMs: number;
}

export const DEFAULT_TIMEOUTS: BridgeTimeouts = { startMs: 120_000, resetMs: 180_000, stepMs: 30_000 };

export interface BridgeEnvStats {
  /** Bridge processes started (1 + restarts). */
  starts: number;
  steps: number;
  /** Steps the env answered with its invalid-action feedback. */
  invalidActions: number;
  episodes: number;
}

/**
 * Tasks from a task file instead of the package's split getters: the file defines its own split
 * (TCOD's ScienceWorld taskset splits by task name, not by the package's variation blocks), so the
 * bridge does not check a variation's split.
 */
export interface FixedTasks {
  path: string;
  split: string;
  tasks: TaskRef[];
}

export class BridgeEnv implements EnvAdapter {
  private proc: BridgeProcess | undefined;
  private starting: Promise<BridgeProcess> | undefined;
  private inEpisode = false;
  /** The last step answered done: the bridge's episode is over until the next reset. */
  private ended = false;
  /** The oracle asked once: later resets ask the bridge for gold paths up front. */
  private wantsGold = false;
  readonly stats: BridgeEnvStats = { starts: 0, steps: 0, invalidActions: 0, episodes: 0 };

  constructor(
    readonly kind: string,
    private readonly processOptions: Omit<BridgeProcessOptions, "startTimeoutMs">,
    readonly timeouts: BridgeTimeouts = DEFAULT_TIMEOUTS,
    /** Extra arguments of every `tasks` call (e.g. ScienceWorld's task-name filter). */
    private readonly taskArgs: Record<string, unknown> = {},
    private readonly fixed?: FixedTasks,
  ) {}

  /** The running bridge's pid (tests kill it to simulate a JVM crash). */
  get pid(): number | undefined {
    return this.proc?.alive ? this.proc.pid : undefined;
  }

  async tasks(split: string): Promise<TaskRef[]> {
    if (this.fixed) {
      if (split !== this.fixed.split) {
        throw new EnvConfigError(`${this.kind}: this env reads split "${this.fixed.split}" from ${this.fixed.path}; it has no split "${split}"`,
          this.kind, "declare another env (its own task_file) for each split you evaluate on");
      }
      return this.fixed.tasks.map((t) => ({ ...t, split, ...(t.actions ? { actions: t.actions.slice() } : {}) }));
    }
    const ids = parseResult(this.kind, "tasks", TaskIds, await this.call("tasks", { ...this.taskArgs, split }, this.timeouts.resetMs));
    return ids.map((id) => ({ id, split }));
  }

  async reset(task: TaskRef): Promise<Observation> {
    this.inEpisode = false;
    const r = parseResult(this.kind, "reset", ResetResult,
      await this.call("reset", { task: task.id, split: this.fixed ? null : task.split, gold: this.wantsGold }, this.timeouts.resetMs));
    this.inEpisode = true;
    this.ended = false;
    this.stats.episodes++;
    return { task: r.task, text: r.text, admissible: r.admissible, ...compactActions(r) };
  }

  async step(action: string): Promise<StepResult> {
    this.requireEpisode("step");
    if (this.ended) {
      throw new EnvError(`${this.kind}: step() after the episode ended (the bridge's last answer said done: true); reset a task first`, this.kind, false,
        "An episode ends at the first answer with done: true; reset the next task before stepping again.");
    }
    let answer: unknown;
    try {
      answer = await this.call("step", { action }, this.timeouts.stepMs);
    } catch (e) {
      // The bridge refused the step for good (its episode had ended on its side — its simulator's step
      // limit, a gold path's replay — while its last answer said done: false): an env fault, not a bug.
      if (e instanceof EnvError && !e.retryable && e.hint === undefined) {
        throw new EnvError(`${this.kind} bridge refused step ${JSON.stringify(action)} of an episode its last answer left running: ${e.message}`, this.kind, false, BRIDGE_REFUSED_STEP_HINT);
      }
      throw e;
    }
    const r = parseResult(this.kind, "step", StepAnswer, answer);
    if (r.done) this.ended = true;
    this.stats.steps++;
    if (r.invalid) this.stats.invalidActions++;
    return { observation: r.observation, reward: r.reward, done: r.done, won: r.won, ...(r.score !== undefined ? { score: r.score } : {}), admissible: r.admissible, ...compactActions(r) };
  }

  /** The task file's `actions` where it has them, else the package's gold path. */
  async expertPath(task: TaskRef): Promise<string[]> {
    if (task.actions) return task.actions.slice();
    return parseResult(this.kind, "gold", Actions, await this.call("gold", { task: task.id, split: this.fixed ? null : task.split }, this.timeouts.resetMs));
  }

  /**
   * The next gold action while the episode has followed the gold path exactly; [] once it has left
   * it (the embedded oracle then spreads its mass evenly over the admissible actions).
   */
  async optimalActions(): Promise<string[]> {
    this.requireEpisode("optimalActions");
    this.wantsGold = true;
    return parseResult(this.kind, "optimal", Actions, await this.call("optimal", {}, this.timeouts.resetMs));
  }

  /** True when the bridge answers a ping in time (a dead or hung bridge is killed: false). */
  async health(): Promise<boolean> {
    if (!this.proc?.alive) return false;
    try {
      await this.proc.call("ping", {}, this.timeouts.stepMs);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    this.inEpisode = false;
    if (p) await p.close();
  }

  private requireEpisode(what: string): void {
    if (!this.inEpisode) {
      throw new EnvError(`${this.kind}: ${what}() before a successful reset(); reset a task first`, this.kind, false);
    }
  }

  private async call(op: string, args: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    const proc = await this.running();
    try {
      return await proc.call<unknown>(op, args, timeoutMs, op === "step" ? "step_timeout_s" : "reset_timeout_s");
    } catch (e) {
      if (!proc.alive) this.inEpisode = false; // the episode died with its process
      throw e;
    }
  }

  /** The live bridge, (re)started when there is none or the last one died. */
  private async running(): Promise<BridgeProcess> {
    if (this.proc?.alive) return this.proc;
    if (!this.starting) {
      this.inEpisode = false;
      const proc = new BridgeProcess({ ...this.processOptions, startTimeoutMs: this.timeouts.startMs });
      this.stats.starts++;
      this.starting = proc.start().then(() => { this.proc = proc; return proc; }).finally(() => { this.starting = undefined; });
    }
    return this.starting;
  }
}

/** The hint of a step the bridge refused for good without a hint of its own (an env error's `hint` in the protocol). */
export const BRIDGE_REFUSED_STEP_HINT = "The bridge and tcod disagree about whether the episode is over: the bridge ended it on its side (e.g. at its simulator's own step limit) without answering done: true. Check the bridge's stderr, and that TCOD_BRIDGES_DIR (if set) is the bridges/ folder of this tcod version; the run keeps its checkpoint for --resume.";

/** The compact action list where the bridge sends one (ScienceWorld: `actionTemplates`, `objects`). */
function compactActions(r: { actionTemplates?: unknown; objects?: unknown }): { actionTemplates?: string[]; objects?: string[] } {
  return Array.isArray(r.actionTemplates) && Array.isArray(r.objects)
    ? { actionTemplates: r.actionTemplates.map(String), objects: r.objects.map(String) }
    : {};
}
