/**
 * The run state: the step clock, checkpoints and metrics. It drives the staleness pipeline one
 * iteration at a time, runs the clock nodes (Evaluate at step 0 with atStart and every `every`
 * steps; Checkpoint every `every` iterations), writes the metrics rows, and saves and restores
 * everything a resumed run needs. A fault in an iteration (RunFault) rolls the iteration back unless
 * the update already changed the weights, then stops with a checkpoint.
 */
import { join } from "node:path";
import type { NodeOf, Plan } from "../plan/schema.js";
import type { CurriculumState } from "./curriculum-state.js";
import { MetricsWriter, type MetricsRow } from "./metrics.js";
import { EpisodeSampleWriter, type SampleFileNote } from "./episode-samples.js";
import { setAsideForRestart, type SetAside } from "./set-aside.js";
import { CHECKPOINT_FORMAT, checkpointDir, loadStudent, RunFolderError, writeCheckpoint, type CheckpointState } from "./checkpoint.js";
import { RunFault, type RunContext } from "./nodes/context.js";
import type { EvalRow } from "./nodes/evaluate.js";
import { inputsOf, runNode, type Latest, type RunGraph } from "./graph.js";
import type { Explorer } from "./explorer.js";
import type { Learner } from "./learner.js";
import type { StalenessPipeline } from "./pipeline.js";
import type { StepContext } from "./nodes/executor.js";

export type RunStatus = "completed" | "interrupted" | "stopped" | "failed";

export interface RunResult {
  status: RunStatus;
  /** Training steps completed. */
  step: number;
  runDir: string;
  metricsPath: string;
  message?: string;
  /** A failed run's error code (TC7016 for an env's faults, TC7004 for a backend's). */
  code?: `TC${number}`;
  /** A failed run's hint: what to do about the fault. */
  hint?: string;
}

export interface ClockOptions {
  resume?: boolean;
  /** The checkpoint a resumed run continues from (read by the engine before the models start); null: none yet, start at step 0. */
  checkpoint?: CheckpointState | null;
  /** The SHA-256 of RUN_DIR/plan.json, recorded in each checkpoint (CheckpointState.planSha256). */
  planSha256?: string;
  stopAfter?: number;
  signal?: AbortSignal;
  /** Called (and awaited) once the run has taken its folder: a refused resume never reaches it. */
  onStart?: (info: { steps: number; startStep: number; runDir: string }) => void | Promise<void>;
  onRow?: (row: MetricsRow) => void;
  /**
   * Called when a run starting at step 0 found rows in its folder (a resume without a checkpoint)
   * and kept them under new names (set-aside.ts), before it writes any row of its own.
   */
  onSetAside?: (moved: readonly SetAside[]) => void;
  /** What a resume found in episodes.jsonl and left as it was or out (episode-samples.ts EpisodeSampleWriter.open). */
  onFileNote?: SampleFileNote;
}

/**
 * Checks that a checkpoint belongs to this plan and run: the plan's name, the seed asked for, and an
 * iteration the plan has (a checkpoint beyond the plan is damaged or foreign). Throws RunFolderError.
 */
export function checkResumable(ck: CheckpointState, plan: Plan, runDir: string, iterations: number, seed?: number, planSha256?: string): void {
  const file = `${checkpointDir(runDir)}/state.json`;
  const where = { file };
  if (ck.planName !== plan.name) {
    throw new RunFolderError(`cannot resume: the checkpoint in ${runDir} belongs to plan "${ck.planName}", not "${plan.name}"`, { where, hint: "Resume the run with the plan it was started with, or start a new run in another --out folder." });
  }
  // plan.json edited since the run wrote it: the steps so far ran another plan than the rest would.
  if (ck.planSha256 !== undefined && planSha256 !== undefined && ck.planSha256 !== planSha256) {
    const planFile = join(runDir, "plan.json");
    throw new RunFolderError(`cannot resume: ${planFile} was changed after the run wrote it (its SHA-256 is not the one ${file} records), so the steps so far ran another plan`, {
      where: { file: planFile }, hint: "Restore the plan.json the run started with, or run the changed plan in a new --out folder.",
    });
  }
  if (seed !== undefined && seed !== ck.seed) {
    throw new RunFolderError(`cannot resume: the run in ${runDir} used seed ${ck.seed}, not ${seed}`, { where, hint: `Resume it without --seed or with --seed ${ck.seed}.` });
  }
  if (ck.iteration > iterations || ck.curriculum.step > plan.clock.steps || ck.learnerStep > plan.clock.steps) {
    throw new RunFolderError(`cannot resume: ${file} says ${ck.iteration} iterations (${ck.learnerStep} training steps) are done, but the plan has ${plan.clock.steps} steps${iterations > plan.clock.steps ? ` (${iterations} iterations with staleness)` : ""}`,
      { where, hint: "The checkpoint is damaged or belongs to a longer run; resume the run with the plan it was started with, or start again in a new --out folder." });
  }
  checkPipelineState(ck, plan.clock.steps, iterations - plan.clock.steps, file);
}

