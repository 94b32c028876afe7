/**
 * The run's prompts against the served models' context lengths, once the envs are open and before
 * step 1. Without it a model that reads fewer tokens than the run sends is found at step 1 (a 400 from
 * the worker's /forward_backward after the step's rollouts) or later, mid-run.
 *
 * What plays episodes is checked one by one (`contextPlays`): training's rollouts, each evaluation,
 * the TurnOPD probe, each with its env, agent format and max_turns. For each, one task's first prompt
 * is built and tokenized as the rollout builds it (runtime/rollout.ts firstTurnPrompt) — for training
 * after the longest expert prefix (TCOD-b2f) the curriculum can replay for that task, whose replayed
 * steps the prompt shows as history — and it plus the agent's max_response_tokens must fit each model
 * that reads it whose context is known (StudentBackend/TeacherBackend `context`: the worker's config,
 * vLLM's --max-model-len, SGLang's --context-length), else the run is refused (TC7004). A whole
 * episode — max_turns turns whose observations are about as long as the first and whose replies are
 * at most max_response_tokens, kept in memory ("accumulate", or a window's turns) — that may pass the
 * context is a warning with the estimate: episodes that end early never reach it.
 */
import { nodeOf } from "../plan/access.js";
import { evalRef, readsFeedback, type ExtFns } from "../plan/expr.js";
import type { AgentFormat, Plan } from "../plan/schema.js";
import { stepGrid, varsAt } from "../plan/schedules.js";
import { BackendError, type ModelContext, type Tokenizer } from "./backends/backend.js";
import type { EnvPool } from "./env-pool.js";
import type { RunGraph } from "./graph.js";
import { firstTurnPrompt } from "./rollout.js";

export interface ContextModel {
  /** The model's name in the plan (its path), for messages. */
  name: string;
  role: "student" | "teacher";
  context: ModelContext | undefined;
}

/** One kind of episode the run plays, and the models that read its prompts. */
export interface ContextPlay {
  /** What plays it, for messages: "training", "evaluation 'held-out'", "the TurnOPD probe". */
  what: string;
  envId: string;
  agentId: string;
  /** Turns an episode may take (its node's max_turns). */
  maxTurns: number;
  /** Whether the planner's expert prefix (TCOD-b2f) applies: training's episodes only. */
  prefix: boolean;
  models: ContextModel[];
}

export interface ContextSetup {
  plan: Plan;
  tokenizer: Tokenizer;
  plays: ContextPlay[];
  /** The run's TypeScript extensions, which a prefix schedule may call. */
  ext?: ExtFns;
}

/**
 * What plays episodes in the run: training's Rollout (student and teacher read its prompts), each
 * Evaluate (the student alone), the Probe (student and teacher: it scores turn KLs), the latter two
 * at their own max_turns, which may exceed training's.
 */
export function contextPlays(plan: Plan, g: Pick<RunGraph, "explore" | "probeBranch" | "planner">, student: ContextModel, teacher: ContextModel): ContextPlay[] {
  const rollouts = g.explore.filter((n) => n.kind === "Rollout");
  const train = rollouts.find((n) => !g.probeBranch.has(n.id)), probeRollout = rollouts.find((n) => g.probeBranch.has(n.id));
  if (train?.kind !== "Rollout") return [];
  const plays: ContextPlay[] = [{ what: "training", envId: train.params.env, agentId: train.params.agent, maxTurns: g.planner.params.maxTurns, prefix: true, models: [student, teacher] }];
  for (const n of plan.graph.nodes) {
    if (n.kind === "Evaluate") plays.push({ what: `evaluation '${n.params.name}'`, envId: n.params.env, agentId: n.params.agent, maxTurns: n.params.maxTurns, prefix: false, models: [student] });
  }
  const probe = nodeOf(plan, "Probe");
  if (probe) {
    const agentId = probeRollout?.kind === "Rollout" ? probeRollout.params.agent : train.params.agent;
    plays.push({ what: "the TurnOPD probe", envId: probe.params.env, agentId, maxTurns: probe.params.maxTurns, prefix: false, models: [student, teacher] });
  }
  return plays;
}

/** Refuses (TC7004) a first prompt that does not fit; returns the warnings for whole episodes that may not. */
export async function checkContextLengths(s: ContextSetup, envs: ReadonlyMap<string, EnvPool>): Promise<string[]> {
  const out: string[] = [];
  for (const play of s.plays) {
    const w = await checkPlay(s, play, envs);
    if (w) out.push(w);
  }
  return out;
}

