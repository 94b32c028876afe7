/**
 * What node executors share during a run: the plan, the curriculum state, the models, env pools,
 * bounded concurrency, fault policy and the per-step counters that end up in metrics.
 */
import type { Plan } from "../../plan/schema.js";
import type { ExtFns } from "../../plan/expr.js";
import type { StudentBackend, TeacherBackend, Tokenizer } from "../backends/backend.js";
import type { CurriculumState } from "../curriculum-state.js";
import type { EnvPool } from "../env-pool.js";

export interface FaultPolicy {
  /** Retries of one failed episode before the run stops (each retry counts as a dropped episode). */
  maxRetries: number;
  /** First backoff delay; doubles with every retry of the same episode. */
  backoffMs: number;
}

export interface Limiter { <T>(fn: () => Promise<T>): Promise<T> }

export interface StepCounters {
  droppedFailed: number;
  droppedStale: number;
  noExperience: number;
}

export interface PhaseTimes { rollout: number; teacher: number; advantage: number; update: number; eval: number; probe: number }
export const zeroTimes = (): PhaseTimes => ({ rollout: 0, teacher: 0, advantage: 0, update: 0, eval: 0, probe: 0 });

export interface RunContext {
  plan: Plan;
  seed: number;
  state: CurriculumState;
  ext: ExtFns;
  student: StudentBackend;
  teacher: TeacherBackend;
  tokenizer: Tokenizer;
  envs: Map<string, EnvPool>;
  studentLimit: Limiter;
  teacherLimit: Limiter;
  faults: FaultPolicy;
  /** Training steps whose update the sampler has (WeightSync); recorded on every sample. */
  syncedStep: number;
  counters: StepCounters;
}

/** Thrown when an episode keeps failing after every retry: the run stops cleanly. `code` is what the
 *  CLI reports it as: the cause's own code (a backend's TC7004), TC7016 for an env's faults. */
export class RunFault extends Error {
  constructor(message: string, override readonly cause: unknown, readonly code?: `TC${number}`, readonly hint?: string) { super(message); }
}
