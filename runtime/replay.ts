/**
 * Experience rows and the bounded replay buffer.
 *
 * Two row shapes (token-in/token-out; nothing is re-rendered):
 * - per-turn rows (Trinity/TCOD; the default on the embedded backend): one row per student turn, tokens = prompt + response,
 *   mask 1 on the response only; earlier turns live in the prompt.
 * - whole-trajectory rows (tinker `trajectory_to_data`; the default for served students whose memory
 *   accumulates, see defaultRowShape): one row per episode, tokens = the last
 *   prompt + the last response, mask 1 on every turn's sampled response tokens and 0 on every
 *   environment / chat-template token. Needs each prompt to extend the previous turn's prompt +
 *   response (accumulating memory); otherwise it is refused with a message naming the cause.
 *
 * The buffer keeps rows until the learner takes them; a row whose policy is older than the staleness
 * bound is dropped and counted (Trinity StalenessControlSampleStrategy).
 */
import type { NodeOf, Plan } from "../plan/schema.js";
import { UserError } from "../plan/errors.js";
import type { TokenDistribution } from "./backends/backend.js";
import type { EpisodeRecord } from "./rollout.js";

/** Per-token data of one row; response positions carry the signals, the others are 0. */
export interface ExperienceRow {
  /** Episode position in its step's batch and the step that produced it (ordering, grouping). */
  step: number;
  episode: number;
  group: number;
  /** Turn index of each token (−1 on non-student tokens); per-turn rows hold one turn. */
  turnOf: number[];
  tokens: number[];
  mask: number[];
  /** Student sampling logprobs on mask positions. */
  logprobs: number[];
  /** Teacher logprobs on mask positions. */
  teacherLogprobs: number[];
  /** Episode reward (copied onto every turn, TCOD) for GRPO and metrics. */
  reward: number;
  /** Training steps completed by the policy that sampled this row. */
  policyStep: number;
  /** An expert demonstration (sft term), not a student sample. */
  demo?: true;
  /**
   * Not scored before training (demonstrations on a student with StudentBackend.trainsSelfScored):
   * `logprobs` and `teacherLogprobs` are 0 placeholders and the update takes the model's own
   * log-probabilities as the old ones (ratio 1, TrainRow.oldLogprobs null).
   */
  selfScored?: true;
  /**
   * The teacher's next-token distribution per token (null off the mask), for the opd `full` estimator
   * (the teacher's own) and `topk` (built from its top-k lists).
   */
  teacherDistributions?: (TokenDistribution | null)[];
}

export interface ScoredEpisode {
  record: EpisodeRecord;
  /** Teacher logprobs of each turn's response tokens, aligned with `record.turns`. */
  teacher: number[][];
  /** Per turn, per response token: the teacher distribution (the `full` and `topk` estimators only). */
  teacherDistributions?: (TokenDistribution | null)[][];
}

export type RowShape = "turn" | "trajectory";

/**
 * The row shape a plan trains on when its curriculum does not say: whole trajectories for a served
 * student (the GPU path) whose chat memory accumulates — one sequence per episode, trained in one
 * forward/backward — and per-turn rows otherwise (the embedded student, windowed memory).
 */
export function defaultRowShape(plan: Plan, rollout: NodeOf<"Rollout">): RowShape {
  const served = plan.resources.models[rollout.params.student]?.backend.kind !== "embedded";
  const memory = plan.resources.agents[rollout.params.agent]?.memory.kind;
  return served && memory === "accumulate" ? "trajectory" : "turn";
}

export function turnRows(step: number, e: ScoredEpisode, policyStep: number): ExperienceRow[] {
  return e.record.turns.map((t, i) => {
    const p = t.prompt.length, n = t.response.length;
    const zeros = new Array<number>(p).fill(0);
    const dists = e.teacherDistributions ? { teacherDistributions: [...new Array<null>(p).fill(null), ...e.teacherDistributions[i]!] } : {};
    return {
      ...dists,
      step, episode: e.record.spec.index, group: e.record.spec.group,
      turnOf: [...new Array<number>(p).fill(-1), ...new Array<number>(n).fill(t.index)],
      tokens: [...t.prompt, ...t.response],
      mask: [...zeros, ...new Array<number>(n).fill(1)],
      logprobs: [...zeros, ...t.logprobs],
      teacherLogprobs: [...zeros, ...e.teacher[i]!],
      reward: e.record.reward,
      policyStep,
    };
  });
}

