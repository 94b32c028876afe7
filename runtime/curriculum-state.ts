/**
 * Curriculum state: the step clock and every plan expression evaluated at its level.
 * - step level: `step` (explorer step, 1-based, TCOD's batch_id) and `total_steps`;
 * - episode level: adds `episode.expert_length` and `episode.max_turns`;
 * - turn level: vectorised over a batch of turns with `evalTurns`.
 * - feedback level: the run's own metrics so far (plan/feedback.ts) — the RunState hands each
 *   finished training row to `observe`; step and episode values then read the tracker's state.
 * Mutable state (the adaptive cap and its probe history, the feedback tracker) is saved in checkpoints.
 */
import type { Plan } from "../plan/schema.js";
import { ExprError, evalRef, evalTurns, readsFeedback, type ExprTree, type ExtFns, type ScalarVars, type TurnBatch, type ValueRef } from "../plan/expr.js";
import type { Where } from "../plan/errors.js";
import { inRange, rangeFor, type NumRange } from "../plan/ranges.js";
import type { ProbeProfile } from "./adaptive-depth.js";
import { FeedbackTracker, hasFeedback, observationOf, observeClock, type FeedbackSnapshot, type FeedbackSummary, type Observation } from "../plan/feedback.js";

export interface ProbeRecord { step: number; cap: number; profile: ProbeProfile }

export interface CurriculumSnapshot {
  /** Last completed step (0 before the first). */
  step: number;
  /** TurnOPD adaptive cap in force; null without adaptive depth. */
  adaptiveCap: number | null;
  /** The most recent probes (bounded). */
  probes: ProbeRecord[];
  /** The feedback tracker's state; absent when the plan reads no feedback. */
  feedback?: FeedbackSnapshot;
}

const MAX_PROBES_KEPT = 64;

export class CurriculumState {
  step = 0;
  adaptiveCap: number | null;
  probes: ProbeRecord[] = [];
  /** The run's own metrics so far, when any expression reads them. */
  readonly feedback: FeedbackTracker | undefined;

  constructor(private readonly plan: Plan, private readonly ext: ExtFns = {}) {
    const depth = plan.graph.nodes.find((n) => n.kind === "DepthRule");
    this.adaptiveCap = depth?.kind === "DepthRule" ? depth.params.initial : null;
    this.feedback = hasFeedback(plan.exprs) ? new FeedbackTracker(plan.exprs, ext) : undefined;
  }

  stepVars(step: number): ScalarVars {
    return { step, total_steps: this.plan.clock.steps, ...this.feedback?.vars() };
  }

  /** Takes a finished training step's metrics row (`staleness`: the pipeline's lag). */
  observe(row: Observation, staleness: number): void {
    this.feedback?.observe(observationOf(row), observeClock(row.step, staleness, this.plan.clock.steps));
  }

  /** The feedback in force (for the metrics row), or null without feedback. */
  feedbackSummary(): FeedbackSummary | null {
    return this.feedback ? this.feedback.summary() : null;
  }

  episodeVars(step: number, expertLength: number, maxTurns: number): ScalarVars {
    return { ...this.stepVars(step), "episode.expert_length": expertLength, "episode.max_turns": maxTurns };
  }

  /** A step-level value at `step`; with `range`, the field's range (plan/ranges.ts) is checked too. */
  atStep(ref: ValueRef, step: number, range?: NumRange): number {
    return this.checked(ref, evalRef(ref, this.plan.exprs, this.stepVars(step), this.ext, this.feedback?.view()), step, range);
  }

  /** An episode-level value; with `range`, checked as `atStep`'s. */
  atEpisode(ref: ValueRef, vars: ScalarVars, range?: NumRange): number {
    return this.checked(ref, evalRef(ref, this.plan.exprs, { ...vars, ...this.feedback?.vars() }, this.ext, this.feedback?.view()), vars["step"] ?? this.step + 1, range);
  }