/**
 * The staleness pipeline's state must be the one its iteration leaves (pipeline.ts): after iteration
 * t with staleness s, the steps explored and not yet trained, max(1, t − s + 1) … min(t, T), each
 * pending once, and episodes awaiting the scorer only of a pending step. A schema-valid but edited
 * or foreign state.json that breaks this would fail later, mid-run; refused here, naming the file.
 */
function checkPipelineState(ck: CheckpointState, steps: number, staleness: number, file: string): void {
  const t = ck.iteration;
  const expected: number[] = [];
  for (let u = Math.max(1, t - staleness + 1); u <= Math.min(t, steps); u++) expected.push(u);
  const pending = (ck.pending as { step: number }[]).map((p) => p.step);
  const hint = "The checkpoint was edited or is damaged; restore it, or start the run again in a new --out folder.";
  if (pending.length !== expected.length || pending.some((u, i) => u !== expected[i])) {
    throw new RunFolderError(
      `cannot resume: ${file} is inconsistent: its pending steps are [${pending.join(", ")}], but after iteration ${t} with staleness ${staleness} the steps explored and not yet trained are [${expected.join(", ")}]`,
      { where: { file }, hint });
  }
  const unscored = ck.unscored as { step: number } | null;
  if (unscored !== null && !pending.includes(unscored.step)) {
    throw new RunFolderError(
      `cannot resume: ${file} is inconsistent: it holds unscored episodes of step ${unscored.step}, which is not a pending step ([${pending.join(", ")}])`,
      { where: { file }, hint });
  }
}

export class RunState {
  iteration = 0;
  learnerStep = 0;
  private readonly metrics: MetricsWriter;
  private readonly samples: EpisodeSampleWriter;

  constructor(
    private readonly plan: Plan,
    private readonly g: RunGraph,
    private readonly ctx: RunContext,
    private readonly state: CurriculumState,
    private readonly pipeline: StalenessPipeline,
    private readonly latest: Latest,
    private readonly stepCtx: (step: number) => StepContext,
    readonly runDir: string,
    readonly metricsPath: string,
    private readonly opts: ClockOptions,
  ) {
    this.metrics = new MetricsWriter(metricsPath);
    this.samples = new EpisodeSampleWriter(join(runDir, "episodes.jsonl"));
  }

  private emit(row: MetricsRow): void { this.metrics.write(row); this.opts.onRow?.(row); }

  snapshot(): CheckpointState {
    const p = this.pipeline.snapshot();
    return {
      format: CHECKPOINT_FORMAT, planName: this.plan.name, ...(this.opts.planSha256 !== undefined ? { planSha256: this.opts.planSha256 } : {}), seed: this.ctx.seed, iteration: this.iteration, learnerStep: this.learnerStep,
      curriculum: this.state.snapshot(), buffer: p.buffer, pending: p.pending, unscored: p.unscored,
      counters: { droppedFailed: this.ctx.counters.droppedFailed, droppedStale: this.pipeline.buffer.droppedStale },
      metricsOffset: this.metrics.offset(), savedAt: new Date().toISOString(),
    };
  }

  restore(ck: CheckpointState): void {
    this.iteration = ck.iteration;
    this.learnerStep = ck.learnerStep;
    this.ctx.syncedStep = ck.learnerStep;
    this.latest.reset();
    this.state.restore(ck.curriculum);
    this.pipeline.restore(ck);
    this.ctx.counters.droppedFailed = ck.counters.droppedFailed;
  }

  checkpoint = (): Promise<void> => {
    // The rows the checkpoint counts must be on disk before it is.
    this.metrics.sync();
    return writeCheckpoint(this.runDir, this.snapshot(), this.ctx.student);
  };

  /** The Evaluate nodes due after training step u (u = 0: the start), each a metrics row. */
  private async evaluateAt(u: number): Promise<void> {
    const T = this.plan.clock.steps;
    for (const ev of this.g.clock.filter((n): n is NodeOf<"Evaluate"> => n.kind === "Evaluate")) {
      if (!(u === 0 ? ev.params.atStart : (u % ev.params.every === 0 && u >= (ev.params.from ?? 0)) || u === T)) continue;
      const t0 = performance.now();
      const out = await runNode(ev, inputsOf(this.g, ev, new Map(), this.latest), this.stepCtx(u));
      const { samples, ...row } = out.metrics as EvalRow;
      this.emit({ ...row, time: { eval: (performance.now() - t0) / 1000 } });
      if (samples) this.samples.write(samples);
    }
  }

