/**
 * TurnStats: the learner batch flattened onto one token axis (signals/layout) with one entry per
 * turn: `turn.index`, `turn.kl` (mean per-token reverse KL, k1), `turn.entropy`, `turn.tokens`,
 * `episode.turns`. Episodes, groups and turns get dense ids in row order, which is sorted, so the
 * ids do not depend on scheduling. The per-turn numbers are signals' `turnStats` over the k1 token KL
 * and the surprisal −log p_S (the entropy estimate every backend can give; TurnWeights replaces it by
 * the exact entropy where its expression reads `turn.entropy` and the backend returns it).
 *
 * Both inputs arrive through the replay buffer, as experience rows: `scores` (student episodes) and
 * `demos` (expert demonstrations of an sft term).
 */
import type { TurnBatch } from "../../plan/expr.js";
import { nodeOf } from "../../plan/access.js";
import type { Plan } from "../../plan/schema.js";
import type { ExperienceRow } from "../replay.js";
import type { TokenLayout } from "../signals/layout.js";
import { surprisal, tokenKl } from "../signals/kl.js";
import { turnStats } from "../signals/tdur.js";
import type { RunContext } from "./context.js";
import { input, type Executor } from "./executor.js";

export const turnStatsExecutor: Executor<"TurnStats"> = {
  async run(_node, inputs, ctx) {
    const scores = input<ExperienceRow[]>(inputs, "scores") ?? [];
    const demos = input<ExperienceRow[]>(inputs, "demos") ?? [];
    return { stats: await runTurnStats(ctx, [...scores, ...demos], ctx.step) };
  },
};

export interface LearnerBatch {
  rows: ExperienceRow[];
  layout: TokenLayout;
  logpStudent: Float64Array;
  logpTeacher: Float64Array;
  /** Dense episode id of each row; rewards and groups per dense episode. */
  episodeOfRow: Int32Array;
  rewards: Float64Array;
  groupOf: Int32Array;
  /** One entry per student turn: dense turn ids 0..n−1 of layout.turnOf (demonstrations: ids ≥ n). */
  turns: TurnBatch;
  /** Dense episode ids below this are student episodes; the rest are demonstrations. */
  studentEpisodes: number;
}

export async function runTurnStats(ctx: Pick<RunContext, "state" | "plan" | "student" | "studentLimit">, taken: ExperienceRow[], step: number): Promise<LearnerBatch> {
  // Student rows first, then expert demonstrations (sft): the turn table (`turns`, turn-level
  // expressions, KL metrics) covers student turns only; demonstration turns get the ids after them.
  const sorted = [...taken.filter((r) => !r.demo), ...taken.filter((r) => r.demo)];
  const rows = oldLogprobsSource(ctx.plan) === "trainer" ? await trainerLogprobs(ctx, sorted) : sorted;
  let studentTurns = -1;
  const epIds = new Map<string, number>(), groupIds = new Map<string, number>(), turnIds = new Map<string, number>();
  const rowStart = new Int32Array(rows.length + 1);
  rows.forEach((r, i) => { rowStart[i + 1] = rowStart[i]! + r.tokens.length; });
  const n = rowStart[rows.length]!;
  const mask = new Float64Array(n), turnOf = new Int32Array(n).fill(-1);
  const logpStudent = new Float64Array(n), logpTeacher = new Float64Array(n);
  const episodeOfRow = new Int32Array(rows.length);
  const rewards: number[] = [], groups: number[] = [];
  const turnEpisode: number[] = [], turnIndex: number[] = [];
  rows.forEach((r, i) => {
    if (r.demo && studentTurns < 0) studentTurns = turnIds.size;
    const ek = `${r.step}:${r.episode}`;
    let e = epIds.get(ek);
    if (e === undefined) {
      e = epIds.size;
      epIds.set(ek, e);
      rewards.push(r.reward);
      const gk = `${r.step}:${r.group}`;
      if (!groupIds.has(gk)) groupIds.set(gk, groupIds.size);
      groups.push(groupIds.get(gk)!);
    }
    episodeOfRow[i] = e;
    const s = rowStart[i]!;
    let lastTurn = Number.NaN, u = -1;
    for (let j = 0; j < r.tokens.length; j++) {
      if (r.mask[j] !== 1) continue;
      if (r.turnOf[j] !== lastTurn) {
        // A turn's tokens are contiguous: look its id up once per run of tokens, not per token.
        lastTurn = r.turnOf[j]!;
        const tk = `${ek}:${lastTurn}`;
        const known = turnIds.get(tk);
        if (known === undefined) {
          u = turnIds.size;
          turnIds.set(tk, u);
          turnEpisode.push(e); turnIndex.push(lastTurn);
        } else u = known;
      }
      mask[s + j] = 1;
      turnOf[s + j] = u;
      logpStudent[s + j] = r.logprobs[j]!;
      logpTeacher[s + j] = r.teacherLogprobs[j]!;
    }
  });
  const layout: TokenLayout = { rowStart, mask, turnOf };
  const perTurn = turnStats(layout, Int32Array.from(turnEpisode), tokenKl(logpStudent, logpTeacher, mask), surprisal(logpStudent, mask));
  const U = studentTurns < 0 ? turnIds.size : studentTurns;
  const turnsPerEpisode = new Map<number, number>();
  for (const e of turnEpisode) turnsPerEpisode.set(e, (turnsPerEpisode.get(e) ?? 0) + 1);
  const studentEpisodes = U > 0 ? turnEpisode[U - 1]! + 1 : 0;
  const student = perTurn.slice(0, U);
  const turns: TurnBatch = {
    n: U,
    episodeOf: Int32Array.from(turnEpisode.slice(0, U)),
    vars: {
      "turn.index": Float64Array.from(turnIndex.slice(0, U)),
      "turn.kl": Float64Array.from(student, (t) => t.klMean),
      "turn.entropy": Float64Array.from(student, (t) => t.entropyMean),
      "turn.tokens": Float64Array.from(student, (t) => t.tokens),
      "episode.turns": Float64Array.from(turnEpisode.slice(0, U), (e) => turnsPerEpisode.get(e)!),
    },
    scalars: ctx.state.stepVars(step),
  };
  return {
    rows, layout, logpStudent, logpTeacher, episodeOfRow,
    rewards: Float64Array.from(rewards), groupOf: Int32Array.from(groups), turns, studentEpisodes,
  };
}

