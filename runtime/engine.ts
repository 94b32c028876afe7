/**
 * The engine: runs a plan's execution graph. The runtime reads only the plan (plan/*), never
 * compiler internals. runPlan composes the run: the graph split by phase (graph.ts), the run
 * context (models, env pools, limits), then
 *   explorer.ts   — the explorer nodes of a step (rollouts, teacher scoring, probe, demonstrations)
 *   learner.ts    — the learner nodes of a training step (advantage, update, weight sync)
 *   pipeline.ts   — the staleness pipeline between them (replay buffer, deferred scoring)
 *   run-state.ts  — the clock, checkpoints and metrics
 * Every node runs through its kind's executor (nodes/index.ts, one contract: nodes/executor.ts).
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pLimit from "p-limit";
import { stringifyPlan, type EnvSpec, type Plan } from "../plan/schema.js";
import type { ExtFns } from "../plan/expr.js";
import { EnvError, EnvFaultError, type EnvAdapter } from "./envs/env.js";
import { createEnv, envVocabulary } from "./envs/registry.js";
import { createModels, type Models } from "./backends/registry.js";
import { CurriculumState } from "./curriculum-state.js";
import { EnvPool } from "./env-pool.js";
import { preflightWarnings } from "./preflight.js";
import { checkContextLengths, contextPlays } from "./preflight-context.js";
import { defaultRowShape, type RowShape } from "./replay.js";
import type { FaultPolicy, RunContext } from "./nodes/context.js";
import { Latest, PlanShapeError, runGraph, stepContext, type RunGraph } from "./graph.js";
import { Explorer } from "./explorer.js";
import { Learner } from "./learner.js";
import { StalenessPipeline } from "./pipeline.js";
import { checkResumable, RunState, type RunResult, type RunStatus } from "./run-state.js";
import { EpisodeSampleWriter, type SampleFileNote } from "./episode-samples.js";
import { findCheckpoint, peekCheckpoint } from "./checkpoint.js";
import { writeFileAtomicSync } from "./fs-atomic.js";
import { MAX_RUN_FILE_BYTES, readTextFile } from "../plan/read-file.js";
import { MetricsWriter, type MetricsRow } from "./metrics.js";
import type { SetAside } from "./set-aside.js";

export { PlanShapeError, type RunResult, type RunStatus };

export interface RunOptions {
  runDir: string;
  /** Overrides plan.clock.seed. */
  seed?: number;
  /** Continue the run in `runDir` from its checkpoint. */
  resume?: boolean;
  faults?: Partial<FaultPolicy>;
  /** Row shape: per-turn rows (Trinity, default) or whole trajectories (tinker). */
  rows?: RowShape;
  /** Rows the replay buffer may hold; default: 4 steps' worth of turns at the full horizon. */
  bufferCapacity?: number;
  /** Stop (with a checkpoint) after this loop iteration; for tests and benchmarks. */
  stopAfter?: number;
  /** Aborted (Ctrl-C): finish the current step, checkpoint, return "interrupted". */
  signal?: AbortSignal;
  /** Injected models / envs (tests, benchmarks); default: the registries. */
  models?: (setup: { plan: Plan; seed: number }) => Promise<Models>;
  envFactory?: (spec: EnvSpec, opts: { seed: number; instance: number; envId: string }) => EnvAdapter;
  ext?: ExtFns;
  /** Progress hooks. */
  /** Called (and awaited) once the run has taken its folder: a refused resume never reaches it. */
  onStart?: (info: { steps: number; startStep: number; runDir: string }) => void | Promise<void>;
  onRow?: (row: MetricsRow) => void;
  /** Rows a start at step 0 found in the folder, kept under new names (run-state.ts ClockOptions.onSetAside). */
  onSetAside?: (moved: readonly SetAside[]) => void;
  /** A warning about how the run will play (preflight.ts), given before the first step. */
  onWarning?: (message: string) => void;
  /** Lines of a run folder's file a resume kept as they were or left out, said (run-state.ts ClockOptions.onFileNote). */
  onFileNote?: SampleFileNote;
}

