/**
 * One episode through the agent format, token-in/token-out, exactly as TCOD's workflows run it
 * (docs/REFERENCES.md#tcod-f2b, #tcod-episodes):
 * - an optional expert prefix is replayed first without model calls (TCOD-b2f); the replayed steps
 *   become history entries the template shows, but the student's chat memory starts empty;
 * - the student then plays at most `studentTurns` turns (TCOD-f2b caps this for training);
 * - prompts are token segments appended to the chat memory, never re-rendered from text: turn t+1's
 *   prompt extends turn t's prompt + response when the memory accumulates;
 * - the env's episode semantics (plan/env-semantics.ts, shared with the Trinity plugin) decide what a
 *   capped episode scores (ScienceWorld keeps its score) and whether an action the env does not offer
 *   is sent or answered with feedback without a step (WebShop).
 */
import type { AgentFormat } from "../plan/schema.js";
import { EnvConfigError, type EnvAdapter, type TaskRef } from "./envs/env.js";
import type { SampleRequest, SampleResult, Tokenizer, TurnContext } from "./backends/backend.js";
import { parseAction, renderUserMessage, usesCompactActions, type HistoryEntry } from "./agent-format.js";
import { mixSeed } from "./seeds.js";
import { cappedReward, checkAction, semanticsOf } from "../plan/env-semantics.js";

export interface EpisodeSpec {
  /** Position of the episode in its batch; results are always reduced in this order. */
  index: number;
  task: TaskRef;
  /** Index of the task in the step's batch (GRPO groups the rollouts of one task). */
  group: number;
  /** Expert actions to replay before the student plays (TCOD-b2f); empty for none. */
  prefixActions: readonly string[];
  /** Turns the student may play. */
  studentTurns: number;
  /** True when `studentTurns` is a curriculum cap below the env's budget (TCOD-f2b). */
  capped: boolean;
  /** Reward of an episode cut by the cap before the env is done (TCOD: 0). */
  truncatedReward: number;
  temperature: number;
  seed: number;
  /** Schedule values in force, kept for metrics: the horizon cap and the prefix length. */
  horizon: number;
  expertLength: number;
}

export interface TurnRecord {
  /** Turn index within the episode: replayed steps count (TCOD b2f: p + i). 0-based. */
  index: number;
  /** The environment's observation this turn answered (its text as the env gave it). */
  observation: string;
  prompt: number[];
  response: number[];
  /** log p_S of each response token under the sampling distribution. */
  logprobs: number[];
  /** The parsed action, or null when the response did not parse. */
  action: string | null;
  context: TurnContext;
  finishReason: "stop" | "length";
}

export interface EpisodeRecord {
  spec: EpisodeSpec;
  turns: TurnRecord[];
  reward: number;
  won: boolean;
  done: boolean;
  /** Cut by the curriculum cap before the env was done. */
  truncated: boolean;
  /** The expert replay finished the task: the episode yields no experience (TCOD b2f). */
  replayFinished: boolean;
  invalidActions: number;
  /** The policy version that produced the episode's samples. */
  policyVersion: number;
}

export type Sampler = (req: SampleRequest) => Promise<SampleResult>;

/**
 * The student's chat memory as token segments. `accumulate` keeps every turn (TCOD); `window`
 * keeps the last `turns` turns. Each turn's segment is its user message + the assistant reply as
 * sampled, so a later prompt contains the earlier tokens byte for byte.
 */
export class ChatMemory {
  private readonly turns: number[][] = [];
  constructor(private readonly format: AgentFormat, private readonly tokenizer: Tokenizer, private readonly system: number[]) {}

  /** The prompt of a new turn whose user message is `user` (tokens). */
  prompt(user: number[]): number[] {
    const kept = this.format.memory.kind === "window" ? this.turns.slice(this.turns.length - Math.min(this.format.memory.turns, this.turns.length)) : this.turns;
    const out = this.system.slice();
    for (const seg of kept) for (const t of seg) out.push(t);
    for (const t of user) out.push(t);
    for (const t of this.tokenizer.assistantPrefix()) out.push(t);
    return out;
  }

  /** Appends a finished turn. A sampled stop token is not closed a second time by the suffix. */
  push(user: number[], response: number[]): void {
    const suffix = this.tokenizer.assistantSuffix();
    const last = response[response.length - 1];
    const skip = last !== undefined && this.tokenizer.stopTokens.includes(last) && suffix[0] === last ? 1 : 0;
    this.turns.push([...user, ...this.tokenizer.assistantPrefix(), ...response, ...suffix.slice(skip)]);
  }
}

/** Response text without trailing stop tokens. */
export function responseText(tokenizer: Tokenizer, response: number[]): string {
  let end = response.length;
  while (end > 0 && tokenizer.stopTokens.includes(response[end - 1]!)) end--;
  return tokenizer.decode(response.slice(0, end));
}

/** Seed of the sample at turn `turn` of an episode. */
export const turnSeed = (episodeSeed: number, turn: number): number => mixSeed(episodeSeed, turn);

/**
 * The prompt of an episode's first student turn, built as runEpisode builds it (no expert prefix),
 * with its parts' lengths: what the start-up context check (runtime/preflight-context.ts) measures.
 */
