/**
 * The server's warm-up: while the editor sends nothing, a throwaway workspace analyses a small
 * curriculum of its own, edited the ways a user types (a value appended, a comment, a field's number,
 * a number in a `let`, a name broken and typed again), so that V8 compiles the compiler's hot paths
 * before the user's first keystrokes rather than during them. It shares nothing with the user's
 * workspace but what every analysis shares in the process (compiled code, the builtin bindings), so
 * the user's diagnostics are the same with it or without it. `startServer` starts it once the server
 * has been idle a while after publishing diagnostics (so that the first diagnostics do not wait for
 * the warm-up's first, cold analysis), runs one step at a time when no re-check is pending, and stops
 * at the first edit (see lsp/server.ts).
 *
 * Before that, it types into a copy of the document the user opened (`warmUp`'s `documents`), in a
 * throwaway workspace of its own: the warm-up curriculum compiles the compiler, but each document
 * has paths of its own (its stdlib functions and environments, its schedules' shapes), and in a new
 * process those were still cold at the user's first keystrokes (bench/results/lsp-incremental.md,
 * session 10).
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
import type { CurriculumDecl, Decl } from "../grammar/ast.js";
import { exprsOfKind } from "../grammar/walk.js";
import { Workspace } from "./workspace.js";

/** A file no disk has (its directory does not exist): it imports only the stdlib. */
const PATH = join(tmpdir(), "tcod-lsp-warmup-0", "warmup.tcod");

const SOURCE = `import { opd } from "std/loss"
import { b2f } from "std/tcod"
import { texthouse } from "std/envs"
import { listed_format } from "std/agent"
import { paced_f2b, kl_settled } from "std/feedback"

let agent = listed_format(memory: "accumulate")
let every_n = 6 steps
let kl_threshold = 0.3

model teacher {
  path: "oracle"
  serve: embedded(smoothing: 0.1)
}
model student {
  path: "loglinear"
  serve: embedded(features: 8192, candidate_log_odds: 12)
}

curriculum warm {
  teacher: teacher
  student: student
  env: texthouse(split: "train", agent: agent)
  steps: 90
  batch: 16 tasks × 1 rollout
  max_turns: 20 turns
  prefix: b2f(every: every_n)
  horizon: paced_f2b(every: every_n, max: 20 turns, when: kl_settled(below: kl_threshold), patience: 3 steps, clock: "at_most")
  loss: opd(coef: 1.0, estimator: "full", aggregate: "seq_mean_token_mean")
  optimizer: adam(lr: 0.03, eps: 1e-6, loss_fn: "importance_sampling")
  staleness: 0 steps
  eval: evaluate(every: 30 steps, env: texthouse(split: "valid_seen", agent: agent), tasks: 32 tasks, name: "valid_seen")
}

sweep thresholds product {
  kl_threshold: [0.2, 0.3, 0.5]
}
`;

/** The text after keystroke i: the five kinds in turn, each different from the keystroke before. */
function edited(i: number): string {
  const n = Math.floor(i / 5) + 1;
  switch (i % 5) {
    case 0: return `${SOURCE}\nlet typed_${n % 3} = ${n} steps\n`;
    case 1: return SOURCE.replace("curriculum warm {", `curriculum warm { /* ${n} */`);
    case 2: return SOURCE.replace("steps: 90", `steps: ${90 + n}`);
    case 3: return SOURCE.replace("every_n = 6 steps", `every_n = ${6 + n} steps`);
    default: return n % 2 ? SOURCE.replace("agent: agent)\n  steps: 90", "agent: agen)\n  steps: 90") : SOURCE;
  }
}

/** Keystrokes of a warm-up (about 0.3 s of CPU on a warm machine; see bench/results/lsp-incremental.md). */
export const WARMUP_STEPS = 60;
/** Keystrokes typed into a copy of each document given to `warmUp`. */
export const DOCUMENT_STEPS = 80;

/** A document the user opened: its path (imports resolve from it) and text. */
export interface WarmDocument { path: string; text: string }