/** The graph of a runnable plan, with its resource references checked; errors name what is missing. */
export function planGraph(plan: Plan): RunGraph {
  const g = runGraph(plan);
  const { envs, agents, models } = plan.resources;
  for (const n of plan.graph.nodes) {
    const p = n.params as { env?: string; agent?: string; student?: string; teacher?: string };
    if (p.env !== undefined && !envs[p.env]) throw new PlanShapeError(`${n.kind} node "${n.id}" names env "${p.env}", which is not in resources.envs`);
    if (p.agent !== undefined && !agents[p.agent]) throw new PlanShapeError(`${n.kind} node "${n.id}" names agent format "${p.agent}", which is not in resources.agents`);
    for (const m of [p.student, p.teacher]) if (m !== undefined && !models[m]) throw new PlanShapeError(`${n.kind} node "${n.id}" names model "${m}", which is not in resources.models`);
  }
  return g;
}

/** Runs (or resumes) a plan to completion, interruption, a stop point or a fault. */
export async function runPlan(plan: Plan, opts: RunOptions): Promise<RunResult> {
  const g = planGraph(plan);
  const runDir = opts.runDir;
  mkdirSync(runDir, { recursive: true });
  const metricsPath = join(runDir, "metrics.jsonl");
  // A resumed run takes its seed from its checkpoint, before models and envs are made with it. A run
  // killed before its first checkpoint has none: it starts again at step 0 with the seed plan.json
  // records (written below with the seed in force).
  const checkpoint = opts.resume ? findCheckpoint(runDir) : null;
  // plan.json as the run wrote it, by its SHA-256 in every checkpoint: a resume of an edited one is refused.
  let planSha256 = opts.resume ? fileSha256(join(runDir, "plan.json")) : undefined;
  if (checkpoint) checkResumable(checkpoint, plan, runDir, plan.clock.steps + g.update.params.staleness, opts.seed, planSha256);
  const seed = checkpoint?.seed ?? opts.seed ?? plan.clock.seed;
  if (!opts.resume) {
    const text = stringifyPlan(seed === plan.clock.seed ? plan : { ...plan, clock: { ...plan.clock, seed } });
    writeFileAtomicSync(join(runDir, "plan.json"), text);
    planSha256 = createHash("sha256").update(text).digest("hex");
  }

  const rollout = g.explore.find((n) => n.kind === "Rollout" && !g.probeBranch.has(n.id));
  if (rollout?.kind !== "Rollout") throw new PlanShapeError("the plan has no Rollout node feeding the learner");
  const state = new CurriculumState(plan, opts.ext);
  const agent = plan.resources.agents[rollout.params.agent]!;
  const trainEnv = plan.resources.envs[rollout.params.env]!;
  const studentModel = plan.resources.models[rollout.params.student]!, teacherModel = plan.resources.models[g.scorer.params.teacher]!;
  const vocabulary = envVocabulary(trainEnv);
  const models = opts.models
    ? await opts.models({ plan, seed })
    : await createModels({ student: studentModel, teacher: teacherModel, agent, seed, runDir, ...(vocabulary ? { vocabulary } : {}) });
  const envs = new Map<string, EnvPool>();
  for (const [id, spec] of Object.entries(plan.resources.envs)) {
    envs.set(id, new EnvPool(id, spec.pool, (instance) =>
      opts.envFactory ? opts.envFactory(spec, { seed, instance, envId: id }) : createEnv(spec, { seed, instance })));
  }
  const limit = (b: typeof studentModel.backend) => pLimit(b.kind === "embedded" ? trainEnv.pool : b.concurrency);
  const ctx: RunContext = {
    plan, seed, state, ext: opts.ext ?? {}, student: models.student, teacher: models.teacher, tokenizer: models.tokenizer, envs,
    studentLimit: limit(studentModel.backend), teacherLimit: limit(teacherModel.backend),
    faults: { maxRetries: 3, backoffMs: 100, ...opts.faults },
    syncedStep: 0,
    counters: { droppedFailed: 0, droppedStale: 0, noExperience: 0 },
  };
  const s = g.update.params.staleness;
  // The curriculum's `rows:` field (plan Advantage.params.rows); RunOptions.rows overrides it in tests.
  const shape = opts.rows ?? g.advantage.params.rows ?? defaultRowShape(plan, rollout);
  const capacity = opts.bufferCapacity ?? Math.max(1024, 4 * (s + 1) * g.taskSampler.params.tasksPerStep * g.taskSampler.params.rolloutsPerTask * g.planner.params.maxTurns);
  const pipeline = new StalenessPipeline(s, plan.clock.steps, capacity);
  const latest = new Latest(() => ({ step: ctx.syncedStep, version: ctx.student.version() }));
  let run: RunState | undefined;
  const stepCtx = (step: number) => stepContext(ctx, step, shape, () => run!.checkpoint());
  run = new RunState(plan, g, ctx, state, pipeline, latest, stepCtx, runDir, metricsPath, { ...opts, checkpoint, ...(planSha256 !== undefined ? { planSha256 } : {}) });
  try {
    for (const w of await preflightWarnings(plan, envs)) opts.onWarning?.(w);
    const plays = contextPlays(plan, g,
      { name: studentModel.path, role: "student", context: ctx.student.context },
      { name: teacherModel.path, role: "teacher", context: ctx.teacher.context });
    for (const w of await checkContextLengths({ plan, tokenizer: ctx.tokenizer, plays, ext: ctx.ext }, envs)) opts.onWarning?.(w);
    return await run.run(new Explorer(g, ctx, latest, shape, stepCtx), new Learner(g, ctx, latest, stepCtx));
  } catch (e) {
    // An env fault met outside every episode's retries (a split's task list before step 1): the
    // env's failure, coded TC7016 with its hint, never an internal error.
    if (e instanceof EnvError) throw new EnvFaultError(e);
    throw e;
  } finally {
    await Promise.allSettled([...envs.values()].map((p) => p.close()));
    await Promise.allSettled([ctx.student.close(), ctx.teacher.close()]);
  }
}