export async function firstTurnPrompt(env: EnvAdapter, format: AgentFormat, tokenizer: Tokenizer, task: TaskRef):
  Promise<{ prompt: number[]; system: number; user: number; assistantPrefix: number; assistantSuffix: number } | undefined> {
  const first = await env.reset(task);
  // A format the env cannot fill: runEpisode refuses it with its coded error at the first episode.
  if (usesCompactActions(format) && (first.actionTemplates === undefined || first.objects === undefined)) return undefined;
  const system = format.system.length > 0 ? tokenizer.renderSystem(format.system) : [];
  const user = tokenizer.renderUser(renderUserMessage(format, {
    task: first.task, history: [], observation: first.text, admissible: first.admissible,
    actionTemplates: first.actionTemplates, objects: first.objects,
  }));
  const prompt = new ChatMemory(format, tokenizer, system).prompt(user);
  return { prompt, system: system.length, user: user.length, assistantPrefix: tokenizer.assistantPrefix().length, assistantSuffix: tokenizer.assistantSuffix().length };
}

/**
 * Plays one episode. Env and backend errors propagate (the engine drops and retries the episode).
 */
export async function runEpisode(
  env: EnvAdapter,
  sample: Sampler,
  format: AgentFormat,
  tokenizer: Tokenizer,
  spec: EpisodeSpec,
  policyVersion: number,
): Promise<EpisodeRecord> {
  const record: EpisodeRecord = {
    spec, turns: [], reward: 0, won: false, done: false, truncated: false, replayFinished: false,
    invalidActions: 0, policyVersion,
  };
  const semantics = semanticsOf(env.kind);
  const first = await env.reset(spec.task);
  const history: HistoryEntry[] = [];
  let observation = first.text;
  let admissible = first.admissible;
  // ScienceWorld's compact action list (action templates + objects), where the env supplies it.
  let compact = { actionTemplates: first.actionTemplates, objects: first.objects };
  if (usesCompactActions(format) && (compact.actionTemplates === undefined || compact.objects === undefined)) {
    throw new EnvConfigError(
      `agent format '${format.name}' shows the compact action list ({action_templates}, {objects}), but env '${env.kind}' does not supply it`,
      env.kind,
      "Only ScienceWorld through tcod's bridge (scienceworld() without `server:`) supplies action templates and objects; use an agent that lists every action with {admissible}, e.g. `agent: tcod_format()`.");
  }
  let rewardSum = 0;

  /** Steps the env, records the step in the history; true when the episode ended (record filled). */
  const stepEnv = async (action: string): Promise<boolean> => {
    const r = await env.step(action);
    history.push({ observation, action });
    observation = r.observation;
    admissible = r.admissible;
    compact = { actionTemplates: r.actionTemplates, objects: r.objects };
    rewardSum += r.reward;
    if (!r.done) return false;
    record.done = true;
    record.won = r.won;
    record.reward = rewardSum;
    return true;
  };

  // Expert prefix (TCOD-b2f): env steps with no model call; they become history, not memory.
  for (const action of spec.prefixActions) {
    if (await stepEnv(action)) {
      record.replayFinished = true;
      return record;
    }
  }

  const system = format.system.length > 0 ? tokenizer.renderSystem(format.system) : [];
  const memory = new ChatMemory(format, tokenizer, system);
  for (let i = 0; i < spec.studentTurns; i++) {
    const turnIndex = spec.prefixActions.length + i;
    const context: TurnContext = env.optimalActions
      ? { admissible: admissible.slice(), optimal: await env.optimalActions() }
      : { admissible: admissible.slice() };
    const user = tokenizer.renderUser(renderUserMessage(format, { task: first.task, history, observation, admissible, ...compact }));
    const prompt = memory.prompt(user);
    const out = await sample({
      prompt, maxTokens: format.maxResponseTokens, temperature: spec.temperature,
      seed: turnSeed(spec.seed, turnIndex), context,
    });
    if (out.tokens.length !== out.logprobs.length) {
      throw new Error(`backend returned ${out.tokens.length} tokens but ${out.logprobs.length} logprobs`);
    }
    const text = responseText(tokenizer, out.tokens);
    const action = parseAction(format, text);
    record.turns.push({
      index: turnIndex, observation, prompt, response: out.tokens, logprobs: out.logprobs, action, context,
      finishReason: out.finishReason,
    });
    memory.push(user, out.tokens);

    let envAction: string;
    // on_invalid "empty" (the official TCOD workflows): an unparsed reply is the empty action "",
    // which goes where any action goes (WebShop answers it without a step; ALFWorld and ScienceWorld
    // are stepped with it).
    if (action === null && format.onInvalid.kind === "empty") record.invalidActions++;
    const acted = action ?? (format.onInvalid.kind === "empty" ? "" : null);
    if (acted !== null) {
      // An action the env does not offer: some envs answer without stepping (WebShop; plan/env-semantics.ts).
      const feedback = checkAction(semantics, acted, admissible);
      if (feedback !== null) {
        // An unparsed reply was counted above.
        if (action !== null) record.invalidActions++;
        history.push({ observation, action: acted });
        observation = feedback;
        continue;
      }
      envAction = acted;
    }
    else {
      record.invalidActions++;
      const how = format.onInvalid;
      if (how.kind === "end") return record; // reward 0, not done
      if (how.kind === "feedback") {
        // AgentGym: reply without stepping the env; the turn still counts.
        history.push({ observation, action: text.trim() });
        observation = how.text;
        continue;
      }
      // An env that validates actions (WebShop) answers a reply with no action as the empty action
      // (the TCOD workflows' parse_action returns ""): its message, no step.
      const none = checkAction(semantics, "", admissible);
      if (none !== null) {
        history.push({ observation, action: "" });
        observation = none;
        continue;
      }
      envAction = text.trim();
    }
    if (await stepEnv(envAction)) return record;
  }
  // Not done within the student's turns.
  if (spec.capped) {
    record.truncated = true;
    // ScienceWorld keeps the score earned so far (best_score / 100); the others score the plan's reward (0).
    record.reward = cappedReward(semantics, spec.truncatedReward, rewardSum);
  } else {
    record.reward = rewardSum;
  }
  return record;
}
