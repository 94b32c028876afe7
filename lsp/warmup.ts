/**
 * The server's warm-up: while the editor sends nothing, a throwaway workspace analyses a small
 * curriculum of its own, edited the ways a user types (a value appended, a comment, a field's number,
 * a number in a `let`, a name broken and typed again), so that V8 compiles the compiler's hot paths
 * before the user's first keystrokes rather than during them. It shares nothing with the user's
 * workspace but what every analysis shares in the process (compiled code, the builtin bindings), so
 * the user's diagnostics are the same with it or without it. `startServer` runs one step at a time
 * when no re-check is pending, and stops at the first document the editor opens after the warm-up's
 * first steps (see lsp/server.ts).
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
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

/**
 * The warm-up as steps: each call of `next()` is one analysis (the first, the file opened; then one
 * keystroke each). Diagnostics are computed and dropped.
 */
export function* warmUp(steps = WARMUP_STEPS): Generator<void, void, void> {
  const ws = new Workspace();
  ws.setOpen(PATH, SOURCE);
  ws.analyze(PATH);
  yield;
  for (let i = 0; i < steps; i++) {
    ws.setOpen(PATH, edited(i));
    ws.analyze(PATH);
    yield;
  }
}

/** The warm-up's text and its keystrokes, for the tests. */
export const warmUpSource = { path: PATH, text: SOURCE, edited };
