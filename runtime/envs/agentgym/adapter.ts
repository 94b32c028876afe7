/**
 * `AgentGymEnv`: the shared life cycle of an AgentGym env-server client (reference §1). One adapter
 * instance owns one server-side env id: POST /create on first use, /reset per episode, /step, and
 * /close where the server has it. A retryable failure (timeout, unreachable server, an `error` key
 * such as a lost id after a server restart) forgets the id, so the next reset creates a fresh env
 * server-side: the instance restarts itself and the engine retries the episode.
 */
import { EnvError, type EnvAdapter, type Observation, type StepResult, type TaskRef } from "../env.js";
import { AgentGymHttp } from "./http.js";
import type { TaskSource } from "./tasks.js";

export interface AgentGymTimeouts {
  /** /create and /reset (ALFWorld and SciWorld load games; a JVM starts on SciWorld /create). */
  resetMs: number;
  stepMs: number;
}

export const AGENTGYM_DEFAULT_TIMEOUTS: AgentGymTimeouts = { resetMs: 120_000, stepMs: 60_000 };

export abstract class AgentGymEnv implements EnvAdapter {
  protected envId: number | undefined;
  private inEpisode = false;
  readonly stats = { creates: 0, episodes: 0, steps: 0 };

  constructor(
    readonly kind: string,
    protected readonly http: AgentGymHttp,
    protected readonly source: TaskSource,
    protected readonly timeouts: AgentGymTimeouts,
  ) {}

  /** POST /create → the server's env id. */
  protected abstract create(): Promise<number>;
  protected abstract resetOn(id: number, index: number, task: TaskRef): Promise<Observation>;
  protected abstract stepOn(id: number, action: string): Promise<StepResult>;
  /** POST /close where the server has it. */
  protected closeOn?(id: number): Promise<void>;

  async tasks(split: string): Promise<TaskRef[]> {
    return this.source.tasks(split);
  }

  async reset(task: TaskRef): Promise<Observation> {
    this.inEpisode = false;
    const index = this.source.index(task);
    const obs = await this.guard(async () => {
      if (this.envId === undefined) {
        this.envId = await this.create();
        this.stats.creates++;
      }
      return this.resetOn(this.envId, index, task);
    });
    this.inEpisode = true;
    this.stats.episodes++;
    return obs;
  }

  async step(action: string): Promise<StepResult> {
    if (!this.inEpisode || this.envId === undefined) {
      throw new EnvError(`${this.kind}: step() before a successful reset(); reset a task first`, this.kind, false);
    }
    const id = this.envId;
    const r = await this.guard(() => this.stepOn(id, action));
    this.stats.steps++;
    if (r.done) this.inEpisode = false;
    return r;
  }

  /** The task file's `actions` for the task; [] where it has none (b2f then plays a full episode, as TCOD does). */
  async expertPath(task: TaskRef): Promise<string[]> {
    return task.actions?.slice() ?? this.source.actions(task.id) ?? [];
  }

  /** True when the server answers GET / (its hello route). */
  async health(): Promise<boolean> {
    try {
      await this.http.get("/", {}, this.timeouts.stepMs);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    const id = this.envId;
    this.envId = undefined;
    this.inEpisode = false;
    if (id !== undefined && this.closeOn) {
      try {
        await this.closeOn(id);
      } catch { /* the server may be gone already; nothing left to free */ }
    }
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof EnvError && e.retryable) {
        this.envId = undefined;
        this.inEpisode = false;
      }
      throw e;
    }
  }
}
