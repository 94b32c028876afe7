/**
 * Hashed sparse context features φ of the embedded student (feature hashing: each feature is an
 * integer key hashed into `dim` rows; colliding features add up, so φ holds counts).
 *
 * At response position p (0-based), with P the response prefix (the tokens before p, which covers
 * the previous one or two tokens and the position):
 *   position (capped; a per-position bias) · P ·
 *   (P, w) for each distinct word w of the current observation (the last user message) ·
 *   (P, w) for each distinct word w of the task (the first user message), a separate kind ·
 *   or, with `FeatureVocabulary.newlineToken` set (the student's default), (P, line, w) for each
 *   distinct word w of the observation and the line it is on instead of (P, w), so the words of a
 *   task line and of an observation line differ.
 * So the student learns, per prefix of an action, which observation/task words predict the next
 * token — which generalises across tasks (after `<action>go to`, a room named in the observation).
 * The bias is a separate dense vector (student.ts). The admissible actions of the turn context are
 * never read: the student sees the prompt only and must learn what is admissible.
 *
 * Candidate (pointer) features, when the prompt itself lists the admissible actions as quoted
 * strings (`'go to sinkbasin 1', 'take pan 1 from stoveburner 2'`, as std/agent's `tcod_format`
 * renders `{admissible}`): for every listed candidate whose tokens extend the response prefix,
 *   (next token of the candidate, position) — or (end, position) when the prefix is the whole candidate ·
 *   (next token, position, which of the candidate's first 8 words occur in the task line).
 * Why: the prefix × word features cannot copy the instance numbers and receptacles of the
 * observation ("take pan 1 from stoveburner 2"); a feature keyed on the candidate's next token lets
 * one weight ("a listed action continues with t") point at whatever the prompt lists, and the
 * task-match mask lets the student prefer the candidates that name the task's object/receptacle.
 * Only the prompt is read, as a model reading its prompt would.
 */

import { episodeMemory, MEMORY_CANDIDATE_BITS } from "./episode-memory.js";

/** What the feature extractor needs to know about the tokenizer. */
export interface FeatureVocabulary {
  userToken: number;
  endToken: number;
  /** For each token id: the id of its bare word (`" kitchen"` → `"kitchen"`), or −1 if not a word. */
  wordKey: Int32Array;
  /**
   * The newline token, when the observation's words are also keyed by their line (−1: off). Why:
   * a template such as std/agent's raw format (`task: …\nobservation: …`) repeats the task in every
   * user message, so a bag of words cannot tell "a cloth is here" (the observation line) from
   * "the task names a cloth" (the task line), and the student cannot learn when to take an object.
   */
  newlineToken: number;
  /** The `'` token that quotes listed candidates (−1: candidate features off). */
  quoteToken?: number;
  /** The `<|assistant|>` token: candidates equal to an earlier reply in the prompt get a mask bit (−1: off). */
  assistantToken?: number;
  /** The `,` token (a quoted span containing it separates two candidates, so is not one). */
  commaToken?: number;
  /** Token ids → text (the tokenizer's decode), for the episode memory features; absent: off. */
  decode?: (ids: number[]) => string;
}

/** Words of the prompt the features condition on (token ids of bare words, distinct). */
export interface PromptWords {
  observation: Int32Array;
  task: Int32Array;
  /** Distinct (line, word) pairs of the observation message as `word·8 + min(line, 7)` (empty when off; then `observation` holds the words). */
  lines: Int32Array;
  /** The candidate actions listed in the prompt (token ids, as the response would spell them); empty when none. */
  candidates?: Int32Array[];
  /** Per candidate: bit k set when its k-th word (k < 8) is a word of the task line. */
  candidateMasks?: Int32Array;
  /** Distinct first words (verbs) of the candidates whose second word (the object) is a task word: what the state offers to do with the task's object. */
  offeredVerbs?: Int32Array;
  /**
   * Episode memory (episode-memory.ts): the phase bits, the task words to key them with, and a hash
   * of the type of the receptacle the agent stands at (0: none yet).
   */
  memory?: { phase: number; taskWords: Int32Array; here: number };
}

export const MAX_POSITION = 63;
const K_POS = 3, K_OBS = 5, K_TASK = 6, K_PREFIX = 7, K_LINE = 8, K_CAND = 9, K_CAND_MASK = 10, K_OFFERED = 11, K_PHASE = 12, K_PHASE_TASK = 13,
  K_HERE = 15, K_HERE_TASK = 16;
