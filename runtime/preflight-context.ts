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
 * episode — max_turns turns whose replies are at most max_response_tokens, kept in memory
 * ("accumulate", or a window's turns) — that may pass the context is a warning with the estimate:
 * episodes that end early never reach it. Its user messages are measured, not taken to be the
 * first's: a format that shows history grows them turn by turn up to its window, so the first
 * PLAYED_TURNS turns are played with the expert's actions (else an admissible one) and rendered, and
 * every later turn is taken to be as long as the longest message showing the whole window
 * (rollout.ts turnUserLengths); none is taken to be shorter than the first.
 */
import { nodeOf } from "../plan/access.js";
import { evalRef, readsFeedback, type ExtFns } from "../plan/expr.js";
import type { AgentFormat, Plan } from "../plan/schema.js";
import { stepGrid, varsAt } from "../plan/schedules.js";
import { BackendError, type ModelContext, type Tokenizer } from "./backends/backend.js";
import type { EnvPool } from "./env-pool.js";
import type { RunGraph } from "./graph.js";
import { firstTurnPrompt, turnUserLengths } from "./rollout.js";

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
  const opening = await pool.with(async (env) => {
    const replays = play.prefix && plannerPrefix(s.plan);
    // An expert the estimate alone reads (below) may fail: the estimate then plays admissible actions.
    const expert = task.actions ?? (!env.expertPath ? [] : replays ? await env.expertPath(task) : await env.expertPath(task).catch(() => []));
    const prefix = replays ? expert.slice(0, longestPrefix(s.plan, expert.length, s.ext)) : [];
    const first = await firstTurnPrompt(env, agent, s.tokenizer, task, prefix);
    return first && { first, prefix: prefix.slice(0, first.replayed), expert };
  });
  if (!opening) return undefined;
  const first = opening.first;
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
  const turns = play.maxTurns - first.replayed;
  const users = await pool.with((env) => turnUserLengths(env, agent, s.tokenizer, task, opening.prefix, opening.expert.slice(opening.prefix.length), Math.min(turns, PLAYED_TURNS)));
  if (!users) return undefined;
  const episode = episodeEstimate(first, users, agent, turns);
  const tightest = models[0]!;
  if (episode.tokens <= tightest.context.tokens) return undefined;
  const whose = play.what === "training" ? "a whole episode" : `a whole ${play.what} episode (max_turns ${play.maxTurns})`;
  return `TC7004: the ${tightest.role} model '${tightest.name}' reads at most ${tightest.context.tokens} tokens (${tightest.context.source}), but ${whose} may reach about ${episode.tokens}: ` +
    `${episode.turns} turns kept in memory ("${memoryName(agent)}") of user messages of ${sizes(episode.users)} tokens (${measured(users, agent)}) and replies of up to ${reply}, after a first prompt of ${first.prompt.length}. ` +
    "Turns past the context are refused by the server mid-run; give the model more positions, a shorter agent memory (memory: window), or fewer max_turns";
}

/** Student turns played at start-up to measure how the user message grows (a format's history window of 2 is reached by the third). */
export const PLAYED_TURNS = 4;

/** How the user messages were measured, for the warning. */
function measured(u: { played: number[]; how: "expert" | "admissible" | "none" }, agent: AgentFormat): string {
  const by = u.how === "expert" ? "with the expert's actions" : u.how === "admissible" ? "with admissible actions" : "without a step";
  const window = agent.historyWindow > 0 ? `, later ones as long as the longest showing the last ${agent.historyWindow} steps (history_window)` : ", later ones as long as the longest";
  return `the first ${u.played.length} played ${by}${window}, none shorter than the first`;
}

function sizes(users: number[]): string {
  const lo = Math.min(...users), hi = Math.max(...users);
  return lo === hi ? `about ${lo}` : `${lo}–${hi}`;
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

/**
 * The last prompt of an episode of `turns` student turns plus its reply, turns kept as the agent's
 * memory keeps them: the system prompt, each kept turn's user message (as measured: the played ones,
 * then `later`; none shorter than the first) with its reply of at most max_response_tokens, and the
 * last turn's user message.
 */
export function episodeEstimate(first: { prompt: number[]; user: number; assistantPrefix: number; assistantSuffix: number }, users: { played: number[]; later: number },
  agent: AgentFormat, turns: number): { tokens: number; turns: number; users: number[] } {
  const last = Math.max(1, turns);
  const earlier = last - 1;
  const kept = agent.memory.kind === "window" ? Math.min(agent.memory.turns, earlier) : earlier;
  // None shorter than the first: the turns played follow the expert, whose observations may be
  // shorter than those a student meets (the estimate is of what an episode may reach).
  const userAt = (t: number) => Math.max(first.user, users.played[t] ?? users.later);
  const system = first.prompt.length - first.user - first.assistantPrefix;
  let tokens = system + userAt(last - 1) + first.assistantPrefix + agent.maxResponseTokens;
  const shown = [userAt(last - 1)];
  for (let t = last - 1 - kept; t < last - 1; t++) {
    tokens += userAt(t) + first.assistantPrefix + agent.maxResponseTokens + first.assistantSuffix;
    shown.push(userAt(t));
  }
  return { tokens, turns: kept + 1, users: shown };
}

function memoryName(agent: AgentFormat): string {
  return agent.memory.kind === "window" ? `window of ${agent.memory.turns} turns` : "accumulate";
}
