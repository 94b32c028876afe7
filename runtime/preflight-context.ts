/**
 * The run's prompts against the served models' context lengths, once the envs are open and before
 * step 1. Without it a model that reads fewer tokens than the run sends is found at step 1 (a 400 from
 * the worker's /forward_backward after the step's rollouts) or later, mid-run.
 *
 * One task's first prompt is built and tokenized as the rollout builds it (runtime/rollout.ts
 * firstTurnPrompt); it plus the agent's max_response_tokens must fit each model whose context is known
 * (StudentBackend/TeacherBackend `context`: the worker's config, vLLM's --max-model-len, SGLang's
 * --context-length), else the run is refused (TC7004). A whole episode — max_turns turns whose
 * observations are about as long as the first and whose replies are at most max_response_tokens,
 * kept in memory ("accumulate", or a window's turns) — that may pass the context is a warning with
 * the estimate: episodes that end early never reach it.
 */
import type { AgentFormat, Plan } from "../plan/schema.js";
import { BackendError, type ModelContext, type Tokenizer } from "./backends/backend.js";
import type { EnvPool } from "./env-pool.js";
import { firstTurnPrompt } from "./rollout.js";

export interface ContextModel {
  /** The model's name in the plan (its path), for messages. */
  name: string;
  role: "student" | "teacher";
  context: ModelContext | undefined;
}

export interface ContextSetup {
  plan: Plan;
  envId: string;
  agentId: string;
  /** Turns an episode may take (the planner's max_turns). */
  maxTurns: number;
  tokenizer: Tokenizer;
  models: ContextModel[];
}

/** Refuses (TC7004) a first prompt that does not fit; returns the warnings for whole episodes that may not. */
export async function checkContextLengths(s: ContextSetup, envs: ReadonlyMap<string, EnvPool>): Promise<string[]> {
  const known = s.models.filter((m): m is ContextModel & { context: ModelContext } => m.context !== undefined);
  const spec = s.plan.resources.envs[s.envId], agent = s.plan.resources.agents[s.agentId], pool = envs.get(s.envId);
  if (known.length === 0 || !spec || !agent || !pool) return [];
  const task = (await pool.tasks(spec.split))[0];
  if (!task) return [];
  const first = await pool.with((env) => firstTurnPrompt(env, agent, s.tokenizer, task));
  if (!first) return [];
  const reply = agent.maxResponseTokens;
  const where = `the first prompt of task '${task.id}' (${spec.kind}, split "${spec.split}", agent '${agent.name}')`;
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
      "or send less: a shorter system prompt or template, fewer max_response_tokens.");
  }
  const out: string[] = [];
  const episode = episodeEstimate(first, agent, s.maxTurns);
  const tightest = models[0]!;
  if (episode.tokens > tightest.context.tokens) {
    out.push(`TC7004: the ${tightest.role} model '${tightest.name}' reads at most ${tightest.context.tokens} tokens (${tightest.context.source}), but a whole episode may reach about ${episode.tokens}: ` +
      `${episode.turns} turns kept in memory ("${memoryName(agent)}") of a user message of about ${first.user} tokens (as the first) and a reply of up to ${reply}, after a first prompt of ${first.prompt.length}. ` +
      "Turns past the context are refused by the server mid-run; give the model more positions, a shorter agent memory (memory: window), or fewer max_turns");
  }
  return out;
}

/** The last prompt of an episode of `maxTurns` turns plus its reply, turns kept as the agent's memory keeps them. */
function episodeEstimate(first: { prompt: number[]; user: number; assistantPrefix: number; assistantSuffix: number }, agent: AgentFormat, maxTurns: number): { tokens: number; turns: number } {
  const earlier = Math.max(0, maxTurns - 1);
  const kept = agent.memory.kind === "window" ? Math.min(agent.memory.turns, earlier) : earlier;
  const turn = first.user + first.assistantPrefix + agent.maxResponseTokens + first.assistantSuffix;
  return { tokens: first.prompt.length + kept * turn + agent.maxResponseTokens, turns: kept + 1 };
}

function memoryName(agent: AgentFormat): string {
  return agent.memory.kind === "window" ? `window of ${agent.memory.turns} turns` : "accumulate";
}
