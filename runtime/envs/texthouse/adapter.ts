/**
 * `TexthouseEnv`: the `EnvAdapter` of the built-in texthouse environment, a thin async wrapper over
 * `TexthouseWorld` (one episode at a time per instance; create one instance per parallel env).
 */
import { EnvConfigError, EnvError, type EnvAdapter, type Observation, type StepResult, type TaskRef } from "../env.js";
import { SPLITS, SPLIT_SIZES, generateTask, isSplit, parseTaskId, taskId } from "./generate.js";
import type { WorldSpec } from "./model.js";
import type { PlaceGrammar } from "./rules.js";
import { TEXTHOUSE_MAX_TURNS, TexthouseWorld } from "./world.js";

export interface TexthouseEnvOptions {
  /** Episode turn limit (ALFWorld Hmax). Default 30. */
  maxTurns?: number;
  /** Placing command spelling: "put" (ALFWorld 0.3.x, default) or "move" (ALFWorld ≥ 0.4). */
  grammar?: PlaceGrammar;
  /**
   * Who backs `optimalActions()` and `expertPath()` (the embedded oracle's optimal set, SFT demos,
   * b2f prefixes): "observable" (default; observable-expert.ts, acts on what the agent has seen) or
   * "privileged" (the planner, which sees inside closed receptacles).
   */
  expert?: TexthouseExpert;
}

export type TexthouseExpert = "observable" | "privileged";
export const TEXTHOUSE_EXPERTS: readonly TexthouseExpert[] = ["observable", "privileged"];

const KIND = "texthouse";
const specCache = new Map<string, WorldSpec>();
const SPEC_CACHE_LIMIT = 256;
/**
 * Expert paths by expert, grammar, turn limit and task id: a path is a pure function of them, and
 * SFT asks for the same train tasks every epoch (planning is ~2/3 of a clean demonstration's env time).
 */
const pathCache = new Map<string, readonly string[]>();
const PATH_CACHE_LIMIT = 8192;

/** The spec of a task id, generated on first use and memoized (hard tasks take a few ms to select). */
function specOf(id: string): WorldSpec {
  let spec = specCache.get(id);
  if (!spec) {
    const { split, index } = parseTaskId(id);
    spec = generateTask(split, index);
    if (specCache.size >= SPEC_CACHE_LIMIT) specCache.clear();
    specCache.set(id, spec);
  }
  return spec;
}

export class TexthouseEnv implements EnvAdapter {
  readonly kind = KIND;
  readonly maxTurns: number;
  readonly grammar: PlaceGrammar;
  readonly expert: TexthouseExpert;
  private world: TexthouseWorld | undefined;

  constructor(options: TexthouseEnvOptions = {}) {
    this.maxTurns = options.maxTurns ?? TEXTHOUSE_MAX_TURNS;
    this.grammar = options.grammar ?? "put";
    this.expert = options.expert ?? "observable";
    if (this.grammar !== "put" && this.grammar !== "move") {
      throw new EnvConfigError(`texthouse has no grammar "${String(this.grammar)}"`, KIND,
        `Use texthouse(grammar: "put") (put O in/on R, ALFWorld 0.3; the default) or "move" (move O to R, ALFWorld ≥ 0.4).`);
    }
    if (!TEXTHOUSE_EXPERTS.includes(this.expert)) {
      throw new EnvConfigError(`texthouse has no expert "${String(this.expert)}"`, KIND,
        `Use texthouse(expert: "observable") (acts on what the agent has seen; the default) or "privileged" (the planner that sees inside closed receptacles).`);
    }
  }

  async tasks(split: string): Promise<TaskRef[]> {
    if (!isSplit(split)) {
      throw new EnvConfigError(`texthouse has no split "${split}"`, KIND, `Use one of: ${SPLITS.join(", ")}.`);
    }
    return Array.from({ length: SPLIT_SIZES[split] }, (_, i) => ({ id: taskId(split, i), split }));
  }

  /** The synchronous world of the current episode (for in-process callers that want no promises). */
  get current(): TexthouseWorld | undefined { return this.world; }

  async reset(task: TaskRef): Promise<Observation> {
    this.world = new TexthouseWorld(this.resolve(task), { maxTurns: this.maxTurns, grammar: this.grammar });
    return this.world.reset();
  }

  async step(action: string): Promise<StepResult> {
    const world = this.world;
    if (!world) throw new EnvError("texthouse: step() before reset(); reset a task first", KIND, false);
    if (world.done) {
      throw new EnvError(`texthouse ${world.model.spec.id}: step() after the episode ended; reset a task first`, KIND, false);
    }
    return world.step(action);
  }

  async expertPath(task: TaskRef): Promise<string[]> {
    const spec = this.resolve(task);
    const key = `${this.expert}|${this.grammar}|${this.maxTurns}|${task.id}`;
    let path = pathCache.get(key);
    if (!path) {
      const world = new TexthouseWorld(spec, { maxTurns: this.maxTurns, grammar: this.grammar });
      path = this.expert === "observable" ? world.observableExpertPath() : world.expertPath();
      if (pathCache.size >= PATH_CACHE_LIMIT) pathCache.clear();
      pathCache.set(key, path);
    }
    return path.slice();
  }

  async optimalActions(): Promise<string[]> {
    if (!this.world) throw new EnvError("texthouse: optimalActions() before reset(); reset a task first", KIND, false);
    return this.expert === "observable" ? this.world.observableOptimal() : this.world.optimal();
  }

  async expertAction(): Promise<string> {
    if (!this.world) throw new EnvError("texthouse: expertAction() before reset(); reset a task first", KIND, false);
    if (this.expert === "observable") return this.world.observableDecision().action;
    return this.world.optimal()[0] ?? "";
  }

  /** `take`s of goal-type objects the receptacle at hand does not hold (TexthouseWorld.guessedTakes). */
  async guessedActions(): Promise<string[]> {
    if (!this.world) throw new EnvError("texthouse: guessedActions() before reset(); reset a task first", KIND, false);
    return this.world.guessedTakes();
  }

  /** Length of a shortest plan of the privileged planner from the current state (optimal-length statistics). */
  async optimalLength(): Promise<number> {
    if (!this.world) throw new EnvError("texthouse: optimalLength() before reset(); reset a task first", KIND, false);
    return this.world.optimalLength();
  }

  async close(): Promise<void> {
    this.world = undefined;
  }

  private resolve(task: TaskRef): WorldSpec {
    let parsed: ReturnType<typeof parseTaskId>;
    try {
      parsed = parseTaskId(task.id);
    } catch (e) {
      throw new EnvConfigError((e as Error).message, KIND, `List valid ids with tasks(split); splits: ${SPLITS.join(", ")}.`);
    }
    if (parsed.split !== task.split) {
      throw new EnvConfigError(`texthouse task "${task.id}" belongs to split "${parsed.split}", not "${task.split}"`, KIND,
        "Take task refs from tasks(split) unchanged.");
    }
    return specOf(task.id);
  }
}
