/**
 * The engine: executes a plan step by step. The runtime reads only the plan (plan/*), never
 * compiler internals.
 *
 * One loop iteration t (the explorer step, 1-based, TCOD's batch_id):
 *   [probe (TurnOPD)] → TaskSampler → EpisodePlanner → Rollout → TeacherScore → replay buffer
 *   then the learner trains step u = t − staleness on the rows of that step:
 *   TurnStats → [TurnWeights] → Advantage → Update → metrics row u → [Evaluate] → [Checkpoint]
 *
 * Staleness s is a deterministic pipeline lag: the rollouts of step t use the policy after update
 * t − 1 − s (s = 0: synchronous, Trinity's explorer one sync behind the trainer; s > 0: the explorer
 * runs s steps ahead), so the same seed gives the same run however promises interleave. The last s
 * iterations only train (the pipeline drains), so every step's rows are trained on exactly once.
 * The buffer still enforces the bound and counts anything older (e.g. rows restored from an
 * older checkpoint).
 */
import { UserError } from "../plan/errors.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pLimit from "p-limit";
import { nodeOf, nodesOf, stringifyPlan, type NodeKind, type NodeOf, type Plan } from "../plan/schema.js";
import type { ExtFns } from "../plan/expr.js";
import type { EnvAdapter } from "./envs/env.js";
import type { EnvSpec } from "../plan/schema.js";
import { createEnv, envVocabulary } from "./envs/registry.js";
import { createModels, type Models } from "./backends/registry.js";
import { CurriculumState } from "./curriculum-state.js";
import { EnvPool } from "./env-pool.js";
import { defaultRowShape, ReplayBuffer, trajectoryRow, turnRows, type ExperienceRow, type RowShape } from "./replay.js";
import { MetricsWriter, type MetricsRow, type TrainRowMetrics } from "./metrics.js";
import { CHECKPOINT_FORMAT, loadStudent, readCheckpoint, writeCheckpoint, type CheckpointState } from "./checkpoint.js";
import { RunFault, zeroTimes, type FaultPolicy, type PhaseTimes, type RunContext } from "./nodes/context.js";
import { runTaskSampler } from "./nodes/task-sampler.js";
import { runEpisodePlanner } from "./nodes/episode-planner.js";
import { runRollout } from "./nodes/rollout.js";
import { runTeacherScore } from "./nodes/teacher-score.js";
import { runTurnStats } from "./nodes/turn-stats.js";
import { runTurnWeights } from "./nodes/turn-weights.js";
import { checkAdvantageSupported, needsDemonstrations, runAdvantage, usesFull, usesTopk } from "./nodes/advantage.js";
import { buildDemonstrations } from "./nodes/demonstrations.js";
import { aggregationAt, runUpdate } from "./nodes/update.js";
import { runEvaluate } from "./nodes/evaluate.js";
import { runProbe } from "./nodes/probe.js";
import type { EpisodeRecord } from "./rollout.js";

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
  onStart?: (info: { steps: number; startStep: number; runDir: string }) => void;
  onRow?: (row: MetricsRow) => void;
}

export type RunStatus = "completed" | "interrupted" | "stopped" | "failed";

export interface RunResult {
  status: RunStatus;
  /** Training steps completed. */
  step: number;
  runDir: string;
  metricsPath: string;
  message?: string;
}

/** Per-step rollout statistics (the rollout part of the step's metrics row), kept until the step's update writes it. */
type RolloutStats = Pick<TrainRowMetrics,
  "step" | "policyStep" | "episodes" | "successRate" | "meanReward" | "horizon" | "prefix" | "expertLength" | "studentTurns" |
  "turns" | "invalidActions" | "admissibleRate" | "noExperience" | "droppedFailed" | "adaptiveCap" | "tokens"> & {
  time: { rollout: number; teacher: number; probe: number };
};

interface Unscored { step: number; policyStep: number; records: EpisodeRecord[] }
interface Explored { records: EpisodeRecord[]; demos: ExperienceRow[]; stats: RolloutStats }

interface Nodes {
  tasks: NodeOf<"TaskSampler">;
  planner: NodeOf<"EpisodePlanner">;
  rollout: NodeOf<"Rollout">;
  teacher: NodeOf<"TeacherScore">;
  weights?: NodeOf<"TurnWeights">;
  advantage: NodeOf<"Advantage">;
  update: NodeOf<"Update">;
  evals: NodeOf<"Evaluate">[];
  checkpoint?: NodeOf<"Checkpoint">;
}

