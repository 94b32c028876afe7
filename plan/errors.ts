/**
 * The one base class of every error that reaches the CLI as a *user* error: bad input the user can
 * fix (a plan that does not validate, a split the env does not have, a Trinity key tcod cannot
 * express, a flag that makes no sense), as opposed to a bug. The CLI (bin/) renders every one the
 * same way — `FILE:LINE:COL error CODE: message`, then `hint: …` — and exits 1; anything else that
 * escapes a command is an internal error (exit 2).
 *
 * The compiler's own diagnostics are data (compiler/diagnostics/catalogue.ts, TC1xxx–TC6xxx); what
 * is *thrown* after compilation has a code of the TC7xxx group below. It lives in plan/ because
 * the runtime, the interop targets and the CLI all stand on plan/.
 */

/** Where the problem is, as precisely as it is known. */
export interface Where {
  file: string;
  line?: number;
  column?: number;
  /** A JSON or YAML path inside the file (`$.graph.nodes[3].params`, `algorithm.policy_loss_fn`). */
  path?: string;
}

/** One problem: an error may carry several (every problem of a file in one run). */
export interface UserIssue {
  message: string;
  hint?: string;
  where?: Where;
}

/** Codes of user errors raised outside the compiler's diagnostics, with what each means (docs/diagnostics.md). */
export const USER_ERROR_CODES = {
  TC7001: "A plan file does not validate against its schema, or a constant is out of its field's range (plan/ranges.ts: the compiler's); each problem names its JSON path, and its hint what the field takes (its type, allowed values or range, from the schema) or how to remake the plan. A Trinity plugin refuses its spec.json's constants out of range the same way on load.",
  TC7002: "A plan validates but its graph cannot run (a node names a model, env or agent format the plan does not declare).",
  TC7003: "An environment refuses the plan's settings (an unknown split, task or option).",
  TC7004: "A backend or inference server cannot serve the plan (unreachable, wrong dialect, unsupported request, tokenizer mismatch).",
  TC7005: "A schedule expression cannot be evaluated at run time (a variable or an extension function is missing), or its value cannot be used: NaN or ±Infinity, or out of its field's range (plan/ranges.ts: a learning rate ≤ 0, a blend weight above 1, a horizon below 1 turn…); the error names the expression's position and the step. A Trinity plugin checks each schedule value it evaluates the same way.",
  TC7006: "A loss term the chosen backends cannot compute (e.g. the topk estimator without teacher top-k).",
  TC7007: "Experience rows of a shape the update cannot take (e.g. trajectory rows of an episode without student turns).",
  TC7008: "Per-token signals whose shapes disagree (rows, masks, logprobs).",
  TC7009: "A command-line request that cannot be carried out (a missing file, a run folder already in use, a bad flag).",
  TC7010: "A plan's TypeScript extension bundle is missing or does not load (compile the .tcod file again).",
  TC7011: "A metrics sink cannot start (e.g. --wandb without the wandb Python package, or a RUN_DIR/wandb-id that holds no W&B run id).",
  TC7012: "A feedback-level value (it reads the run's own metrics) was asked for without a metrics trace: give `--trace RUN_DIR/metrics.jsonl` or a synthetic trace.",
  TC7013: "A metrics trace cannot be read: a line that is not JSON, a training row without a numeric `step`, steps out of order, or a metric that is not a number; or it holds no training row to replay (an empty file, evaluation rows only).",
  TC7014: "A run folder's state cannot be read (resume, report, compare): a missing, truncated or foreign checkpoint, a checkpoint beyond the plan, a metrics file that does not match it, student weights that do not load; the error names the file.",
  TC7015: "A run folder cannot be written: no space left on the device, the file-size limit (ulimit -f), a disk quota, a read-only file system, permission denied, an I/O error or a folder in the file's place; the error names the file, and the last checkpoint stays valid.",
  TC7016: "A run stopped on an environment's faults: an env server or bridge process kept failing after its retries (unreachable, timed out, malformed, error or oversized answers) or failed in a way retrying cannot mend (a redirect, a 4xx answer, a bridge refusing a step of an episode it had ended on its side); the message names the env, the server or process and the last failure, the hint what to check, and the run keeps its checkpoint for --resume (a fault before step 1 leaves none: the run starts over).",
  TC7101: "A Trinity-RFT config has keys tcod cannot express; each problem names its YAML path and line.",
  TC7102: "A plan uses what Trinity-RFT cannot run; each problem names the construct.",
} as const;
export type UserErrorCode = keyof typeof USER_ERROR_CODES;

const RECOMPILE = "plans the compiler writes always load: recompile it from its source with `tcod compile FILE.tcod` rather than editing the .json by hand";

/**
 * The hints of TC7001's problems (a plan .json that does not load), one template per kind of
 * problem, `{name}` placeholders filled by `planHint`. No hint text of a plan problem lives at a
 * call site (plan/schema.ts picks the template; test/plan/plan-hints.test.ts keeps it so).
 */
