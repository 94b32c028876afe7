/**
 * TeacherScore: the teacher's log-probabilities of the student's response tokens given the same
 * prompt tokens (TCOD: teacher logprobs over prefix + response, sliced at the prompt), one call per
 * episode, bounded by the teacher's concurrency limit. Where memory accumulates and the teacher reads
 * token ids alone (a served model), the call holds one sequence, the whole episode, scored in one
 * forward and sliced at each response (runtime/episode-sequence.ts); otherwise one sequence per turn.
 */
import type { NodeOf } from "../../plan/schema.js";
import type { EpisodeRecord } from "../rollout.js";
import type { ScoredEpisode } from "../replay.js";
import { episodeScoreRequest, turnsChain } from "../episode-sequence.js";
import type { RunContext } from "./context.js";
import { withRetries } from "./retry.js";
import { topkTargetDistribution } from "../signals/topk-target.js";
import { input, type Executor } from "./executor.js";

/**
 * The opd "full" and "topk" estimators train on the exact reverse KL to a teacher distribution: the
 * student's train() must take such targets, and for "full" the teacher must return whole next-token
 * distributions (the embedded backend has both in one process; "topk" builds its target from the
 * top-k lists any served teacher reports). Refused up front, by name, rather than silently training
 * on nothing.
 */
export function checkExactKlBackends(ctx: Pick<RunContext, "student" | "teacher">, estimator: "full" | "topk"): void {
  const missing = [
    ...(estimator === "topk" || ctx.teacher.fullDistributions ? [] : ["the teacher backend does not return full next-token distributions"]),
    ...(ctx.student.exactKlTargets ? [] : ["the student backend does not train on exact-KL targets"]),
  ];
  if (missing.length > 0) {
    throw new Error(`the opd estimator "${estimator}" cannot run here: ${missing.join("; ")}. ` +
      (estimator === "full"
        ? `Use the embedded backend (it holds teacher and student in one process), or opd(estimator: "k1") / "topk" on other backends`
        : `Train with the embedded backend or a tcod worker, or use opd(estimator: "k1")`));
  }
}

/**
 * With `withDistributions` (the `full` OPD estimator), the teacher's full next-token distribution
 * at every response token is kept (ScoredEpisode.teacherDistributions).
 * With `withTopk` (the `topk` OPD estimator), the teacher distribution kept at every response token
 * is built from its top-k alternatives and the sampled token's score (signals/topk-target.ts).
 */
export const teacherScoreExecutor: Executor<"TeacherScore"> = {
  async run(node, inputs, ctx) {
    const episodes = input<EpisodeRecord[]>(inputs, "episodes")!;
    return { scores: await runTeacherScore(node, ctx, episodes, node.params.topk > 0, node.params.distributions) };
  },
};

export async function runTeacherScore(
  node: NodeOf<"TeacherScore">, ctx: RunContext, episodes: EpisodeRecord[], withTopk = false, withDistributions = false,
): Promise<ScoredEpisode[]> {
  const { temperature, topk } = node.params;
  if (withDistributions) checkExactKlBackends(ctx, "full");
  else if (withTopk) checkExactKlBackends(ctx, "topk");
  return Promise.all(episodes.map(async (record) => {
    if (record.turns.length === 0) return { record, teacher: [] };
    // One forward over the episode where memory accumulates and the teacher reads tokens alone.
    const whole = !withDistributions && ctx.teacher.scoresSequences === true && turnsChain(record.turns);
    const results = await withRetries(ctx, `teacher scoring of episode ${record.spec.index}`, () => ctx.teacherLimit(async () => {
      if (whole) {
        const one = episodeScoreRequest(record.turns, { temperature, ...(topk > 0 ? { topk } : {}) });
        return one.slice((await ctx.teacher.score([one.request]))[0]!);
      }
      return ctx.teacher.score(record.turns.map((t) => ({
        prompt: t.prompt, completion: t.response, temperature, context: t.context,
        ...(topk > 0 ? { topk } : {}),
        ...(withDistributions ? { full: true } : {}),
      })));
    }));
    const teacher = record.turns.map((t, i) => {
      const lp = results[i]?.logprobs;
      if (!lp || lp.length !== t.response.length) {
        throw new Error(`teacher returned ${lp?.length ?? "no"} logprobs for a ${t.response.length}-token response (episode ${record.spec.index}, turn ${t.index}); teacher and student must share a tokenizer`);
      }
      return lp;
    });
    const dists = withDistributions ? {
      teacherDistributions: record.turns.map((t, i) => {
        const d = results[i]?.distributions;
        if (!d || d.length !== t.response.length) {
          throw new Error(`teacher returned ${d?.length ?? "no"} full distributions for a ${t.response.length}-token response (episode ${record.spec.index}, turn ${t.index}); the opd "full" estimator needs them at every response token`);
        }
        return d;
      }),
    } : {};
    if (!withTopk) return { record, teacher, ...dists };
    // The tail spreads over every row the student's train() normalises over (padded vocabularies too).
    const vocab = ctx.student.outputSize ?? ctx.student.tokenizer.vocabSize;
    const teacherDistributions = record.turns.map((t, i) => {
      const lists = results[i]?.topk;
      if (!lists || lists.length !== t.response.length) {
        throw new Error(`the teacher returned no top-k lists for episode ${record.spec.index}, turn ${t.index}; the topk estimator needs a teacher that reports top-k log-probabilities`);
      }
      return t.response.map((token, j) => topkTargetDistribution(lists[j]!, { token, logprob: teacher[i]![j]! }, vocab));
    });
    return { record, teacher, teacherDistributions };
  }));
}