/** Where the episode memory's candidate bits and phase bits sit in a candidate's mask. */
const MEMORY_CAND_SHIFT = 9, MEMORY_PHASE_SHIFT = MEMORY_CAND_SHIFT + MEMORY_CANDIDATE_BITS;
/** Stand-in for "the candidate is complete" in candidate keys (no token id is negative). */
const CANDIDATE_END = -1;
/** Candidates read per prompt (texthouse lists up to ~60). */
export const MAX_CANDIDATES = 128;
const MAX_LINE = 7;

/** murmur3's 32-bit finaliser over a running hash: cheap and well mixed. */
function mix(h: number, x: number): number {
  h ^= Math.imul(x | 0, 0xcc9e2d51);
  h = (h << 13) | (h >>> 19);
  h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  return h;
}
function fmix(h: number): number {
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
const SEED = 0x2545f491;
function key2(kind: number, a: number, dim: number): number { return fmix(mix(mix(SEED, kind), a)) % dim; }

function distinctWords(tokens: ArrayLike<number>, from: number, to: number, v: FeatureVocabulary, max: number): Int32Array {
  const seen = new Set<number>();
  for (let i = from; i < to && seen.size < max; i++) {
    const t = tokens[i]!;
    const w = t >= 0 && t < v.wordKey.length ? v.wordKey[t]! : -1;
    if (w >= 0) seen.add(w);
  }
  return Int32Array.from(seen);
}

/**
 * The observation and task words of a prompt `tokens[0, end)`: the last and the first
 * `<|user|>…<|end|>` segments. A prompt with no user segment is all observation.
 */
export function promptWords(tokens: ArrayLike<number>, end: number, v: FeatureVocabulary, maxWords: number): PromptWords {
  let first = -1, last = -1;
  for (let i = 0; i < end; i++) if (tokens[i] === v.userToken) { if (first < 0) first = i; last = i; }
  const segEnd = (s: number) => { let j = s + 1; while (j < end && tokens[j] !== v.endToken) j++; return j; };
  if (last < 0) {
    const lines = lineWords(tokens, 0, end, v, maxWords);
    return { observation: lines.length > 0 ? new Int32Array(0) : distinctWords(tokens, 0, end, v, maxWords), task: new Int32Array(0), lines };
  }
  // With line keys on, they replace the plain observation words (same number of active rows).
  const lines = lineWords(tokens, last + 1, segEnd(last), v, maxWords);
  const observation = lines.length > 0 ? new Int32Array(0) : distinctWords(tokens, last + 1, segEnd(last), v, maxWords);
  // On the first turn the task message is the observation message: one set of features suffices.
  const cands = candidateActions(tokens, last + 1, segEnd(last), v);
  const taskWords = taskLineWords(tokens, first + 1, segEnd(first), v);
  const masks = candidateMasks(cands, taskWords, v);
  markRepeated(cands, masks, earlierReplies(tokens, end, v));
  const memory = v.decode ? memoryOf(tokens, end, v, v.decode, taskWords, cands, masks, first) : undefined;
  return {
    observation, lines, task: first === last ? new Int32Array(0) : distinctWords(tokens, first + 1, segEnd(first), v, maxWords),
    candidates: cands, candidateMasks: masks, offeredVerbs: offeredVerbs(cands, masks, v),
    ...(memory ? { memory } : {}),
  };
}

/**
 * The episode memory of a prompt (episode-memory.ts): decodes every user message, computes the
 * phase and each candidate's bits, and writes the bits into the candidates' masks.
 */
function memoryOf(
  tokens: ArrayLike<number>, end: number, v: FeatureVocabulary, decode: (ids: number[]) => string,
  taskWords: Set<number>, cands: Int32Array[], masks: Int32Array, first: number,
): { phase: number; taskWords: Int32Array; here: number } {
  const messages: string[] = [];
  for (let i = 0; i < end; i++) {
    if (tokens[i] !== v.userToken) continue;
    let j = i + 1;
    while (j < end && tokens[j] !== v.endToken) j++;
    messages.push(decode(Array.from({ length: j - i - 1 }, (_, k) => tokens[i + 1 + k]!)));
    i = j;
  }
  const firstLine = (messages[0] ?? "").split("\n")[0] ?? "";
  const words = new Set(firstLine.replace(/^[a-z_ ]{1,24}: /i, "").toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== ""));
  const mem = episodeMemory(messages, words, cands.map((c) => decode(Array.from(c))));
  cands.forEach((_, j) => { masks[j] = masks[j]! | (mem.candidateBits[j]! << MEMORY_CAND_SHIFT) | (mem.phase << MEMORY_PHASE_SHIFT); });
  void first;
  return { phase: mem.phase, taskWords: Int32Array.from(taskWords), here: mem.here === null ? 0 : stringKey(mem.here) };
}

