/**
 * The environment-adapter interface: every environment (built-in texthouse, ScienceWorld bridge,
 * TextWorldExpress bridge, AgentGym HTTP servers) implements it, one implementation per folder.
 */
import { UserError } from "../../plan/errors.js";

export interface TaskRef {
  /** Stable task id within the env (a game file, a task name + variation, a session id…). */
  id: string;
  split: string;
  /** Pre-recorded expert actions (Trinity taskset `actions`), where the task file carries them. */
  actions?: string[];
}

export interface Observation {
  /** The goal, as the prompt template's {task}. */
  task: string;
  /** The first observation text. */
  text: string;
  admissible: string[];
  /** ScienceWorld's compact action list (the official TCOD ScienceWorld prompt): the action templates
   *  without `help`, and the objects in view. Only envs that supply it set it (plan/env-semantics.ts). */
  actionTemplates?: string[];
  objects?: string[];
}

export interface StepResult {
  observation: string;
  /** Reward of this step as the env gives it. */
  reward: number;
  done: boolean;
  /** Task success (ALFWorld won, ScienceWorld score = 100, WebShop reward = 1). */
  won: boolean;
  /** Env score where it has one (ScienceWorld 0–100; negative = failed). */
  score?: number;
  admissible: string[];
  /** As Observation's. */
  actionTemplates?: string[];
  objects?: string[];
}

export interface EnvAdapter {
  readonly kind: string;
  /** Task ids of a split, in a fixed order. */
  tasks(split: string): Promise<TaskRef[]>;
  reset(task: TaskRef): Promise<Observation>;
  step(action: string): Promise<StepResult>;
  /** A whole expert action sequence for a task (b2f prefixes, SFT demos), where the env has one. */
  expertPath?(task: TaskRef): Promise<string[]>;
  /** Optimal next actions in the current state (oracle teacher), where the env has a planner. */
  optimalActions?(): Promise<string[]>;
  /**
   * The expert's next command in the current episode, from any state it can reach (the choice
   * expertPath makes from the start), where the env's expert is a policy rather than a recorded
   * path: DART demonstrations (`sft(noise:)`) need it to recover after a random command.
   */
  expertAction?(): Promise<string>;
  /**
   * Commands an agent that guesses rather than reads the observation would try now, none of them
   * admissible (texthouse: `take O` of a goal-type object the receptacle at hand does not hold):
   * the noise of `sft(noise_from: "guess")`, where the env can name such guesses.
   */
  guessedActions?(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A thrown env failure: the engine drops the episode, counts it and retries with backoff. `hint`: what
 * to do about it, where the env (or its bridge) knows; the run's TC7016 prints it.
 */
export class EnvError extends Error {
  constructor(message: string, readonly env: string, readonly retryable = true, readonly hint?: string) { super(message); }
}

/** The hint of an env fault whose env said nothing more. */
export const ENV_FAULT_HINT = "The environment failed, not the curriculum: check the env server or bridge process (its log; a bridge's stderr is quoted above), then run again, or continue a run that has a checkpoint with --resume RUN_DIR.";

/**
 * An env failure that escaped every episode's retries (one met before the run's first step, e.g.
 * listing a split's tasks): a user error coded TC7016, like a run stopped on an env's faults.
 */
export class EnvFaultError extends UserError {
  readonly code = "TC7016";
  constructor(e: EnvError) { super(`env ${e.env}: ${e.message}`, { hint: e.hint ?? ENV_FAULT_HINT }); }
}

/** Bad input from a curriculum (unknown split, unknown task): stops the run with a clear message. */
export class EnvConfigError extends UserError {
  readonly code = "TC7003";
  constructor(message: string, readonly env: string, hint?: string) { super(message, hint === undefined ? {} : { hint }); }
}