export const PLAN_HINTS = {
  /** A schema problem: what the field takes, in `PLAN_EXPECTS`'s words (from the zod issue). */
  takes: `This field takes {expected}; ${RECOMPILE}.`,
  /** A key the schema does not have at that place (a typo, or a field of another plan version). */
  noSuchField: `Remove {keys}: this object has no such field (docs/plan.schema.json lists each object's fields); ${RECOMPILE}.`,
  /** A schema problem zod describes in no more detail. */
  schemaOther: `docs/plan.schema.json says what this field takes; ${RECOMPILE}.`,
  /** A constant out of its field's range (plan/ranges.ts, the compiler's TC4001). */
  range: "Choose a value {range}: the range the compiler checks in the source (plan/ranges.ts).",
  /** A graph the compiler would not write (plan/graph.ts). */
  graph: "The compiler never writes this graph; recompile the plan from its source with `tcod compile FILE.tcod` rather than editing its nodes and edges by hand.",
  /** An expression reference or arity the compiler would not write (plan/expr-check.ts). */
  exprs: "The compiler never writes this; recompile the plan from its source with `tcod compile FILE.tcod` rather than editing its expressions by hand.",
  /** A plan name that is empty or holds a control character (plan/schema.ts planNameIssue). */
  name: "Name the plan as the compiler does: its curriculum's name (letters, digits and `_`), followed for a sweep point by `@` and the point's settings, e.g. \"name\": \"f2b_small\".",
  tooDeep: "Recompile the plan from its source with `tcod compile FILE.tcod` rather than writing or editing it by hand.",
  /** A tcod.plan/1 file that cannot be converted (plan/convert.ts): the message names the command. */
  version: "Recompile the plan with the `tcod compile` command the message names; tcod.plan/1 files are converted on load only where nothing they hold is lost.",
} as const;

/** What a plan field takes, in words, for `PLAN_HINTS.takes`'s `{expected}` (from a zod issue). */
export const PLAN_EXPECTS = {
  number: "a number", int: "an integer", string: "a string", boolean: "true or false", object: "an object",
  array: "a list", record: "an object", null: "null", other: "a value of type {type}",
  oneOf: "one of {values}",
  /** Bounds: `{what}` is a number, a list of items or a string of characters. */
  atLeast: "{what} ≥ {bound}", above: "{what} > {bound}", atMost: "{what} ≤ {bound}", below: "{what} < {bound}",
  items: "a list of {count} items", characters: "a string of {count} characters",
  pattern: "a string matching {pattern}",
  multipleOf: "a multiple of {divisor}",
  /** An object some of whose fields were wrong: `field` each, joined by ", ". */
  objectWith: "an object with {fields}", field: "{key} ({expected})",
  /** The branches of a union, each in these words, joined. */
  either: "{first} or {second}",
} as const;

type Holes<S extends string> = S extends `${string}{${infer P}}${infer R}` ? P | Holes<R> : never;
type HoleArgs<S extends string> = [Holes<S>] extends [never] ? [] : [Record<Holes<S>, string | number>];

function fill(template: string, args: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in args ? String(args[k]) : m));
}

/** `planHint("takes", { expected: "an integer" })` → PLAN_HINTS.takes filled. */
export function planHint<N extends keyof typeof PLAN_HINTS>(name: N, ...args: HoleArgs<(typeof PLAN_HINTS)[N]>): string {
  return fill(PLAN_HINTS[name], args[0]);
}

/** `planExpects("atLeast", { what: "a number", bound: 1 })` → "a number ≥ 1". */
export function planExpects<N extends keyof typeof PLAN_EXPECTS>(name: N, ...args: HoleArgs<(typeof PLAN_EXPECTS)[N]>): string {
  return fill(PLAN_EXPECTS[name], args[0]);
}

export abstract class UserError extends Error {
  /** A TC7xxx code of the table above, or a compiler diagnostic's code (compiler/index.ts CompileError). */
  abstract readonly code: `TC${number}`;
  readonly hint?: string;
  readonly where?: Where;

  constructor(message: string, opts: { hint?: string; where?: Where } = {}) {
    super(message);
    this.name = new.target.name;
    if (opts.hint !== undefined) this.hint = opts.hint;
    if (opts.where !== undefined) this.where = opts.where;
  }

  /** The problems to print; one by default, several for errors that collect them. */
  problems(): UserIssue[] {
    return [{ message: this.message, ...(this.hint ? { hint: this.hint } : {}), ...(this.where ? { where: this.where } : {}) }];
  }
}

/** A command-line request that cannot be carried out (TC7009). */
export class UsageError extends UserError {
  readonly code = "TC7009";
}

/** Renders a user error as the CLI prints it: one block per issue, with code, position and hint. */
export function formatUserError(e: UserError, command = "tcod"): string {
  return e.problems().map((i) => {
    const w = i.where;
    const at = w ? `${w.file}${w.line !== undefined ? `:${w.line}${w.column !== undefined ? `:${w.column}` : ""}` : ""}` : command;
    return `${at} error ${e.code}: ${i.message}${w?.path ? ` (at ${w.path})` : ""}${i.hint ? `\n  hint: ${i.hint}` : ""}`;
  }).join("\n");
}
