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
import { EnvConfigError, type EnvAdapter, type Observation, type StepResult, type TaskRef } from "./envs/env.js";
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
 * What the student's next user message shows, kept up to date from the env's answers: the history
 * of steps so far, the observation, the admissible actions and ScienceWorld's compact action list.
 */
interface Shown {
  history: HistoryEntry[];
  observation: string;
  admissible: string[];
  compact: { actionTemplates?: string[]; objects?: string[] };
}

function shownAtReset(first: Observation): Shown {
  return { history: [], observation: first.text, admissible: first.admissible, compact: { actionTemplates: first.actionTemplates, objects: first.objects } };
}

/** Records a step that sent `action` and got `r`. */
function shownAfterStep(shown: Shown, action: string, r: StepResult): void {
  shown.history.push({ observation: shown.observation, action });
  shown.observation = r.observation;
  shown.admissible = r.admissible;
  shown.compact = { actionTemplates: r.actionTemplates, objects: r.objects };
}

/** Records a reply the env answered without a step (`answer`: its feedback, or the agent format's). */
function shownAfterReply(shown: Shown, action: string, answer: string): void {
  shown.history.push({ observation: shown.observation, action });
  shown.observation = answer;
}

/**
 * The prompt of an episode's first student turn, built as runEpisode builds it, with its parts'
 * lengths: what the start-up context check (runtime/preflight-context.ts) measures. `prefix`: expert
 * actions replayed first (TCOD-b2f); where one of them ends the episode (no student turn would
 * follow), the prompt after the longest replay that leaves one, which `replayed` counts.
 */
export async function firstTurnPrompt(env: EnvAdapter, format: AgentFormat, tokenizer: Tokenizer, task: TaskRef, prefix: readonly string[] = []):
  Promise<{ prompt: number[]; system: number; user: number; assistantPrefix: number; assistantSuffix: number; replayed: number } | undefined> {
  const { first, shown, replay } = await replayPrefix(env, task, prefix);
  // A format the env cannot fill: runEpisode refuses it with its coded error at the first episode.
  if (!fillable(format, shown)) return undefined;
  const system = format.system.length > 0 ? tokenizer.renderSystem(format.system) : [];
  const user = tokenizer.renderUser(renderUserMessage(format, {
    task: first.task, history: shown.history, observation: shown.observation, admissible: shown.admissible, ...shown.compact,
  }));
  const prompt = new ChatMemory(format, tokenizer, system).prompt(user);
  return { prompt, system: system.length, user: user.length, assistantPrefix: tokenizer.assistantPrefix().length, assistantSuffix: tokenizer.assistantSuffix().length, replayed: replay.length };
}

/**
 * The user messages of an episode's student turns, in tokens, for the start-up estimate of a whole
 * episode (preflight-context.ts): a format that shows history (`historyWindow`) makes later messages
 * longer than the first. The first `turns` turns after `prefix` are rendered as runEpisode renders
 * them, the student stepping with `actions` (the expert's, after the prefix) and, past them, the first
 * admissible action, until the env ends the episode; `later` stands for every turn after those: the
 * longest message that showed the format's whole window, the next turn's among them (its history
 * filled with the steps played, repeated, where fewer were): past the window a message shows no more
 * steps, only other observations. `how` says whose actions were played.
 */