/** The nodes a runnable plan must hold, with a message naming what is missing. */
export function planNodes(plan: Plan): Nodes {
  const need = <K extends NodeKind>(k: K): NodeOf<K> => {
    const n = nodeOf(plan, k);
    if (!n) throw new PlanShapeError(`the plan has no ${k} node; a runnable plan needs TaskSampler, EpisodePlanner, Rollout, TeacherScore, Advantage and Update`);
    return n;
  };
  const nodes: Nodes = {
    tasks: need("TaskSampler"), planner: need("EpisodePlanner"), rollout: need("Rollout"), teacher: need("TeacherScore"),
    advantage: need("Advantage"), update: need("Update"), evals: nodesOf(plan, "Evaluate"),
  };
  const w = nodeOf(plan, "TurnWeights");
  if (w) nodes.weights = w;
  const c = nodeOf(plan, "Checkpoint");
  if (c) nodes.checkpoint = c;
  const sync = nodeOf(plan, "WeightSync");
  if (sync && sync.params.every !== 1) {
    throw new PlanShapeError(`WeightSync every ${sync.params.every} steps is not supported by this runtime: the student samples with the weights of its last update (every 1 step); use staleness for an explorer that runs ahead`);
  }
  checkAdvantageSupported(nodes.advantage, nodes.teacher);
  for (const [id, ref] of [["TaskSampler", nodes.tasks.params.env], ["Rollout", nodes.rollout.params.env], ...nodes.evals.map((e) => [`Evaluate ${e.params.name}`, e.params.env])] as const) {
    if (!plan.resources.envs[ref]) throw new PlanShapeError(`${id} names env "${ref}", which is not in resources.envs`);
  }
  if (!plan.resources.agents[nodes.rollout.params.agent]) throw new PlanShapeError(`Rollout names agent format "${nodes.rollout.params.agent}", which is not in resources.agents`);
  for (const m of [nodes.rollout.params.student, nodes.teacher.params.teacher]) {
    if (!plan.resources.models[m]) throw new PlanShapeError(`model "${m}" is not in resources.models`);
  }
  return nodes;
}

/** A plan whose graph cannot run (TC7002). */
export class PlanShapeError extends UserError {
  readonly code = "TC7002";
}

const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function rolloutStats(step: number, policyStep: number, records: EpisodeRecord[], droppedFailed: number, adaptiveCap: number | null, time: RolloutStats["time"]): RolloutStats {
  let prompt = 0, response = 0;
  for (const r of records) for (const t of r.turns) { prompt += t.prompt.length; response += t.response.length; }
  return {
    step, policyStep, episodes: records.length,
    successRate: mean(records.map((r) => (r.won ? 1 : 0))),
    meanReward: mean(records.map((r) => r.reward)),
    horizon: mean(records.map((r) => r.spec.horizon)),
    prefix: mean(records.map((r) => r.spec.prefixActions.length)),
    expertLength: mean(records.map((r) => r.spec.expertLength)),
    studentTurns: mean(records.map((r) => r.spec.studentTurns)),
    turns: records.reduce((a, r) => a + r.turns.length, 0),
    invalidActions: records.reduce((a, r) => a + r.invalidActions, 0),
    admissibleRate: admissibleShare(records),
    noExperience: records.filter((r) => r.replayFinished).length,
    droppedFailed, adaptiveCap, tokens: { prompt, response }, time,
  };
}

/** Share of student turns whose parsed action is one of the turn's admissible commands. */
function admissibleShare(records: EpisodeRecord[]): number {
  let n = 0, ok = 0;
  for (const r of records) for (const t of r.turns) { n++; if (t.action !== null && t.context.admissible.includes(t.action)) ok++; }
  return n > 0 ? ok / n : 0;
}