/**
 * The quoted candidates of the last line of `tokens[from, to)` that lists any: spans between two
 * consecutive `'` tokens with no newline or comma inside. Choice: the last such line, because
 * tcod_format quotes earlier actions in its history lines and lists the admissible ones after them.
 */
export function candidateActions(tokens: ArrayLike<number>, from: number, to: number, v: FeatureVocabulary): Int32Array[] {
  const quote = v.quoteToken ?? -1;
  if (quote < 0) return [];
  let found: Int32Array[] = [];
  let lineOfFound = -1, line = 0, open = -1;
  for (let i = from; i < to; i++) {
    const t = tokens[i]!;
    if (t === v.newlineToken) { line++; open = -1; continue; }
    if (t === v.commaToken) { open = -1; continue; }
    if (t !== quote) continue;
    if (open >= 0 && i - open > 1) {
      if (line !== lineOfFound) { found = []; lineOfFound = line; }
      if (found.length < MAX_CANDIDATES) found.push(Int32Array.from({ length: i - open - 1 }, (_, k) => tokens[open + 1 + k]!));
      open = -1;
    } else open = i;
  }
  return found;
}

/** Distinct bare words of the first line of `tokens[from, to)` (std/agent's formats put the task there). */
function taskLineWords(tokens: ArrayLike<number>, from: number, to: number, v: FeatureVocabulary): Set<number> {
  const words = new Set<number>();
  for (let i = from; i < to && tokens[i] !== v.newlineToken; i++) {
    const t = tokens[i]!;
    const w = t >= 0 && t < v.wordKey.length ? v.wordKey[t]! : -1;
    if (w >= 0) words.add(w);
  }
  return words;
}

/**
 * Verbs of the candidates whose object (second word) the task names, e.g. `put` once the agent holds
 * the task's object somewhere it can put it, `take` when it sees one. Why: a memoryless student
 * otherwise cannot tell "I hold the apple" from "I am looking for it"; the listed actions tell.
 */
function offeredVerbs(cands: Int32Array[], masks: Int32Array, v: FeatureVocabulary): Int32Array {
  const verbs = new Set<number>();
  cands.forEach((c, j) => {
    const verb = c.length > 0 && c[0]! < v.wordKey.length ? v.wordKey[c[0]!]! : -1;
    if (verb >= 0 && (masks[j]! & 2) !== 0) verbs.add(verb);
  });
  return Int32Array.from(verbs);
}

/** Bit 8 of a candidate's mask: the prompt's history already holds it as a reply (the student did it recently). */
export const REPEATED_BIT = 1 << 8;

/** The `<|assistant|>…<|end|>` replies in `tokens[0, end)` (the prompt's memory of earlier turns). */
function earlierReplies(tokens: ArrayLike<number>, end: number, v: FeatureVocabulary): Int32Array[] {
  const a = v.assistantToken ?? -1;
  const out: Int32Array[] = [];
  if (a < 0) return out;
  for (let i = 0; i < end; i++) {
    if (tokens[i] !== a) continue;
    let j = i + 1;
    while (j < end && tokens[j] !== v.endToken) j++;
    if (j < end) out.push(Int32Array.from({ length: j - i - 1 }, (_, k) => tokens[i + 1 + k]!));
    i = j;
  }
  return out;
}

/**
 * Sets REPEATED_BIT on candidates equal to an earlier reply. Why: a memoryless student loops
 * (A → B → A); the teacher, which knows where the object is, never sends it back to a place it
 * just saw empty, so with this bit the student can learn "not where I just was".
 */
function markRepeated(cands: Int32Array[], masks: Int32Array, replies: Int32Array[]): void {
  cands.forEach((c, j) => {
    if (replies.some((r) => r.length === c.length && r.every((t, k) => t === c[k]))) masks[j] = masks[j]! | REPEATED_BIT;
  });
}

function candidateMasks(cands: Int32Array[], task: Set<number>, v: FeatureVocabulary): Int32Array {
  const masks = new Int32Array(cands.length);
  cands.forEach((c, j) => {
    let m = 0, k = 0;
    for (let i = 0; i < c.length && k < 8; i++) {
      const w = c[i]! < v.wordKey.length ? v.wordKey[c[i]!]! : -1;
      if (w < 0) continue;
      if (task.has(w)) m |= 1 << k;
      k++;
    }
    masks[j] = m;
  });
  return masks;
}

