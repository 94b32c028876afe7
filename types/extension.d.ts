/**
 * Types for tcod TypeScript extensions: `import type { TurnStats, StepStats } from "tcod/extension"`.
 *
 * A `.ts` module imported from a `.tcod` file (`import { w } from "./weights.ts"`) may export
 * functions of three shapes; tcod reads each signature and maps it to a tcod type:
 *
 *   (a: number, b: number, …) => number   a numeric function, usable at any level
 *   (t: TurnStats) => number              a turn-level value (e.g. a turn weight for `weighted(…, by: w)`)
 *   (s: StepStats) => number              a step-level value (e.g. a schedule)
 *
 * The functions must be pure and synchronous; esbuild bundles them beside the plan
 * (NAME.plan.bundle.mjs) and `tcod run` calls them for every step or every turn of a batch.
 */

/** What a turn-level extension sees of one turn of the learner batch. */
export interface TurnStats {
  /** The turn's index in its episode, 0-based. */
  index: number;
  /** The turn's teacher–student KL estimate (mean per-token reverse KL). */
  kl: number;
  /** The student's mean per-token entropy on the turn. */
  entropy: number;
  /** Response tokens of the turn. */
  tokens: number;
  /** Turns of the episode the turn belongs to. */
  turns: number;
}

/** What a step-level extension sees of the run's clock. */
export interface StepStats {
  /** The explorer step, 1-based. */
  step: number;
  /** The run's total steps. */
  total_steps: number;
}
