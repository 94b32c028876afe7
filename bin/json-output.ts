/**
 * `--json`, the same for every command: stdout carries only JSON lines — the compiler's diagnostics
 * (one line each, as `check --json` always printed them) and, last, exactly one result line
 *   {"command": "compile", "ok": true, "exitCode": 0, ...what the command did}
 *   {"command": "run", "ok": false, "exitCode": 1, "error": {"code": "TC7009", "message": …, "hint": …, "where": …}}
 * printed by the CLI when the command ends, whatever way it ends (success, diagnostics, a user
 * error). Commands add their details with `result({...})`; human output is skipped in this mode.
 */
import type { UserError } from "../plan/errors.js";

let on = false;
let command = "tcod";
const details: Record<string, unknown> = {};
let error: Record<string, unknown> | undefined;

/** Commands whose `--json` names a file to write (`compare --json FILE`), not this output mode. */
const JSON_IS_A_FILE = new Set(["compare"]);

export function startJson(argv: string[]): void {
  command = argv.find((a) => !a.startsWith("-")) ?? "tcod";
  on = argv.includes("--json") && !JSON_IS_A_FILE.has(command);
}

export function jsonMode(): boolean {
  return on;
}

/** Adds fields to the command's result line (JSON mode only; a no-op otherwise). */
export function result(fields: Record<string, unknown>): void {
  if (on) Object.assign(details, fields);
}

/** Records a user error for the result line; true when JSON mode took it (nothing else to print). */
export function jsonError(e: UserError): boolean {
  if (!on) return false;
  const problems = e.problems();
  const first = problems[0];
  error = {
    code: e.code, message: first?.message ?? e.message, ...(first?.hint ? { hint: first.hint } : {}), ...(first?.where ? { where: first.where } : {}),
    ...(problems.length > 1 ? { problems } : {}),
  };
  return true;
}

/**
 * Records several user errors (a command that checks each of its arguments and reports every bad
 * one) for the result line: `error` is the first one's, and `problems` lists every problem of every
 * error, each with its own code. True when JSON mode took them.
 */
export function jsonErrors(errors: readonly UserError[]): boolean {
  if (!on || errors.length === 0) return on;
  jsonError(errors[0]!);
  const all = errors.flatMap((e) => e.problems().map((p) => ({ code: e.code, ...p })));
  if (all.length > 1) error = { ...error, problems: all };
  return true;
}

/** The result line; the CLI calls it once, when the command has ended. */
export function finishJson(exitCode: number): void {
  if (!on) return;
  process.stdout.write(JSON.stringify({ command, ok: exitCode === 0, exitCode, ...details, ...(error ? { error } : {}) }) + "\n");
}
