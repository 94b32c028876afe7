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
import { input, type Executor } from "./executor.js";

/**
 * The opd "full" estimator trains on the exact reverse KL, which needs a teacher that returns full
 * next-token distributions and a student whose train() takes them (the embedded backend has both
 * in one process). Refused up front, by name, rather than silently training on nothing.
 */
export function checkFullDistributionBackends(ctx: Pick<RunContext, "student" | "teacher">): void {
  const missing = [
    ...(ctx.teacher.fullDistributions ? [] : ["the teacher backend does not return full next-token distributions"]),
    ...(ctx.student.exactKlTargets ? [] : ["the student backend does not train on exact-KL targets"]),
  ];
  if (missing.length > 0) {
    throw new Error(`the opd estimator "full" cannot run here: ${missing.join("; ")}. ` +
      `Use the embedded backend (it holds teacher and student in one process), or opd(estimator: "k1") / "topk" on other backends`);
  }
}

/**
 * With `withDistributions` (the `full` OPD estimator), the teacher's full next-token distribution
 * at every response token is kept (ScoredEpisode.teacherDistributions).
 * With `withTopk` (the `topk` OPD estimator), the teacher's and the student's top-k alternatives of
 * every response token are kept too (one extra student score call per episode).
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
  if (withDistributions) checkFullDistributionBackends(ctx);
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
    const student = await withRetries(ctx, `student top-k of episode ${record.spec.index}`, () => ctx.studentLimit(async () => {
      if (ctx.student.scoresSequences === true && turnsChain(record.turns)) {
        const one = episodeScoreRequest(record.turns, { temperature: 1, topk });
        return one.slice((await ctx.student.score([one.request]))[0]!);
      }
      return ctx.student.score(record.turns.map((t) => ({ prompt: t.prompt, completion: t.response, temperature: 1, topk })));
    }));
    const lists = (res: typeof results, who: string) => record.turns.map((t, i) => {
      const l = res[i]?.topk;
      if (!l || l.length !== t.response.length) {
        throw new Error(`the ${who} returned no top-k lists for episode ${record.spec.index}, turn ${t.index}; the topk estimator needs a backend that reports top-k log-probabilities`);
      }
      return l;
    });
    return { record, teacher, ...dists, teacherTopk: lists(results, "teacher"), studentTopk: lists(student, "student") };
  }));
}