/**
 * Everything runPlan refuses a resume of `plan` in `runDir` for, checked without writing anything:
 * the checkpoint (read where it is, not repaired: checkpoint.ts peekCheckpoint) against the plan, its
 * plan.json and `seed`; the metrics rows it keeps; the sample episodes it keeps being readable. `tcod
 * run --resume` calls it before it takes the folder's lock, so a refused resume leaves the folder —
 * its files and its own mtime — as it was; runPlan checks the same again once the folder is its own.
 * (The checkpoint's student weights are checked only by the backend that loads them, after.)
 */
export function checkResume(plan: Plan, runDir: string, seed?: number): void {
  const g = planGraph(plan);
  const checkpoint = peekCheckpoint(runDir);
  if (!checkpoint) return; // no checkpoint yet: the run starts again at step 0, its rows set aside
  checkResumable(checkpoint, plan, runDir, plan.clock.steps + g.update.params.staleness, seed, fileSha256(join(runDir, "plan.json")));
  new MetricsWriter(join(runDir, "metrics.jsonl")).checkKept(checkpoint.metricsOffset);
  new EpisodeSampleWriter(join(runDir, "episodes.jsonl")).readKept();
}

/** The SHA-256 of a run folder's file; undefined where it cannot be read (a resume without plan.json). */
function fileSha256(path: string): string | undefined {
  try {
    return createHash("sha256").update(readTextFile(path, MAX_RUN_FILE_BYTES)).digest("hex");
  } catch {
    return undefined;
  }
}