const splice = (text: string, at: number, len: number, s: string) => text.slice(0, at) + s + text.slice(at + len);
/** A number literal's numeral typed anew, different for each n ≥ 1: 250 → 251, 252, …; 0.3 → 0.3001, …; 1e-6 → 1.001e-6, …. */
function nudged(numeral: string, n: number): string {
  const [mant, exp] = numeral.split(/(?=[eE])/);
  const m = mant!.includes(".") ? `${mant}${String(n).padStart(3, "0")}` : exp !== undefined ? `${mant}.${String(n).padStart(3, "0")}` : String(Number(mant) + n);
  return m + (exp ?? "");
}

/**
 * The keystrokes typed into a document, in four kinds taken in turn (each keystroke's text differs
 * from the one before): a value appended at the end; a comment typed inside its first curriculum;
 * each number of its first curriculum and of its `let`s and functions typed anew, one after another;
 * a name the curriculum reads broken (its last letter deleted) and typed again. A kind the document
 * has no place for is left out; a document with no curriculum gets only the first.
 */
export function documentEdits(text: string, decls: readonly Decl[]): (n: number) => string {
  const kinds: ((k: number) => string)[] = [(k) => `${text}\nlet tcod_warmup_${k % 3} = ${k + 1} steps\n`];
  const curriculum = decls.find((d): d is CurriculumDecl => d.kind === "curriculum");
  if (curriculum) {
    const brace = text.indexOf("{", curriculum.nameSpan.end.offset);
    if (brace >= 0 && brace < curriculum.span.end.offset) kinds.push((k) => splice(text, brace + 1, 0, ` /* ${k} */`));
    const numbers = exprsOfKind([curriculum, ...decls.filter((d) => d.kind === "let" || d.kind === "fn")], "number")
      .map((lit) => ({ at: lit.span.start.offset, numeral: /^\d+(?:\.\d+)?(?:[eE]-?\d+)?/.exec(text.slice(lit.span.start.offset))?.[0] }))
      .filter((x): x is { at: number; numeral: string } => x.numeral !== undefined);
    if (numbers.length > 0) kinds.push((k) => { const x = numbers[k % numbers.length]!; return splice(text, x.at, x.numeral.length, nudged(x.numeral, Math.floor(k / numbers.length) + 1)); });
    const name = exprsOfKind([curriculum], "name").find((r) => r.name.length > 1);
    if (name) kinds.push((k) => (k % 2 === 0 ? splice(text, name.span.end.offset - 1, 1, "") : text));
  }
  return (n) => kinds[n % kinds.length]!(Math.floor(n / kinds.length));
}

/**
 * A file opened in a workspace of its own, then `steps` keystrokes: the texts `editsOf` gives from
 * its first analysis's declarations (none when it gives none).
 */
function* typeInto(path: string, text: string, steps: number,
  editsOf: (decls: readonly Decl[] | undefined) => ((i: number) => string) | undefined): Generator<void, void, void> {
  const ws = new Workspace();
  ws.setOpen(path, text);
  const edit = editsOf(ws.analyze(path).program?.modules.get(path)?.ast?.decls);
  yield;
  if (!edit) return;
  for (let i = 0; i < steps; i++) {
    ws.setOpen(path, edit(i));
    ws.analyze(path);
    yield;
  }
}

/**
 * The warm-up as steps: each call of `next()` is one analysis (a file opened, or one keystroke).
 * First each of `documents` (the user's, in workspaces of their own), then the warm-up curriculum.
 * Diagnostics are computed and dropped.
 */
export function* warmUp(documents: readonly WarmDocument[] = [], steps = WARMUP_STEPS): Generator<void, void, void> {
  for (const doc of documents) yield* typeInto(doc.path, doc.text, DOCUMENT_STEPS, (decls) => decls && documentEdits(doc.text, decls));
  yield* typeInto(PATH, SOURCE, steps, () => edited);
}

/** The warm-up's text and its keystrokes, for the tests. */
export const warmUpSource = { path: PATH, text: SOURCE, edited };