export class TrajectoryShapeError extends UserError {
  readonly code = "TC7007";
}

export function trajectoryRow(step: number, e: ScoredEpisode, policyStep: number): ExperienceRow | null {
  const turns = e.record.turns;
  const last = turns[turns.length - 1];
  if (!last) return null;
  const tokens = [...last.prompt, ...last.response];
  const mask = new Array<number>(tokens.length).fill(0);
  const turnOf = new Array<number>(tokens.length).fill(-1);
  const logprobs = new Array<number>(tokens.length).fill(0);
  const teacherLogprobs = new Array<number>(tokens.length).fill(0);
  const teacherDistributions = e.teacherDistributions ? new Array<TokenDistribution | null>(tokens.length).fill(null) : undefined;
  turns.forEach((t, i) => {
    const at = t.prompt.length;
    // The turn's prompt + response must sit, unchanged, at the start of the final sequence.
    for (let j = 0; j < at + t.response.length; j++) {
      const want = j < at ? t.prompt[j] : t.response[j - at];
      if (tokens[j] !== want) {
        throw new TrajectoryShapeError(
          `whole-trajectory rows need every prompt to extend the previous turn (accumulating chat memory); ` +
          `turn ${t.index} of episode ${e.record.spec.index} differs at token ${j}. Use per-turn rows or memory: accumulate.`,
        );
      }
    }
    for (let j = 0; j < t.response.length; j++) {
      mask[at + j] = 1;
      turnOf[at + j] = t.index;
      logprobs[at + j] = t.logprobs[j]!;
      teacherLogprobs[at + j] = e.teacher[i]![j]!;
      if (teacherDistributions) teacherDistributions[at + j] = e.teacherDistributions![i]![j] ?? null;
    }
  });
  return {
    step, episode: e.record.spec.index, group: e.record.spec.group, turnOf, tokens, mask, logprobs,
    teacherLogprobs, reward: e.record.reward, policyStep,
    ...(teacherDistributions ? { teacherDistributions } : {}),
  };
}

export interface BufferSnapshot { rows: ExperienceRow[]; droppedStale: number; droppedOverflow: number }

/**
 * FIFO of rows between actors and learner. Bounded: on overflow the oldest rows are dropped and
 * counted (a learner that cannot keep up must not grow memory without limit).
 */
export class ReplayBuffer {
  private rows: ExperienceRow[] = [];
  droppedStale = 0;
  droppedOverflow = 0;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error(`replay buffer capacity must be ≥ 1, got ${capacity}`);
  }

  get size(): number { return this.rows.length; }

  push(rows: readonly ExperienceRow[]): void {
    for (const r of rows) this.rows.push(r);
    const over = this.rows.length - this.capacity;
    if (over > 0) {
      this.rows.splice(0, over);
      this.droppedOverflow += over;
    }
  }

  /**
   * Removes and returns the rows produced at steps ≤ `upToStep` whose policy is fresh enough for a
   * learner about to train step `learnerStep`: policyStep ≥ learnerStep − 1 − staleness
   * (staleness 0 = synchronous: the rows of step t come from the policy after update t − 1).
   * Older rows are dropped and counted. Rows come back sorted by (step, episode, turn).
   */
  take(upToStep: number, learnerStep: number, staleness: number): { rows: ExperienceRow[]; dropped: number } {
    const keep: ExperienceRow[] = [];
    const out: ExperienceRow[] = [];
    let dropped = 0;
    for (const r of this.rows) {
      if (r.step > upToStep) keep.push(r);
      else if (r.policyStep < learnerStep - 1 - staleness) dropped++;
      else out.push(r);
    }
    this.rows = keep;
    this.droppedStale += dropped;
    out.sort((a, b) => a.step - b.step || a.episode - b.episode || firstTurn(a) - firstTurn(b));
    return { rows: out, dropped };
  }

  snapshot(): BufferSnapshot {
    return { rows: this.rows.map((r) => ({ ...r })), droppedStale: this.droppedStale, droppedOverflow: this.droppedOverflow };
  }

  restore(s: BufferSnapshot): void {
    this.rows = s.rows.map((r) => ({ ...r }));
    this.droppedStale = s.droppedStale;
    this.droppedOverflow = s.droppedOverflow;
  }
}

function firstTurn(r: ExperienceRow): number {
  for (let i = 0; i < r.mask.length; i++) if (r.mask[i] === 1) return r.turnOf[i]!;
  return -1;
}