async function checkPlay(s: ContextSetup, play: ContextPlay, envs: ReadonlyMap<string, EnvPool>): Promise<string | undefined> {
  const known = play.models.filter((m): m is ContextModel & { context: ModelContext } => m.context !== undefined);
  const spec = s.plan.resources.envs[play.envId], agent = s.plan.resources.agents[play.agentId], pool = envs.get(play.envId);
  if (known.length === 0 || !spec || !agent || !pool) return undefined;
  const task = (await pool.tasks(spec.split))[0];
  if (!task) return undefined;
  const first = await pool.with(async (env) => {
    let prefix: readonly string[] = [];
    if (play.prefix && plannerPrefix(s.plan)) {
      const expert = task.actions ?? (env.expertPath ? await env.expertPath(task) : []);
      prefix = expert.slice(0, longestPrefix(s.plan, expert.length, s.ext));
    }
    return firstTurnPrompt(env, agent, s.tokenizer, task, prefix);
  });
  if (!first) return undefined;
  const reply = agent.maxResponseTokens;
  const after = first.replayed > 0 ? `, after the longest expert prefix the curriculum replays for it (${first.replayed} actions, shown as history),` : "";
  const where = `the first prompt of task '${task.id}' (${spec.kind}, split "${spec.split}", agent '${agent.name}'${play.what === "training" ? "" : `; ${play.what}`})${after}`;
  // The smallest context first: the one a refusal names.
  const models = known.slice().sort((a, b) => a.context.tokens - b.context.tokens);
  for (const m of models) {
    const need = first.prompt.length + reply;
    if (need <= m.context.tokens) continue;
    throw new BackendError(
      `the ${m.role} model '${m.name}' reads at most ${m.context.tokens} tokens (${m.context.source}), but ${where} has ${first.prompt.length} tokens ` +
      `and a reply may add ${reply} more (max_response_tokens): ${need} > ${m.context.tokens}`,
      m.name, false,
      "Give the model more positions (max_position_embeddings in a worker's model config; vllm serve --max-model-len; SGLang --context-length), " +
      "or send less: a shorter system prompt or template, fewer max_response_tokens" + (first.replayed > 0 ? ", a shorter expert prefix (prefix:)." : "."));
  }
  // The student plays the turns the prefix leaves (maxTurns − prefix, EpisodePlanner).
  const episode = episodeEstimate(first, agent, play.maxTurns - first.replayed);
  const tightest = models[0]!;
  if (episode.tokens <= tightest.context.tokens) return undefined;
  const whose = play.what === "training" ? "a whole episode" : `a whole ${play.what} episode (max_turns ${play.maxTurns})`;
  return `TC7004: the ${tightest.role} model '${tightest.name}' reads at most ${tightest.context.tokens} tokens (${tightest.context.source}), but ${whose} may reach about ${episode.tokens}: ` +
    `${episode.turns} turns kept in memory ("${memoryName(agent)}") of a user message of about ${first.user} tokens (as the first) and a reply of up to ${reply}, after a first prompt of ${first.prompt.length}. ` +
    "Turns past the context are refused by the server mid-run; give the model more positions, a shorter agent memory (memory: window), or fewer max_turns";
}

function plannerPrefix(plan: Plan): boolean {
  return nodeOf(plan, "EpisodePlanner")?.params.prefix !== undefined;
}

/** The most steps of the run this many are evaluated at (both ends kept): a schedule's peak between them is missed only if it is narrower. */
const PREFIX_STEPS_EVALUATED = 2000;

/**
 * The longest expert prefix the EpisodePlanner replays over the run for a task whose expert path has
 * `expertLength` actions and still leaves the student a turn: its prefix schedule's largest value over
 * the run's steps, floored and clamped as the planner clamps it, to at most min(L, max_turns − 1). A
 * schedule paced by the run's own metrics — or one that cannot be evaluated before the run (an
 * extension that fails; the planner reports it at the first episode) — may reach that bound.
 */
export function longestPrefix(plan: Plan, expertLength: number, ext: ExtFns = {}): number {
  const planner = nodeOf(plan, "EpisodePlanner");
  const ref = planner?.params.prefix;
  if (!planner || ref === undefined) return 0;
  const most = Math.max(0, Math.min(expertLength, planner.params.maxTurns - 1));
  const def = typeof ref === "number" ? undefined : plan.exprs[ref.expr];
  if (def && readsFeedback(def.tree)) return most;
  let peak = -Infinity;
  try {
    for (const step of stepGrid(plan.clock.steps, PREFIX_STEPS_EVALUATED)) {
      const v = evalRef(ref, plan.exprs, varsAt(plan, step, expertLength), ext);
      if (Number.isFinite(v)) peak = Math.max(peak, Math.floor(v));
    }
  } catch {
    return most;
  }
  return peak === -Infinity ? most : Math.max(0, Math.min(peak, most));
}

/** The last prompt of an episode of `turns` student turns plus its reply, turns kept as the agent's memory keeps them. */
function episodeEstimate(first: { prompt: number[]; user: number; assistantPrefix: number; assistantSuffix: number }, agent: AgentFormat, turns: number): { tokens: number; turns: number } {
  const earlier = Math.max(0, turns - 1);
  const kept = agent.memory.kind === "window" ? Math.min(agent.memory.turns, earlier) : earlier;
  const turn = first.user + first.assistantPrefix + agent.maxResponseTokens + first.assistantSuffix;
  return { tokens: first.prompt.length + kept * turn + agent.maxResponseTokens, turns: kept + 1 };
}

function memoryName(agent: AgentFormat): string {
  return agent.memory.kind === "window" ? `window of ${agent.memory.turns} turns` : "accumulate";
}
