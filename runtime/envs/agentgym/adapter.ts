/**
 * `AgentGymEnv`: the shared life cycle of an AgentGym env-server client (reference §1). One adapter
 * instance owns one server-side env id: POST /create on first use, /reset per episode, /step, and
 * /close where the server has it. A retryable failure (timeout, unreachable server, an `error` key
 * such as a lost id after a server restart) forgets the id, so the next reset creates a fresh env
 * server-side: the instance restarts itself and the engine retries the episode.
 *
 * Env ids are unique per server among the live instances of this process (`holders`). A /create
 * that answers an id another instance holds — a server restarted since (its ids count from 0 again)
 * or one that hands out ids twice — means that instance's env is gone: it is told so and its next
 * call fails (retryable) before reaching the server, so two episodes never step one env.
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

/** Server base URL → env id → the instance holding it. */
const holders = new Map<string, Map<number, AgentGymEnv>>();

export abstract class AgentGymEnv implements EnvAdapter {
  protected envId: number | undefined;
  private inEpisode = false;
  /** Why this instance's env id was taken from it (another instance was handed the same id). */
  private lost: string | undefined;
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
      if (this.lost !== undefined) this.drop(); // between episodes: nothing to lose, take a fresh env
      if (this.envId === undefined) {
        this.hold(await this.create());
        this.stats.creates++;
      }
      return this.resetOn(this.envId!, index, task);
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
    const r = await this.guard(() => { this.checkHeld(); return this.stepOn(id, action); });
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
    const id = this.lost === undefined ? this.envId : undefined; // a lost id is another instance's now: never /close it
    this.drop();
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
        this.drop();
        this.inEpisode = false;
      }
      throw e;
    }
  }

  /** Takes `id` from /create; an instance that held it loses it (its next call fails). */
  private hold(id: number): void {
    let ids = holders.get(this.http.base);
    if (!ids) holders.set(this.http.base, ids = new Map());
    const other = ids.get(id);
    if (other && other !== this) {
      other.lost = `${this.kind} server ${this.http.base}: /create handed env id ${id} to another episode while this one held it `
        + "(the server restarted, or it hands out ids twice); this episode's env is gone and the instance starts over";
    }
    ids.set(id, this);
    this.envId = id;
    this.lost = undefined;
  }

  /** Forgets the env id (and that it was lost); the next reset creates a fresh env. */
  private drop(): void {
    const ids = holders.get(this.http.base);
    if (this.envId !== undefined && ids?.get(this.envId) === this) ids.delete(this.envId);
    if (ids?.size === 0) holders.delete(this.http.base);
    this.envId = undefined;
    this.lost = undefined;
  }

  /** A retryable EnvError (so guard drops the id) when another instance was handed this one's id. */
  private checkHeld(): void {
    if (this.lost !== undefined) throw new EnvError(this.lost, this.kind);
  }
}
