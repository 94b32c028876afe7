/**
 * A plan .json a user names (`tcod run`, `tcod export`, `tcod plot`, `tcod explain --graph`): read under the size
 * limit, parsed, `--set path.to.field=value` applied, then validated by `parsePlan` — so every
 * command that takes a plan .json refuses a bad one the same way: not JSON is TC7009 at its line and
 * column, a plan that does not validate (or a constant out of range) TC7001 with each problem's JSON
 * path and hint.
 */
import type { Command } from "commander";
import { UsageError } from "../plan/errors.js";
import { readTextFile } from "../plan/read-file.js";
import { jsonSyntaxError } from "../plan/json-error.js";
import { parsePlan, PlanError, type Plan } from "../plan/schema.js";

/** The largest plan .json read. */
export const MAX_PLAN_BYTES = 64 * 1024 * 1024;

/** What a plan .json that cannot be read or parsed should be instead. */
export const PLAN_HINT = "Give a plan that `tcod compile` wrote, or the .tcod file itself.";

/** Whether a command's FILE argument names a plan .json rather than a .tcod source. */
export const isPlanJson = (file: string): boolean => file.endsWith(".json");

/** A plan JSON file, with `--set path.to.field=value` applied before validation. */
export function loadPlanJson(file: string, sets: string[]): Plan {
  let text: string;
  try {
    text = readTextFile(file, MAX_PLAN_BYTES);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`, { where: { file }, hint: PLAN_HINT });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const j = jsonSyntaxError(e, text);
    if (!j) throw e;
    throw new UsageError(`not valid JSON (${j.message})`, { where: { file, line: j.line, column: j.column }, hint: PLAN_HINT });
  }
  for (const s of sets) {
    const eq = s.indexOf("=");
    if (eq <= 0) throw new UsageError(`--set ${s}: expected path=value, e.g. clock.steps=20`);
    setPath(data, s.slice(0, eq).split("."), parseValue(s.slice(eq + 1)), s);
  }
  try {
    return parsePlan(data);
  } catch (e) {
    if (e instanceof PlanError) throw new PlanError(`${file}: ${e.message}`, e.issues, file);
    throw e;
  }
}

function parseValue(v: string): unknown {
  try { return JSON.parse(v); } catch { return v; }
}

/** Sets an existing field of the plan's own data; never walks into or creates a prototype's members. */
function setPath(root: unknown, path: string[], value: unknown, text: string): void {
  const own = (o: unknown, k: string): boolean => o !== null && typeof o === "object" && Object.hasOwn(o, k) && k !== "__proto__";
  const hint = "Write --set PATH=VALUE with a path of the plan's own fields, e.g. --set clock.steps=20.";
  let cur = root;
  for (let i = 0; i < path.length - 1; i++) {
    if (!own(cur, path[i]!)) throw new UsageError(`--set ${text}: the plan has no field ${path.slice(0, i + 1).join(".")}`, { hint });
    cur = (cur as Record<string, unknown>)[path[i]!];
    if (cur === null || typeof cur !== "object") throw new UsageError(`--set ${text}: the plan has no object at ${path.slice(0, i + 1).join(".")}`, { hint });
  }
  const last = path[path.length - 1]!;
  if (!own(cur, last)) throw new UsageError(`--set ${text}: the plan has no field ${path.join(".")}`, { hint });
  (cur as Record<string, unknown>)[last] = value;
}

/**
 * Refuses the flags named in `unused` (attribute names: `maxPoints`) that the command line gave with
 * a plan .json, which is one compiled plan already: they choose among, or bound, the plans a .tcod
 * file compiles to, and would otherwise be dropped without a word.
 */
export function refuseSourceFlags(c: Command, file: string, unused: readonly string[]): void {
  if (!isPlanJson(file)) return;
  for (const name of unused) {
    if (c.getOptionValueSource(name) !== "cli") continue;
    const flag = c.options.find((x) => x.attributeName() === name)?.long ?? name;
    throw new UsageError(`${flag} has no effect with a plan .json: ${file} is one compiled plan already`, {
      hint: `${flag} chooses among (or bounds) the plans a .tcod file compiles to: drop it, or give the .tcod file the plan was compiled from.`,
    });
  }
}
