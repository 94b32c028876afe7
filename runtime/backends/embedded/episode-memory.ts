/**
 * Episode memory features of the embedded student: what the episode has shown so far, read from the
 * prompt's chat memory (the user messages of earlier turns; so the agent format must keep them:
 * `memory: "accumulate"`). A model reading its own prompt could know all of it; a log-linear model
 * over bags of words cannot compute it, so it is computed here and handed over as a few bits.
 *
 * Read, line by line (a leading `label: ` such as `observation: ` is skipped), in ALFWorld's
 * phrasing, which texthouse follows:
 *   `You arrive at R.`                visited R; the agent is at R
 *   `On the R, you see …`             R explored, its contents are the listed objects
 *   `The R is open. In it, you see …` R explored (open), contents as listed
 *   `The R is closed.`                R not explored (yet)
 *   `You pick up the O from the R.`   held O, O no longer in R
 *   `You put the O in/on the R.` / `You move the O to the R.`   O in R, hands empty
 *   `You clean|heat|cool the O using the R.`   O processed
 * The task words are the words of the first line of the first user message (std/agent's formats
 * put the task there); an object "is a task object" when its type word (`mug` of `mug 2`) is one.
 *
 * Exposed as
 *   phase bits (a state of the episode, keyed with every task word and with each candidate):
 *     0–1 held: 0 nothing, 1 a task object, 2 something else · 2 the held object was processed ·
 *     3 a task object is known to lie somewhere · 4 the agent stands at an unexplored closed
 *     receptacle · 5 a task object has been put down somewhere · 6 the agent stands at a receptacle
 *     whose type the task names (the target: `shelf 2` for "put a mug on shelf")
 *   here: the type of the receptacle the agent stands at (`microwave` of `microwave 1`), or null
 *   candidate bits (per listed candidate, about the receptacle its text ends with, e.g. `cabinet 3`
 *   of `go to cabinet 3`): 0 explored · 1 holds a known task object · 2 visited.
 */

export interface EpisodeMemory {
  phase: number;
  /** The type of the receptacle the agent stands at (`microwave`), or null before the first move. */
  here: string | null;
  /** Per candidate (same order as the candidates given), the candidate bits. */
  candidateBits: Int32Array;
}

export const MEMORY_PHASE_BITS = 7;
export const MEMORY_CANDIDATE_BITS = 3;

interface State {
  here: string | null;
  explored: Set<string>;
  visited: Set<string>;
  closed: Set<string>;
  contents: Map<string, Set<string>>;
  held: string | null;
  processed: Set<string>;
  placedTaskObject: boolean;
}

const typeOf = (name: string): string => name.replace(/ \d+$/, "");

function parseList(text: string): string[] {
  const t = text.trim();
  if (t === "nothing") return [];
  return t.split(/, (?:and )?/).map((x) => x.replace(/^(?:and )?a /, "").trim()).filter((x) => x !== "");
}

function see(s: State, rec: string, list: string): void {
  const objs = parseList(list);
  s.contents.set(rec, new Set(objs));
  s.explored.add(rec);
  s.closed.delete(rec);
}

function readLine(s: State, line: string, task: ReadonlySet<string>): void {
  const text = line.replace(/^[a-z_ ]{1,24}: /i, "").trim();
  let m: RegExpExecArray | null;
  if ((m = /^You arrive at (.+?)\.(?: |$)/.exec(text))) { s.here = m[1]!; s.visited.add(m[1]!); }
  if ((m = /On the (.+?), you see (.*)\.$/.exec(text))) see(s, m[1]!, m[2]!);
  if ((m = /The (.+?) is open\. In it, you see (.*)\.$/.exec(text))) see(s, m[1]!, m[2]!);
  if ((m = /The (.+?) is closed\.$/.exec(text))) s.closed.add(m[1]!);
  if ((m = /^You pick up the (.+?) from the (.+?)\.$/.exec(text))) {
    s.held = m[1]!;
    s.contents.get(m[2]!)?.delete(m[1]!);
  }
  if ((m = /^You (?:put the (.+?) in\/on|move the (.+?) to) the (.+?)\.$/.exec(text))) {
    const o = m[1] ?? m[2]!;
    let c = s.contents.get(m[3]!);
    if (!c) s.contents.set(m[3]!, (c = new Set()));
    c.add(o);
    if (s.held === o) s.held = null;
    if (task.has(typeOf(o))) s.placedTaskObject = true;
  }
  if ((m = /^You (?:clean|heat|cool) the (.+?) using the /.exec(text))) s.processed.add(m[1]!);
}

/**
 * The memory of an episode from its user messages (oldest first) and the task words, with the
 * candidate bits of `candidates` (candidate action texts listed in the current prompt).
 */
export function episodeMemory(userMessages: readonly string[], task: ReadonlySet<string>, candidates: readonly string[]): EpisodeMemory {
  const s: State = {
    here: null, explored: new Set(), visited: new Set(), closed: new Set(), contents: new Map(),
    held: null, processed: new Set(), placedTaskObject: false,
  };
  for (const msg of userMessages) for (const line of msg.split("\n")) readLine(s, line, task);
  const isTask = (o: string) => task.has(typeOf(o));
  let knownSomewhere = false;
  for (const c of s.contents.values()) for (const o of c) if (isTask(o)) knownSomewhere = true;
  const held = s.held === null ? 0 : isTask(s.held) ? 1 : 2;
  const phase = held
    | (s.held !== null && s.processed.has(s.held) ? 4 : 0)
    | (knownSomewhere ? 8 : 0)
    | (s.here !== null && s.closed.has(s.here) && !s.explored.has(s.here) ? 16 : 0)
    | (s.placedTaskObject ? 32 : 0)
    | (s.here !== null && task.has(typeOf(s.here)) ? 64 : 0);
  const candidateBits = Int32Array.from(candidates, (c) => {
    const m = /(\w+ \d+)$/.exec(c);
    if (!m) return 0;
    const rec = m[1]!;
    let holdsTask = false;
    for (const o of s.contents.get(rec) ?? []) if (isTask(o)) holdsTask = true;
    return (s.explored.has(rec) ? 1 : 0) | (holdsTask ? 2 : 0) | (s.visited.has(rec) ? 4 : 0);
  });
  return { phase, here: s.here === null ? null : typeOf(s.here), candidateBits };
}
