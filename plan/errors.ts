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
  TC7001: "A plan file does not validate against its schema, or a constant is out of its field's range (plan/ranges.ts: the compiler's); each problem names its JSON path. A Trinity plugin refuses its spec.json's constants out of range the same way on load.",
  TC7002: "A plan validates but its graph cannot run (a node names a model, env or agent format the plan does not declare).",
  TC7003: "An environment refuses the plan's settings (an unknown split, task or option).",
  TC7004: "A backend or inference server cannot serve the plan (unreachable, wrong dialect, unsupported request, tokenizer mismatch).",
  TC7005: "A schedule expression cannot be evaluated at run time (a variable or an extension function is missing), or its value cannot be used: NaN or ±Infinity, or out of its field's range (plan/ranges.ts: a learning rate ≤ 0, a blend weight above 1, a horizon below 1 turn…); the error names the expression's position and the step. A Trinity plugin checks each schedule value it evaluates the same way.",
  TC7006: "A loss term the chosen backends cannot compute (e.g. the topk estimator without teacher top-k).",
  TC7007: "Experience rows of a shape the update cannot take (e.g. trajectory rows of an episode without student turns).",
  TC7008: "Per-token signals whose shapes disagree (rows, masks, logprobs).",
  TC7009: "A command-line request that cannot be carried out (a missing file, a run folder already in use, a bad flag).",
  TC7010: "A plan's TypeScript extension bundle is missing or does not load (compile the .tcod file again).",
  TC7011: "A metrics sink cannot start (e.g. --wandb without the wandb Python package).",
  TC7012: "A feedback-level value (it reads the run's own metrics) was asked for without a metrics trace: give `--trace RUN_DIR/metrics.jsonl` or a synthetic trace.",
  TC7013: "A metrics trace cannot be read: a line that is not JSON, a training row without a numeric `step`, steps out of order, or a metric that is not a number.",
  TC7014: "A run folder's state cannot be read (resume, report, compare): a missing, truncated or foreign checkpoint, a checkpoint beyond the plan, a metrics file that does not match it, student weights that do not load; the error names the file.",
  TC7015: "A run folder cannot be written: no space left on the device, the file-size limit (ulimit -f), a disk quota, a read-only file system, permission denied or an I/O error; the error names the file, and the last checkpoint stays valid.",
  TC7016: "A run stopped on an environment's faults: an env server or bridge process kept failing after its retries (unreachable, timed out, malformed, error or oversized answers) or failed in a way retrying cannot mend (a redirect, a 4xx answer); the message names the env, the server or process and the last failure, and the run keeps its checkpoint for --resume.",
  TC7101: "A Trinity-RFT config has keys tcod cannot express; each problem names its YAML path and line.",
  TC7102: "A plan uses what Trinity-RFT cannot run; each problem names the construct.",
} as const;
export type UserErrorCode = keyof typeof USER_ERROR_CODES;

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
