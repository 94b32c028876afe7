/**
 * The vocabulary file a worker built from a config (`--model config:tiny` or a JSON config) needs for
 * a closed-vocabulary env: the env's words plus the words and punctuation of the agent format's fixed
 * texts (system prompt, templates, invalid-action feedback, parser tags), and the numbers 0–999 (turn
 * counters, instance numbers). Words are split the way the worker's tokenizer pre-tokenises text
 * (whitespace, then every ASCII punctuation character on its own, lowercased), so each entry is one
 * token there and every text the run renders tokenises without `<unk>`.
 */
import { writeFileSync } from "node:fs";
import type { AgentFormat } from "../../../plan/schema.js";
import { agentLiterals, agentWords } from "../../agent-format.js";

/** Splits text as the worker's pre-tokeniser does: runs of non-space non-punctuation, and single punctuation characters. */
export function workerWords(text: string): string[] {
  return text.toLowerCase().match(/[!-/:-@[-`{-~]|[^\s!-/:-@[-`{-~]+/g) ?? [];
}

/** Numbers written into prompts (turn counters, instance ids) beyond what an env lists. */
const NUMBERS_UP_TO = 999;

export function workerVocabulary(envVocabulary: Iterable<string>, agent: AgentFormat): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (text: string) => { for (const w of workerWords(text)) if (!seen.has(w)) { seen.add(w); out.push(w); } };
  for (const w of envVocabulary) add(w);
  for (const t of [...agentWords(agent), ...agentLiterals(agent)]) add(t);
  for (let n = 0; n <= NUMBERS_UP_TO; n++) add(String(n));
  return out;
}

/** Writes the vocabulary, one word per line (the worker's `--vocab` format); returns the path. */
export function writeWorkerVocabulary(path: string, envVocabulary: Iterable<string>, agent: AgentFormat): string {
  writeFileSync(path, workerVocabulary(envVocabulary, agent).join("\n") + "\n");
  return path;
}