  /** A turn-level expression over every turn of a batch. */
  atTurns(exprId: string, batch: TurnBatch): Float64Array {
    const def = this.plan.exprs[exprId];
    if (!def) throw new Error(`expression ${exprId} is not in the plan`);
    const fb = this.feedback?.view();
    return evalTurns(def.tree as ExprTree, fb ? { ...batch, feedback: fb } : batch, this.ext);
  }

  /** Where the expression came from (`file.tcod:12:12`), for an error about its value. */
  whereOf(exprId: string): Where | undefined {
    const origin = this.plan.exprs[exprId]?.origin;
    return origin ? originWhere(origin) : undefined;
  }

  /** Does the expression (or value) read the named variable? (Avoids costly inputs nobody uses.) */
  reads(ref: ValueRef | undefined, name: string): boolean {
    if (ref === undefined || typeof ref === "number") return false;
    const def = this.plan.exprs[ref.expr];
    const walk = (t: ExprTree): boolean => t.op === "var" ? t.name === name : t.op === "const" ? false : t.args.some(walk);
    return def ? walk(def.tree) : false;
  }

  recordProbe(step: number, cap: number, profile: ProbeProfile): void {
    this.adaptiveCap = cap;
    this.probes.push({ step, cap, profile });
    if (this.probes.length > MAX_PROBES_KEPT) this.probes.splice(0, this.probes.length - MAX_PROBES_KEPT);
  }

  snapshot(): CurriculumSnapshot {
    return { step: this.step, adaptiveCap: this.adaptiveCap, probes: structuredClone(this.probes), ...(this.feedback ? { feedback: this.feedback.snapshot() } : {}) };
  }

  restore(s: CurriculumSnapshot): void {
    this.step = s.step;
    this.adaptiveCap = s.adaptiveCap;
    this.probes = structuredClone(s.probes);
    if (this.feedback && s.feedback) this.feedback.restore(s.feedback);
  }

  /**
   * A value the runtime is about to use must be a number, and in its field's range: the compiler
   * checks schedules over the run, but a feedback-level one only at step 1 (later values depend on the
   * run's own metrics) and a plan .json's not at all (its constants are checked on load). A coded
   * error (TC7005) at the expression's origin rather than a crash or a silent negative learning rate:
   * the run stops inside the step, so its folder keeps the last step's checkpoint, which --resume continues.
   */
  private checked(ref: ValueRef, v: number, step: number, range: NumRange | undefined): number {
    const finite = Number.isFinite(v);
    if (finite && (!range || inRange(v, range))) return v;
    const def = typeof ref === "number" ? undefined : this.plan.exprs[ref.expr];
    const what = typeof ref === "number" ? "a constant of the plan" : `the expression ${ref.expr}${def?.level === "feedback" || (def && readsFeedback(def.tree)) ? " (it reads the run's own metrics)" : ""}`;
    const where = def?.origin ? originWhere(def.origin) : undefined;
    if (!finite) {
      throw new ExprError(`${what} evaluates to ${v} at step ${step}; a schedule must be a finite number at every step`, {
        hint: "Guard the arithmetic that reaches it (a division by a value that becomes 0, e.g. `1 - feedback.step / 1 step` at step 1) and bound the schedule, e.g. `clamp(…, 1 turn, 30 turns)`.",
        ...(where ? { where } : {}),
      });
    }
    const stated = rangeFor(range!, v);
    throw new ExprError(`${what} evaluates to ${v} at step ${step}; ${range!.what} must be ${stated}`, {
      hint: `Bound the schedule so that it stays ${stated} at every step, e.g. with \`clamp(…, lo, hi)\` (or \`max(lo, …)\` for a lower bound alone): the compiler checks a schedule that reads the run's own metrics at step 1 only.`,
      ...(where ? { where } : {}),
    });
  }
}

/** An expression's origin (`file.tcod:12:12`, compiler/lower.ts) as an error's position. */
export function originWhere(origin: string): Where | undefined {
  const m = /^(.*):(\d+):(\d+)$/.exec(origin);
  return m ? { file: m[1]!, line: Number(m[2]), column: Number(m[3]) } : undefined;
}