/** Distinct (line, word) keys of `tokens[from, to)`, lines counted from 0 (capped at MAX_LINE). */
function lineWords(tokens: ArrayLike<number>, from: number, to: number, v: FeatureVocabulary, max: number): Int32Array {
  if (v.newlineToken < 0) return new Int32Array(0);
  const seen = new Set<number>();
  let line = 0;
  for (let i = from; i < to && seen.size < max; i++) {
    const t = tokens[i]!;
    if (t === v.newlineToken) { if (line < MAX_LINE) line++; continue; }
    const w = t >= 0 && t < v.wordKey.length ? v.wordKey[t]! : -1;
    if (w >= 0) seen.add(w * (MAX_LINE + 1) + line);
  }
  return Int32Array.from(seen);
}

/** A non-zero 31-bit hash of a string (FNV-1a), for feature keys of words that are not token ids. */
function stringKey(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 1) | 1;
}

/** Number of active rows at any position, for sizing the output buffer. */
export function featureCount(words: PromptWords): number {
  return 2 + words.observation.length + words.task.length + words.lines.length + 2 * (words.candidates?.length ?? 0) + (words.offeredVerbs?.length ?? 0)
    + (words.memory ? 2 * (1 + words.memory.taskWords.length) : 0);
}

/**
 * Writes the active feature rows at response position `pos` into `out` and returns how many.
 * `response` holds the response tokens from index `start`; position `pos` is `response[start + pos]`.
 */
export function activeFeatures(
  words: PromptWords, response: ArrayLike<number>, start: number, pos: number, dim: number, out: Int32Array,
): number {
  const p = pos < MAX_POSITION ? pos : MAX_POSITION;
  let n = 0;
  // The whole response so far (hashed): the state of an action being written. Features shared
  // across prefixes (previous token, previous two) were tried and dropped: in k1 OPD most sampled
  // tokens lie off the teacher's trie, and a feature shared between "<action>go" and some garbage
  // ending in "go" carries the garbage's penalties into the action (measured: the toy OPD run of
  // test/embedded/learning.test.ts collapses with them, learns without them).
  let prefix = mix(SEED, pos);
  for (let i = 0; i < pos; i++) prefix = mix(prefix, response[start + i]!);
  out[n++] = key2(K_POS, p, dim);
  out[n++] = fmix(mix(prefix, K_PREFIX)) % dim;
  // Keys (kind, prefix, w): the running hash of (prefix, kind) is shared by all words.
  const obs = words.observation, task = words.task;
  const hObs = mix(prefix, K_OBS), hTask = mix(prefix, K_TASK);
  for (let i = 0; i < obs.length; i++) out[n++] = fmix(mix(hObs, obs[i]!)) % dim;
  for (let i = 0; i < task.length; i++) out[n++] = fmix(mix(hTask, task[i]!)) % dim;
  const lines = words.lines, hLine = mix(prefix, K_LINE);
  for (let i = 0; i < lines.length; i++) out[n++] = fmix(mix(hLine, lines[i]!)) % dim;
  const offered = words.offeredVerbs, hOffered = mix(prefix, K_OFFERED);
  if (offered) for (let i = 0; i < offered.length; i++) out[n++] = fmix(mix(hOffered, offered[i]!)) % dim;
  const memory = words.memory;
  if (memory) {
    // (prefix, phase) and (prefix, phase, task word): e.g. "holding the task's object, not yet
    // processed, the task says hot" → after `go to`, the microwave.
    const hPhase = mix(mix(prefix, K_PHASE), memory.phase);
    out[n++] = fmix(hPhase) % dim;
    const hPhaseTask = mix(mix(prefix, K_PHASE_TASK), memory.phase);
    for (let i = 0; i < memory.taskWords.length; i++) out[n++] = fmix(mix(hPhaseTask, memory.taskWords[i]!)) % dim;
    // (prefix, phase, where the agent stands) and (…, task word): e.g. "holding the task's object,
    // not yet processed, at a microwave, the task says hot" → `heat`. Why: the phase bits tell
    // *that* the agent is somewhere, not *where*; the decisive actions (put at the target, heat/cool/clean
    // at the appliance, use at the lamp) depend on the receptacle's type, and a bag of observation
    // words cannot tell the one the agent stands at from the ones it merely saw.
    if (memory.here !== 0) {
      const hHere = mix(mix(mix(prefix, K_HERE), memory.phase), memory.here);
      out[n++] = fmix(hHere) % dim;
      const hHereTask = mix(hHere, K_HERE_TASK);
      for (let i = 0; i < memory.taskWords.length; i++) out[n++] = fmix(mix(hHereTask, memory.taskWords[i]!)) % dim;
    }
  }
  const cands = words.candidates;
  if (cands && cands.length > 0) n = candidateFeatures(cands, words.candidateMasks!, response, start, pos, p, dim, out, n);
  return n;
}

