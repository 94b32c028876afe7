/**
 * One token sequence per episode: where chat memory accumulates, every turn's prompt is the previous
 * turn's prompt + response + the observation after it, so the last turn's prompt + response holds
 * the whole episode and a scorer can return every turn's log-probabilities from one forward over it
 * (causal attention: a token's log-probability depends only on the tokens before it, so slicing
 * the one forward at each response gives exactly what per-turn calls give, for far fewer tokens:
 * Σ_t |prompt_t| + |response_t| grows with the square of the turn count, the episode's length does not).
 */
import type { ScoreRequest, ScoreResult } from "./backends/backend.js";

export interface TurnTokens { prompt: number[]; response: number[] }

/** True when each turn's prompt + response sits, unchanged, at the start of the next turn's prompt. */
export function turnsChain(turns: readonly TurnTokens[]): boolean {
  if (turns.length === 0 || turns[0]!.prompt.length === 0) return false;
  for (let i = 1; i < turns.length; i++) {
    const prev = turns[i - 1]!, next = turns[i]!.prompt;
    const p = prev.prompt.length, n = p + prev.response.length;
    if (next.length < n) return false;
    for (let j = 0; j < p; j++) if (next[j] !== prev.prompt[j]) return false;
    for (let j = p; j < n; j++) if (next[j] !== prev.response[j - p]) return false;
  }
  return true;
}

/**
 * The one score request of a chained episode: the first turn's prompt as the prompt, everything
 * after it (responses and observations) as the completion; `slice` cuts the result back into the
 * per-turn results the per-turn requests would have returned.
 */
export function episodeScoreRequest(turns: readonly TurnTokens[], base: Omit<ScoreRequest, "prompt" | "completion">): {
  request: ScoreRequest; slice(result: ScoreResult): ScoreResult[];
} {
  const last = turns[turns.length - 1]!;
  const first = turns[0]!.prompt.length;
  const completion = [...last.prompt.slice(first), ...last.response];
  return {
    request: { ...base, prompt: turns[0]!.prompt, completion },
    slice(result) {
      const want = completion.length;
      if (result.logprobs.length !== want) {
        throw new Error(`the scorer returned ${result.logprobs.length} log-probabilities for a ${want}-token episode sequence; teacher and student must share a tokenizer`);
      }
      return turns.map((t) => {
        const a = t.prompt.length - first, b = a + t.response.length;
        return {
          logprobs: result.logprobs.slice(a, b),
          ...(result.topk ? { topk: result.topk.slice(a, b) } : {}),
          ...(result.entropy ? { entropy: result.entropy.slice(a, b) } : {}),
        };
      });
    },
  };
}