  private async checkpointNodes(t: number): Promise<void> {
    for (const n of this.g.clock) if (n.kind === "Checkpoint") await runNode(n, {}, this.stepCtx(t));
  }

  /** Runs (or resumes) the clock to completion, interruption, a stop point or a fault. */
  async run(explorer: Explorer, learner: Learner): Promise<RunResult> {
    const { runDir, metricsPath, opts, plan } = this;
    const T = plan.clock.steps;
    const ck = opts.resume ? opts.checkpoint ?? null : null;
    if (ck) {
      await loadStudent(runDir, this.ctx.student);
      this.restore(ck);
      this.metrics.open(ck.metricsOffset);
      this.samples.open(ck.learnerStep, opts.onFileNote);
    } else {
      // A new run, or one killed before its first checkpoint (or whose checkpoint was removed): it
      // starts (again) at step 0. Rows already in the folder are no checkpoint's: kept aside, not overwritten.
      const moved = setAsideForRestart(runDir);
      if (moved.length > 0) opts.onSetAside?.(moved);
      this.metrics.open();
      this.samples.open();
    }
    await opts.onStart?.({ steps: T, startStep: this.learnerStep, runDir });
    if (!ck) {
      try {
        await this.evaluateAt(0);
      } catch (e) {
        if (!(e instanceof RunFault)) throw e;
        // No checkpoint: a resume of a folder without one starts again at step 0, start eval included.
        return { status: "failed", step: 0, runDir, metricsPath, ...(e.code ? { code: e.code } : {}), ...(e.hint ? { hint: e.hint } : {}), message: `${e.message}. The run stopped at its start evaluation, before step 1; fix the cause and run it again (--resume ${runDir} starts it over from step 0)` };
      }
      // Step 0 is a resume point too: an interrupted first step must not repeat the start eval.
      await this.checkpoint();
    }
    const last = this.pipeline.iterations;
    for (let t = this.iteration + 1; t <= last; t++) {
      // A step of the embedded backend may never leave the microtask queue, and signal handlers
      // (Ctrl-C) run only from the event loop: let it turn once per step, so an interrupt is seen
      // at the end of the step it arrived in, not at the next checkpoint's file I/O.
      await new Promise<void>((r) => setImmediate(r));
      if (opts.signal?.aborted) {
        await this.checkpoint();
        return { status: "interrupted", step: this.learnerStep, runDir, metricsPath, message: `interrupted after step ${this.learnerStep}; resume with --resume ${runDir}` };
      }
      const before = this.snapshot();
      learner.mutated = false;
      try {
        const trained = await this.pipeline.iterate(t, explorer, learner);
        if (trained) {
          const { row } = trained;
          this.learnerStep = row.step;
          this.emit(row);
          this.samples.write(trained.samples);
          // The finished step becomes feedback for the steps that start from now on.
          this.state.observe(row, this.g.update.params.staleness);
          const te = performance.now();
          await this.evaluateAt(row.step);
          row.time.eval = (performance.now() - te) / 1000;
        }
        this.iteration = t;
        this.state.step = Math.min(t, T);
      } catch (e) {
        if (!(e instanceof RunFault)) throw e;
        // Nothing of this iteration is kept unless the update already changed the weights.
        if (!learner.mutated) this.restore({ ...before, counters: { ...before.counters, droppedFailed: this.ctx.counters.droppedFailed } });
        else { this.iteration = t; this.state.step = Math.min(t, T); }
        await this.checkpoint();
        return { status: "failed", step: this.learnerStep, runDir, metricsPath, ...(e.code ? { code: e.code } : {}), ...(e.hint ? { hint: e.hint } : {}), message: `${e.message}. The run stopped with a checkpoint after step ${this.learnerStep}; fix the cause and continue with --resume ${runDir}` };
      }
      await this.checkpointNodes(t);
      if (opts.stopAfter !== undefined && t >= opts.stopAfter && t < last) {
        await this.checkpoint();
        return { status: "stopped", step: this.learnerStep, runDir, metricsPath, message: `stopped after step ${this.learnerStep}` };
      }
    }
    await this.checkpoint();
    return { status: "completed", step: this.learnerStep, runDir, metricsPath };
  }
}

