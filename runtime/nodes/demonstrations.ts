/**
 * Expert demonstrations for the `sft` advantage term: for each task of the step, the expert path
 * (TaskRef.actions, else env.expertPath) is played through the agent format exactly as a student
 * episode would be — same templates, history and chat memory — with the expert's response
 * (`renderAction` + the tokenizer's first stop token) in place of a sample. The student's current
 * log-probabilities of those tokens are the rows' old log-probabilities, so the importance-sampling
 * loss with advantage c is c × cross-entropy at the time the demo is built (with staleness s the
 * learner trains on it s steps later, an importance-weighted cross-entropy). A student whose train()
 * scores rows itself (StudentBackend.trainsSelfScored: a tcod worker) gets the rows unscored
 * (ExperienceRow.selfScored): the update uses its own log-probabilities, ratio exactly 1, so the loss
 * is c × cross-entropy at any staleness and the step makes no scoring call. Where the run trains on
 * whole trajectories (a served student whose chat memory accumulates), a demonstration is one row
 * and is scored by one forward over the whole episode, as student episodes are: per-turn rows would
 * repeat every earlier turn in each later row (tokens growing with the square of the turn count).
 *
 * With DART noise p (`sft(noise: p)`, Laskey et al. 2017) the expert is asked for its command at
 * each turn (env.expertAction) and, with probability p, a uniformly drawn admissible command runs
 * instead. Such a turn stays in the episode (its tokens are context for every later turn) but is no
 * training target: its mask is cleared in a trajectory row and its per-turn row dropped. A noise draw
 * that equals the expert's command is a target. The draws come from the run seed, the step and the
 * task's position in the step, so a resumed run draws the same ones.
 *
 * With `noise_from: "stale"` a noise turn runs a command the env offered at an earlier turn of the
 * demonstration and does not offer now (drawn uniformly; a turn with none is a clean turn): `open R`
 * once R is open, `take O from R` once O is taken, `go to R` while at R. Such a command does not
 * step the world (`Nothing happens.` in texthouse and ALFWorld), and repeating one is how the SFT
 * teachers' evaluations fail; the expert's next command is then its command before the mistake. It
 * costs no model call.
 *
 * With `noise_from: "guess"` a noise turn runs one of the env's guessed commands (env.guessedActions,
 * drawn uniformly; a turn with none is a clean turn): in texthouse a `take` of a goal-type object the
 * receptacle at hand does not hold, the guess the SFT teachers' failed evaluations repeat. It does
 * not step the world either (`Nothing happens.`), so the demonstrations show the expert moving on
 * after the guess. No model call.
 *
 * With `noise_from: "student"` a noise turn runs the student's own reply, sampled at temperature 1
 * (seeded like the draws), instead of a uniform admissible command. Its mistakes include commands
 * the env does not offer (`Nothing happens.`), which DART's admissible draws never produce, so the
 * demonstrations show the expert recovering from the states the student's own errors lead to: the
 * states its rollouts and evaluations reach (a learner roll-in with the expert's labels, in the
 * spirit of DAgger, Ross et al. 2011).
 */
import { parseAction, renderAction } from "../agent-format.js";
import { responseText, runEpisode, type EpisodeRecord, type EpisodeSpec, type Sampler } from "../rollout.js";
import type { ExperienceRow } from "../replay.js";
import type { ScoreRequest, ScoreResult } from "../backends/backend.js";
import { trajectoryRow, turnRows, type RowShape } from "../replay.js";
import { episodeScoreRequest, turnsChain } from "../episode-sequence.js";
import type { RunContext } from "./context.js";
import { input, type Executor, type PortData } from "./executor.js";
import type { SampledTask } from "./task-sampler.js";
import { withRetries } from "./retry.js";
import { episodeSampler } from "./rollout.js";
import type { NoiseSource } from "../../plan/enums.js";
import { mixSeed, rng, SEED_PURPOSE } from "../seeds.js";
import { EnvConfigError } from "../envs/env.js";