/** Runs (or resumes) a plan to completion, interruption, a stop point or a fault. */
export async function runPlan(plan: Plan, opts: RunOptions): Promise<RunResult> {
  const nodes = planNodes(plan);
  const seed = opts.seed ?? plan.clock.seed;
  const runDir = opts.runDir;
  mkdirSync(runDir, { recursive: true });
  const metricsPath = join(runDir, "metrics.jsonl");
  if (!opts.resume) writeFileSync(join(runDir, "plan.json"), stringifyPlan(plan));

  const state = new CurriculumState(plan, opts.ext);
  const agent = plan.resources.agents[nodes.rollout.params.agent]!;
  const trainEnv = plan.resources.envs[nodes.rollout.params.env]!;
  const models = opts.models
    ? await opts.models({ plan, seed })
    : await createModels({
      student: plan.resources.models[nodes.rollout.params.student]!, teacher: plan.resources.models[nodes.teacher.params.teacher]!,
      agent, seed, runDir, ...(envVocabulary(trainEnv) ? { vocabulary: envVocabulary(trainEnv)! } : {}),
    });
  const envs = new Map<string, EnvPool>();
  for (const [id, spec] of Object.entries(plan.resources.envs)) {
    envs.set(id, new EnvPool(id, spec.pool, (instance) =>
      opts.envFactory ? opts.envFactory(spec, { seed, instance, envId: id }) : createEnv(spec, { seed, instance })));
  }
  const studentSpec = plan.resources.models[nodes.rollout.params.student]!.backend;
  const teacherSpec = plan.resources.models[nodes.teacher.params.teacher]!.backend;
  const ctx: RunContext = {
    plan, seed, state, ext: opts.ext ?? {}, student: models.student, teacher: models.teacher, tokenizer: models.tokenizer, envs,
    studentLimit: pLimit(studentSpec.kind === "embedded" ? trainEnv.pool : studentSpec.concurrency),
    teacherLimit: pLimit(teacherSpec.kind === "embedded" ? trainEnv.pool : teacherSpec.concurrency),
    faults: { maxRetries: 3, backoffMs: 100, ...opts.faults },
    syncedStep: 0,
    counters: { droppedFailed: 0, droppedStale: 0, noExperience: 0 },
  };
  const T = plan.clock.steps;
  const s = nodes.update.params.staleness;
  // The curriculum's `rows:` field (plan Advantage.params.rows); RunOptions.rows overrides it in tests.
  const shape = opts.rows ?? nodes.advantage.params.rows ?? defaultRowShape(plan, nodes.rollout);
  const buffer = new ReplayBuffer(opts.bufferCapacity ?? Math.max(1024, 4 * (s + 1) * nodes.tasks.params.tasksPerStep * nodes.tasks.params.rolloutsPerTask * nodes.planner.params.maxTurns));
  const metrics = new MetricsWriter(metricsPath);
  let pending: RolloutStats[] = [];
  /** Episodes rolled out but not yet scored (the explorer running ahead overlaps scoring). */
  let unscored: Unscored | null = null;
  let iteration = 0;
  let learnerStep = 0;

  const emit = (row: MetricsRow) => { metrics.write(row); opts.onRow?.(row); };
  const evaluateAt = async (u: number) => {
    for (const ev of nodes.evals) {
      if (!(u === 0 ? ev.params.atStart : u % ev.params.every === 0 || u === T)) continue;
      const t0 = performance.now();
      const row = await runEvaluate(ev, nodes.rollout, ctx, u);
      emit({ ...row, time: { eval: (performance.now() - t0) / 1000 } });
    }
  };
  const snapshot = (): CheckpointState => ({
    format: CHECKPOINT_FORMAT, planName: plan.name, seed, iteration, learnerStep,
    curriculum: state.snapshot(), buffer: buffer.snapshot(), pending: structuredClone(pending),
    unscored: unscored ? structuredClone(unscored) : null,
    counters: { droppedFailed: ctx.counters.droppedFailed, droppedStale: buffer.droppedStale },
    metricsOffset: metrics.offset(), savedAt: new Date().toISOString(),
  });
  const restore = (ck: CheckpointState) => {
    iteration = ck.iteration;
    learnerStep = ck.learnerStep;
    ctx.syncedStep = ck.learnerStep;
    state.restore(ck.curriculum);
    buffer.restore(ck.buffer);
    pending = structuredClone(ck.pending) as RolloutStats[];
    unscored = ck.unscored ? (structuredClone(ck.unscored) as Unscored) : null;
    ctx.counters.droppedFailed = ck.counters.droppedFailed;
  };
  const checkpoint = () => writeCheckpoint(runDir, snapshot(), ctx.student);

  try {
    if (opts.resume) {
      const ck = readCheckpoint(runDir);
      if (ck.planName !== plan.name) throw new PlanShapeError(`the checkpoint in ${runDir} belongs to plan "${ck.planName}", not "${plan.name}"`);
      if (opts.seed !== undefined && opts.seed !== ck.seed) throw new PlanShapeError(`the run in ${runDir} used seed ${ck.seed}; resume it without --seed or with --seed ${ck.seed}`);
      ctx.seed = ck.seed;
      await loadStudent(runDir, ctx.student);
      restore(ck);
      metrics.open(ck.metricsOffset);
    } else {
      metrics.open();
    }
    opts.onStart?.({ steps: T, startStep: learnerStep, runDir });
    if (!opts.resume) {
      await evaluateAt(0);
      // Step 0 is a resume point too: an interrupted first step must not repeat the start eval.
      await checkpoint();
    }

    for (let t = iteration + 1; t <= T + s; t++) {
      // A step of the embedded backend may never leave the microtask queue, and signal handlers
      // (Ctrl-C) run only from the event loop: let it turn once per step, so an interrupt is seen
      // at the end of the step it arrived in, not at the next checkpoint's file I/O.
      await new Promise<void>((r) => setImmediate(r));
      if (opts.signal?.aborted) {
        await checkpoint();
        return { status: "interrupted", step: learnerStep, runDir, metricsPath, message: `interrupted after step ${learnerStep}; resume with --resume ${runDir}` };
      }
      const before = snapshot();
      let mutated = false;
      try {
        // The explorer: roll out step t; score it now (synchronous) or, when the explorer runs
        // ahead (staleness ≥ 1), score the previous step's episodes while step t rolls out. The
        // teacher never touches the student's weights, so the overlap keeps runs deterministic.
        const overlap = s >= 1;
        const scoreStep = async (step: number, policyStep: number, records: EpisodeRecord[]) => {
          const t0 = performance.now();
          const scored = await runTeacherScore(nodes.teacher, ctx, records, usesTopk(nodes.advantage), usesFull(nodes.advantage));
          const rows: ExperienceRow[] = [];
          for (const e of scored) {
            if (shape === "turn") rows.push(...turnRows(step, e, policyStep));
            else { const r = trajectoryRow(step, e, policyStep); if (r) rows.push(r); }
          }
          return { rows, seconds: (performance.now() - t0) / 1000 };
        };
        const explore = async (): Promise<Explored | null> => {
          if (t > T) return null;
          const times = zeroTimes();
          const temperature = state.atStep(nodes.rollout.params.temperature, t);
          const adaptive = nodes.planner.params.adaptive;
          if (adaptive && t % adaptive.probeEvery === 0) {
            const t0 = performance.now();
            const probe = await runProbe(nodes.planner, nodes.rollout, nodes.teacher, ctx, t, temperature);
            state.recordProbe(t, probe.cap, probe.profile);
            times.probe = (performance.now() - t0) / 1000;
          }
          const failedBefore = ctx.counters.droppedFailed;
          const t0 = performance.now();
          const tasks = await runTaskSampler(nodes.tasks, ctx, t);
          const specs = await runEpisodePlanner(nodes.planner, ctx, {
            tasks, rolloutsPerTask: nodes.tasks.params.rolloutsPerTask, envId: nodes.tasks.params.env, temperature, step: t,
          });
          const records = await runRollout(nodes.rollout, ctx, specs);
          const demos = needsDemonstrations(nodes.advantage)
            ? await buildDemonstrations(ctx, nodes.rollout.params.env, nodes.rollout.params.agent, tasks, t, ctx.syncedStep, nodes.planner.params.maxTurns)
            : [];
          times.rollout = (performance.now() - t0) / 1000;
          return { records, demos, stats: rolloutStats(t, ctx.syncedStep, records, ctx.counters.droppedFailed - failedBefore, state.adaptiveCap,
            { rollout: times.rollout, teacher: 0, probe: times.probe }) };
        };
        const previous = unscored as Unscored | null; // (assigned in closures; TS narrows it to null)
        const [explored, scoredPrev]: [Explored | null, { rows: ExperienceRow[]; seconds: number } | null] = await Promise.all([
          explore(),
          overlap && previous ? scoreStep(previous.step, previous.policyStep, previous.records) : Promise.resolve(null),
        ]);
        if (scoredPrev && previous) {
          buffer.push(scoredPrev.rows);
          pending.find((p) => p.step === previous.step)!.time.teacher = scoredPrev.seconds;
          unscored = null;
        }
        if (explored) {
          pending.push(explored.stats);
          buffer.push(explored.demos);
          if (overlap) unscored = { step: t, policyStep: explored.stats.policyStep, records: explored.records };
          else {
            const sc = await scoreStep(t, explored.stats.policyStep, explored.records);
            buffer.push(sc.rows);
            explored.stats.time.teacher = sc.seconds;
          }
        }
        const u = t - s;
        if (u >= 1) {
          const times = zeroTimes();
          let t0 = performance.now();
          const taken = buffer.take(u, u, s);
          const stats = pending.find((p) => p.step === u)!;
          pending = pending.filter((p) => p.step !== u);
          const needEntropy = !!nodes.weights && state.reads({ expr: nodes.weights.params.weight.expr }, "turn.entropy") && shape === "turn";
          const batch = await runTurnStats(ctx, taken.rows, u, needEntropy);
          const weights = nodes.weights && batch.turns.n > 0 ? runTurnWeights(nodes.weights, ctx, batch) : undefined;
          const adv = runAdvantage(nodes.advantage, ctx, batch, u, weights);
          const aggregate = aggregationAt(ctx, nodes.advantage.params.aggregate, u);
          times.advantage = (performance.now() - t0) / 1000;
          t0 = performance.now();
          mutated = true;
          const upd = await runUpdate(nodes.update, ctx, batch, adv.advantages, aggregate, u, adv.klCoefs, adv.forwardKlCoefs);
          times.update = (performance.now() - t0) / 1000;
          learnerStep = u;
          ctx.syncedStep = u;
          const row: TrainRowMetrics = {
            kind: "train", step: u, policyStep: stats.policyStep, policyVersion: ctx.student.version(),
            episodes: stats.episodes, successRate: stats.successRate, meanReward: stats.meanReward,
            horizon: stats.horizon, prefix: stats.prefix, expertLength: stats.expertLength, studentTurns: stats.studentTurns, turns: stats.turns,
            invalidActions: stats.invalidActions, admissibleRate: stats.admissibleRate, noExperience: stats.noExperience, droppedFailed: stats.droppedFailed,
            droppedStale: taken.dropped,
            kl: klSummary(batch.turns.vars["turn.kl"]!, batch.turns.vars["turn.tokens"]!, batch.turns.vars["turn.index"]!),
            tokens: stats.tokens, coefs: adv.coefs,
            blendWeight: aggregate.kind === "progressive" ? aggregate.weight : null,
            adaptiveCap: stats.adaptiveCap, lr: upd.lr, loss: upd.loss, gradNorm: upd.gradNorm, updates: upd.updates,
            time: { ...stats.time, advantage: times.advantage, update: times.update },
          };
          emit(row);
          const te = performance.now();
          await evaluateAt(u);
          row.time.eval = (performance.now() - te) / 1000;
        }
        iteration = t;
        state.step = Math.min(t, T);
      } catch (e) {
        if (!(e instanceof RunFault)) throw e;
        // Nothing of this iteration is kept unless the update already changed the weights.
        if (!mutated) restore({ ...before, counters: { ...before.counters, droppedFailed: ctx.counters.droppedFailed } });
        else { iteration = t; state.step = Math.min(t, T); }
        await checkpoint();
        return { status: "failed", step: learnerStep, runDir, metricsPath, message: `${e.message}. The run stopped with a checkpoint after step ${learnerStep}; fix the cause and continue with --resume ${runDir}` };
      }
      const every = nodes.checkpoint?.params.every;
      if (every !== undefined && t % every === 0) await checkpoint();
      if (opts.stopAfter !== undefined && t >= opts.stopAfter && t < T + s) {
        await checkpoint();
        return { status: "stopped", step: learnerStep, runDir, metricsPath, message: `stopped after step ${learnerStep}` };
      }
    }
    await checkpoint();
    return { status: "completed", step: learnerStep, runDir, metricsPath };
  } finally {
    await Promise.allSettled([...envs.values()].map((p) => p.close()));
    await Promise.allSettled([ctx.student.close(), ctx.teacher.close()]);
  }
}

/** Token-weighted mean KL, and the mean KL of the turns at each turn index (null where none). */
function klSummary(kl: Float64Array, tokens: Float64Array, index: Float64Array): TrainRowMetrics["kl"] {
  let sum = 0, n = 0;
  const by = new Map<number, { s: number; c: number }>();
  for (let u = 0; u < kl.length; u++) {
    sum += kl[u]! * tokens[u]!;
    n += tokens[u]!;
    const h = index[u]!;
    const e = by.get(h) ?? { s: 0, c: 0 };
    e.s += kl[u]!; e.c++;
    by.set(h, e);
  }
  const depth = by.size ? Math.max(...by.keys()) + 1 : 0;
  const perTurn = Array.from({ length: depth }, (_, h) => { const e = by.get(h); return e ? e.s / e.c : null; });
  return { mean: n > 0 ? sum / n : 0, perTurn };
}