/** Appends the distinct candidate keys at position `pos` (see the file comment); returns the new count. */
function candidateFeatures(
  cands: Int32Array[], masks: Int32Array, response: ArrayLike<number>, start: number, pos: number, p: number,
  dim: number, out: Int32Array, n: number,
): number {
  const first = n;
  for (let j = 0; j < cands.length; j++) {
    const c = cands[j]!;
    if (c.length < pos) continue;
    let k = 0;
    while (k < pos && c[k] === response[start + k]) k++;
    if (k < pos) continue;
    const next = pos < c.length ? c[pos]! : CANDIDATE_END;
    const hNext = mix(mix(mix(SEED, K_CAND), p), next);
    pushDistinct(out, first, n, fmix(hNext) % dim) && n++;
    pushDistinct(out, first, n, fmix(mix(mix(hNext, K_CAND_MASK), masks[j]!)) % dim) && n++;
  }
  return n;
}

/**
 * The distinct next tokens of the listed candidates that extend the response prefix at `pos`
 * (`endToken` for a candidate the prefix completes), written to `out`; returns how many. The
 * student adds a fixed log-odds to these (its `candidateLogOdds`): a prompt-dependent prior, like
 * the fixed prior on characters, so the gradients stay exact.
 */
export function candidateNextTokens(
  words: PromptWords, response: ArrayLike<number>, start: number, pos: number, endToken: number, out: Int32Array,
): number {
  const cands = words.candidates;
  if (!cands) return 0;
  let n = 0;
  for (let j = 0; j < cands.length; j++) {
    const c = cands[j]!;
    if (c.length < pos) continue;
    let k = 0;
    while (k < pos && c[k] === response[start + k]) k++;
    if (k < pos) continue;
    pushDistinct(out, 0, n, pos < c.length ? c[pos]! : endToken) && n++;
  }
  return n;
}

/** Scalar pointer weights: the size of their hashed table (student.ts `pointer`). */
export const POINTER_SIZE = 8192;
const K_PTR = 14;

/**
 * Pointer features: for each listed candidate that extends the response prefix at `pos`, the pair
 * (its next token, key) with key = hash(position, the candidate's first token, its mask) — the mask
 * holds the task-word bits, the repeated bit and the episode-memory bits and phase. The student
 * scores each candidate with one learned *scalar* per key (not a row of V logits), and adds to each
 * token's logit the log-mean-exp of the scores of the candidates it continues. So "a `go to` whose
 * receptacle is unexplored" is one weight, whatever the receptacle's name (what a pointer network
 * learns); with all weights 0 nothing changes.
 * One pair per candidate (in candidate order) is written to `tok`/`key`; returns how many.
 */
export function candidatePointers(
  words: PromptWords, response: ArrayLike<number>, start: number, pos: number, endToken: number, tok: Int32Array, key: Int32Array,
): number {
  const cands = words.candidates, masks = words.candidateMasks;
  if (!cands || !masks) return 0;
  const p = pos < MAX_POSITION ? pos : MAX_POSITION;
  let n = 0;
  for (let j = 0; j < cands.length && n < tok.length; j++) {
    const c = cands[j]!;
    if (c.length < pos || c.length === 0) continue;
    let k = 0;
    while (k < pos && c[k] === response[start + k]) k++;
    if (k < pos) continue;
    const t = pos < c.length ? c[pos]! : endToken;
    tok[n] = t;
    key[n] = fmix(mix(mix(mix(mix(SEED, K_PTR), p), c[0]!), masks[j]!)) % POINTER_SIZE;
    n++;
  }
  return n;
}

/** Writes `row` at `out[n]` unless it is already in `out[from, n)`; true when written. */
function pushDistinct(out: Int32Array, from: number, n: number, row: number): boolean {
  for (let i = from; i < n; i++) if (out[i] === row) return false;
  out[n] = row;
  return true;
}