/** Episode indices of demonstrations sort after the step's student episodes. */
export const DEMO_EPISODE_BASE = 1_000_000;

export const demonstrationsExecutor: Executor<"Demonstrations"> = {
  async run(node, inputs, ctx) {
    const t = input<PortData["Tasks"]>(inputs, "tasks")!;
    return { demos: await buildDemonstrations(ctx, node.params.env, node.params.agent, t.tasks, ctx.step, ctx.syncedStep, node.params.maxTurns, ctx.rowShape, node.params.noise ?? 0, node.params.noiseFrom) };
  },
};

export async function buildDemonstrations(
  ctx: RunContext, envId: string, agentId: string, tasks: SampledTask[], step: number, policyStep: number, maxTurns: number,
  shape: RowShape = "turn", noise = 0, noiseFrom: NoiseSource = "admissible",
): Promise<ExperienceRow[]> {
  const format = ctx.plan.resources.agents[agentId]!;
  const pool = ctx.envs.get(envId)!;
  const stop = ctx.tokenizer.stopTokens[0];
  if (stop === undefined) throw new Error("sft demonstrations need a tokenizer with a stop token");
  const reply = (action: string) => {
    const tokens = [...ctx.tokenizer.encode(renderAction(format, action)), stop];
    return { tokens, logprobs: tokens.map(() => 0), finishReason: "stop" as const };
  };
  // Noise replies of a step's demonstrations go out together, one call a round where the backend
  // answers one call at a time (runtime/lockstep.ts); a clean demonstration plays outside the set.
  const student = noiseFrom === "student" && noise > 0 ? episodeSampler(ctx) : undefined;
  const studentReply = student?.sample;
  const played = await Promise.all(tasks.map(async ({ task, group }) => {
    const expert = noise > 0 ? null : task.actions ?? (await withRetries(ctx, `expert path of task ${task.id}`, () => pool.with(async (env) => (env.expertPath ? env.expertPath(task) : []))));
    if (expert !== null && expert.length === 0) return null;
    const spec: EpisodeSpec = {
      index: DEMO_EPISODE_BASE + group, task, group: DEMO_EPISODE_BASE + group, prefixActions: [],
      studentTurns: expert === null ? maxTurns : Math.min(expert.length, maxTurns), capped: false, truncatedReward: 0, temperature: 1,
      // Seeds the student's noise replies (noise_from "student"); clean and admissible-noise demonstrations sample nothing.
      seed: mixSeed(ctx.seed, SEED_PURPOSE.demos, step, group),
      horizon: maxTurns, expertLength: expert?.length ?? 0,
    };
    /** Turn indices where a noise command ran instead of a different expert command. */
    let noisy = new Set<number>();
    const record = await withRetries(ctx, `demonstration of task ${task.id}`, () =>
      pool.with((env) => {
        let i = 0;
        noisy = new Set();
        const offeredBefore = new Set<string>();
        const draw = rng(mixSeed(ctx.seed, SEED_PURPOSE.demos, step, group));
        const script: Sampler = async (req) => {
          const turn = i++;
          if (expert !== null) return reply(expert[turn]!);
          if (!env.expertAction) {
            throw new EnvConfigError(`sft(noise: ${noise}) needs an env whose expert acts from any state; ${env.kind} replays recorded paths only`,
              env.kind, "Use sft(noise: 0) with this env.");
          }
          const best = await env.expertAction();
          const options = req.context?.admissible ?? [];
          if (studentReply && draw() < noise) {
            const out = await studentReply(req);
            if (parseAction(format, responseText(ctx.tokenizer, out.tokens)) !== best) noisy.add(turn);
            return out;
          }
          if (noiseFrom === "guess") {
            if (!env.guessedActions) {
              throw new EnvConfigError(`sft(noise_from: "guess") needs an env that can name an agent's guesses; ${env.kind} cannot`,
                env.kind, "Use noise_from: \"stale\" or \"student\" with this env.");
            }
            if (draw() < noise) {
              const guesses = await env.guessedActions();
              if (guesses.length > 0) {
                noisy.add(turn);
                return reply(guesses[Math.floor(draw() * guesses.length)]!);
              }
            }
            return reply(best);
          }
          if (noiseFrom === "stale") {
            // Commands offered at an earlier turn and not now, in the order first offered.
            const now = new Set(options);
            const stale = [...offeredBefore].filter((c) => !now.has(c));
            for (const c of options) offeredBefore.add(c);
            if (draw() < noise && stale.length > 0) {
              noisy.add(turn);
              return reply(stale[Math.floor(draw() * stale.length)]!);
            }
            return reply(best);
          }
          if (!studentReply && draw() < noise && options.length > 0) {
            const pick = options[Math.floor(draw() * options.length)]!;
            if (pick !== best) noisy.add(turn);
            return reply(pick);
          }
          return reply(best);
        };
        const play = () => runEpisode(env, script, format, ctx.tokenizer, spec, policyStep);
        return student ? student.play(play) : play();
      }));
    if (record.turns.length === 0 || noisy.size === record.turns.length) return null;
    return { record, noisy };
  }));
  const kept = played.filter((p) => p !== null);
  // A student that trains on rows scored by the update itself (a tcod worker) needs no scoring call:
  // the demonstrations train at ratio exactly 1 (cross-entropy's gradient at any staleness).
  const selfScored = ctx.student.trainsSelfScored === true;
  if (selfScored) for (const { record } of kept) for (const t of record.turns) t.logprobs = new Array<number>(t.response.length).fill(0);
  else await scoreTogether(ctx, kept.map((k) => k.record), shape);
  const rows: ExperienceRow[] = [];
  for (const { record, noisy } of kept) {
    // Teacher log-probabilities = the student's own: the OPD term is exactly 0 on demonstrations.
    const scored = { record, teacher: record.turns.map((t) => t.logprobs) };
    const made = shape === "trajectory" ? [trajectoryRow(step, scored, policyStep)].filter((r) => r !== null) : turnRows(step, scored, policyStep);
    for (const r of made) {
      if (noisy.size > 0) {
        // A noise turn is context, not a target (see the file comment).
        if (shape !== "trajectory") { if (noisy.has(r.turnOf.find((k) => k >= 0)!)) continue; }
        else r.turnOf.forEach((k, j) => { if (noisy.has(k)) { r.mask[j] = 0; r.turnOf[j] = -1; } });
      }
      rows.push({ ...r, demo: true, ...(selfScored ? { selfScored: true as const } : {}) });
    }
  }
  return rows.sort((a, b) => a.episode - b.episode || a.turnOf[a.turnOf.length - 1]! - b.turnOf[b.turnOf.length - 1]!);
}

/**
 * The student's log-probabilities of every demonstration's responses (`turn.logprobs`), in one
 * request after all are played (a backend that answers one call at a time gets them as one batch):
 * one sequence per demonstration where the run trains on whole trajectories, else one per turn.
 */
async function scoreTogether(ctx: RunContext, records: EpisodeRecord[], shape: RowShape): Promise<void> {
  const requests: ScoreRequest[] = [];
  const slicers = records.map((record) => {
    const at = requests.length;
    if (shape === "trajectory" && ctx.student.scoresSequences === true && turnsChain(record.turns)) {
      const one = episodeScoreRequest(record.turns, { temperature: 1 });
      requests.push(one.request);
      return (res: ScoreResult[]) => one.slice(res[at]!);
    }
    for (const t of record.turns) requests.push({ prompt: t.prompt, completion: t.response, temperature: 1 });
    return (res: ScoreResult[]) => res.slice(at, at + record.turns.length);
  });
  if (requests.length === 0) return;
  const results = await ctx.studentLimit(() => ctx.student.score(requests));
  records.forEach((record, i) => {
    const scores = slicers[i]!(results);
    record.turns.forEach((t, k) => { t.logprobs = scores[k]!.logprobs; });
  });
}