/**
 * Where log p_S comes from (plan Update.params.oldLogprobs): "trainer" recomputes it with the
 * trainer's current weights before the update, as Trinity's trainer does (verl compute_log_prob), so
 * a sampler with other numerics (vLLM, SGLang, another dtype) still gives exact ratios; "sampler"
 * keeps the rollout's. Absent: trainer for a served student, sampler for the embedded one (its
 * sampler and trainer are one model in one process).
 */
export function oldLogprobsSource(plan: Plan): "trainer" | "sampler" {
  const update = nodeOf(plan, "Update"), rollout = nodeOf(plan, "Rollout");
  if (update?.params.oldLogprobs) return update.params.oldLogprobs;
  const kind = rollout ? plan.resources.models[rollout.params.student]?.backend.kind : undefined;
  return kind === undefined || kind === "embedded" ? "sampler" : "trainer";
}

/**
 * The rows with `logprobs` replaced, on their mask, by the student's log-probabilities (temperature 1,
 * the loss's) under the current weights: one score call over every row (prompt = the tokens before
 * the first masked one, completion = the rest).
 */
async function trainerLogprobs(ctx: Pick<RunContext, "student" | "studentLimit">, rows: ExperienceRow[]): Promise<ExperienceRow[]> {
  const firsts = rows.map((r) => r.mask.indexOf(1));
  // Self-scored rows (demonstrations on a worker) get the trainer's own log-probabilities at the update.
  const live = rows.flatMap((r, i) => (firsts[i]! > 0 && !r.selfScored ? [i] : []));
  if (live.length === 0) return rows;
  const res = await ctx.studentLimit(() => ctx.student.score(live.map((i) => ({
    prompt: rows[i]!.tokens.slice(0, firsts[i]!), completion: rows[i]!.tokens.slice(firsts[i]!), temperature: 1,
  }))));
  const out = rows.slice();
  live.forEach((i, k) => {
    const r = rows[i]!, first = firsts[i]!, lp = res[k]?.logprobs;
    if (!lp || lp.length !== r.tokens.length - first) {
      throw new Error(`the trainer returned ${lp?.length ?? "no"} log-probabilities for a ${r.tokens.length - first}-token completion (old_logprobs: "trainer")`);
    }
    const logprobs = r.logprobs.slice();
    for (let j = first; j < r.tokens.length; j++) if (r.mask[j] === 1) logprobs[j] = lp[j - first]!;
    out[i] = { ...r, logprobs };
  });
  return out;
}

/** Student entropy per turn from the backend (per-turn rows only: prompt = tokens before the mask). */
export async function fillExactEntropy(ctx: RunContext, batch: LearnerBatch): Promise<void> {
  const { rows } = batch, { turnOf, rowStart } = batch.layout as Required<TokenLayout>;
  const entropy = batch.turns.vars["turn.entropy"]!;
  const reqs = rows.map((r) => {
    const first = r.mask.indexOf(1);
    return first < 0 ? null : { prompt: r.tokens.slice(0, first), completion: r.tokens.slice(first), temperature: 1, entropy: true };
  });
  const live = reqs.flatMap((q, i) => (q && rows[i]!.mask.lastIndexOf(0) < rows[i]!.mask.indexOf(1) ? [{ q, i }] : []));
  if (live.length === 0) return;
  const res = await ctx.studentLimit(() => ctx.student.score(live.map((l) => l.q)));
  const sum = new Map<number, number>(), cnt = new Map<number, number>();
  live.forEach(({ i }, k) => {
    const ent = res[k]?.entropy;
    if (!ent) return;
    const first = rows[i]!.mask.indexOf(1);
    ent.forEach((h, j) => {
      const u = turnOf[rowStart[i]! + first + j]!;
      if (u < 0 || u >= entropy.length) return; // demonstration turns are not in the turn table
      sum.set(u, (sum.get(u) ?? 0) + h);
      cnt.set(u, (cnt.get(u) ?? 0) + 1);
    });
  });
  for (const [u, s] of sum) entropy[u] = s / cnt.get(u)!;
}