export async function turnUserLengths(env: EnvAdapter, format: AgentFormat, tokenizer: Tokenizer, task: TaskRef, prefix: readonly string[], actions: readonly string[], turns: number):
  Promise<{ played: number[]; later: number; how: "expert" | "admissible" | "none" } | undefined> {
  const { first, shown } = await replayPrefix(env, task, prefix);
  if (!fillable(format, shown)) return undefined;
  const window = format.historyWindow;
  const userOf = (history: readonly HistoryEntry[]) => tokenizer.renderUser(renderUserMessage(format, {
    task: first.task, history, observation: shown.observation, admissible: shown.admissible, ...shown.compact,
  })).length;
  const played: number[] = [];
  let later = 0, how: "expert" | "admissible" | "none" = "none";
  for (let t = 0; t < turns; t++) {
    if (!fillable(format, shown)) break;
    const n = userOf(shown.history);
    played.push(n);
    if (window === 0 || shown.history.length >= window) later = Math.max(later, n);
    const action = actions[t] ?? shown.admissible[0];
    if (action === undefined) break;
    if (how !== "admissible") how = t < actions.length ? "expert" : "admissible";
    const r = await env.step(action);
    shownAfterStep(shown, action, r);
    if (r.done) break;
  }
  if (fillable(format, shown)) {
    const seen = shown.history.length > 0 ? shown.history : [{ observation: shown.observation, action: "" }];
    const filled = shown.history.length >= window ? shown.history : Array.from({ length: window }, (_, i) => seen[i % seen.length]!);
    later = Math.max(later, userOf(filled));
  }
  return { played, later: later || Math.max(0, ...played), how };
}

/** A reset of `task` and the replay of `prefix`, cut where it would end the episode (firstTurnPrompt). */
async function replayPrefix(env: EnvAdapter, task: TaskRef, prefix: readonly string[]): Promise<{ first: Observation; shown: Shown; replay: readonly string[] }> {
  let replay = prefix;
  let first = await env.reset(task);
  let shown = shownAtReset(first);
  for (let i = 0; i < replay.length; i++) {
    const r = await env.step(replay[i]!);
    if (r.done) {
      // The replay ends the episode here: the longest one that leaves the student a turn is shorter.
      replay = replay.slice(0, i);
      first = await env.reset(task);
      shown = shownAtReset(first);
      for (const action of replay) shownAfterStep(shown, action, await env.step(action));
      break;
    }
    shownAfterStep(shown, replay[i]!, r);
  }
  return { first, shown, replay };
}

/** Whether the env supplied what the format shows (ScienceWorld's compact action list). */
function fillable(format: AgentFormat, shown: Shown): boolean {
  return !usesCompactActions(format) || (shown.compact.actionTemplates !== undefined && shown.compact.objects !== undefined);
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
  // The history, observation, admissible actions and ScienceWorld's compact action list the next user message shows.
  const shown = shownAtReset(first);
  if (usesCompactActions(format) && (shown.compact.actionTemplates === undefined || shown.compact.objects === undefined)) {
    throw new EnvConfigError(
      `agent format '${format.name}' shows the compact action list ({action_templates}, {objects}), but env '${env.kind}' does not supply it`,
      env.kind,
      "Only ScienceWorld through tcod's bridge (scienceworld() without `server:`) supplies action templates and objects; use an agent that lists every action with {admissible}, e.g. `agent: tcod_format()`.");
  }
  let rewardSum = 0;

  /** Steps the env, records the step in the history; true when the episode ended (record filled). */
  const stepEnv = async (action: string): Promise<boolean> => {
    const r = await env.step(action);
    shownAfterStep(shown, action, r);
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
      ? { admissible: shown.admissible.slice(), optimal: await env.optimalActions() }
      : { admissible: shown.admissible.slice() };
    const user = tokenizer.renderUser(renderUserMessage(format, { task: first.task, history: shown.history, observation: shown.observation, admissible: shown.admissible, ...shown.compact }));
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
      index: turnIndex, observation: shown.observation, prompt, response: out.tokens, logprobs: out.logprobs, action, context,
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
      const feedback = checkAction(semantics, acted, shown.admissible);
      if (feedback !== null) {
        // An unparsed reply was counted above.
        if (action !== null) record.invalidActions++;
        shownAfterReply(shown, acted, feedback);
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
        shownAfterReply(shown, text.trim(), how.text);
        continue;
      }
      // An env that validates actions (WebShop) answers a reply with no action as the empty action
      // (the TCOD workflows' parse_action returns ""): its message, no step.
      const none = checkAction(semantics, "", shown.admissible);
      if (none !== null) {
        shownAfterReply(shown, "", none);
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
