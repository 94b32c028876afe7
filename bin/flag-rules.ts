/**
 * Rules every command's flags follow, applied once to the whole program (bin/cli.ts) rather than
 * flag by flag: commander on its own lets a later value of a flag replace an earlier one and takes
 * an empty path as given, so `--seed 1 --seed 2` or `--out ''` would run with something the user
 * did not mean.
 *
 * - A flag that takes one value may be given once. A flag meant to repeat collects its values into
 *   a list (`--set`, `--infra`: a list default) or is variadic; those stay repeatable.
 * - A flag whose value is a path (its argument is named `<dir>`, `<file>` or a file name such as
 *   `<metrics.jsonl>`) takes no empty value: `--out ''` is not "the default folder". Nor one of
 *   spaces only, nor `-` (tcod reads and writes named files, never standard input or output, and
 *   would otherwise make a file called `-`), nor one starting with `-`: `--out -q` is a forgotten
 *   value far more often than a folder of that name (which `./-q` still names).
 * - A command's path arguments (`<file>`, `<files...>`, `<config>`, `<input>`, run folders) likewise:
 *   `tcod compile ''` would otherwise read the current folder, and `tcod metrics -` look for a run
 *   folder called `-`.
 * - Any other flag's value starting with `-` (`--title -x`, `--set -q`, `--curriculum --json`) is the
 *   next flag taken for a forgotten value, as commander gives it whatever follows. A flag whose value
 *   is a number (its argument named `<n>`, `<x>`, `<steps>`, `<turns>`, `<pid>`) is left a negative
 *   number, which its own check takes or refuses with its range (`--seed -3` is a seed); a value that
 *   does start with `-` is written joined to its flag, `--title=-x`.
 */
import type { Command, Option } from "commander";
import { UsageError } from "../plan/errors.js";

/** Installs the rules on every subcommand of `program` (each command's own options); `argv`: the command line as typed. */
export function enforceFlagRules(program: Command, argv: readonly string[]): void {
  for (const c of program.commands) {
    for (const o of c.options) {
      if (!o.required && !o.optional) continue; // a switch (--quiet, --json): repeating it changes nothing
      watch(c, o, argv);
    }
    c.hook("preAction", (_, action) => checkPathArguments(action));
  }
}

/** Whether a command argument names files or folders (`<file>`, `<files...>`, `<config>`, `<runDirs...>`), by its name. */
const isPathArgument = (name: string): boolean => /file|input|config|dir/i.test(name);

/** Why `value`, given where a path is expected, names no file or folder the user can have meant; undefined when it may. */
function pathProblem(value: string): string | undefined {
  if (value === "") return "the path is empty";
  if (value.trim() === "") return `the path ${JSON.stringify(value)} is only spaces`;
  if (value === "-") return "'-' (standard input or output) is not a path tcod reads or writes";
  if (value.startsWith("-")) return `'${value}' looks like a flag, not a path`;
  return undefined;
}

/** The advice for a path refused by `pathProblem`. */
const pathAdvice = (value: string, what: string, flag?: string): string =>
  value.startsWith("-") && value.length > 1 ? `Give ${flag ?? "it"} a value before the next flag; for a ${what} whose name starts with '-', write ./${value}.` : `Name a ${what}${flag ? `, or drop ${flag}` : ""}.`;

/** The rule above for a command's path arguments: checked once commander has read them, before the action. */
function checkPathArguments(c: Command): void {
  c.registeredArguments.forEach((a, i) => {
    if (!isPathArgument(a.name())) return;
    const given: unknown = c.processedArgs[i];
    const values = Array.isArray(given) ? given : given === undefined ? [] : [given];
    for (const v of values) {
      if (typeof v !== "string") continue;
      const problem = pathProblem(v);
      // A value starting with '-' never reaches here: commander took it for an option.
      if (problem === undefined) continue;
      const takes = a.description.split(/[;(]/)[0]!.trim();
      throw new UsageError(`<${a.name()}>: ${problem}`, { hint: `<${a.name()}> takes a path${takes ? ` (${takes})` : ""}: name one, as \`tcod ${c.name()} --help\` shows.` });
    }
  });
}

/** An option whose values accumulate (a list default, as `collect` builds) or that takes several at once. */
const repeatable = (o: Option): boolean => o.variadic || Array.isArray(o.defaultValue);

/** What the option's argument is called in its flags: `dir` for `-o, --out <dir>`. */
const argName = (o: Option): string => /[<[]([^>\]]*)[>\]]/.exec(o.flags)?.[1] ?? "value";

/** Whether the option's value names a file or folder. */
const isPath = (o: Option): boolean => /^(dir|file)$|\.\w+$/.test(argName(o));

/** Whether the option's value is a number (or a list of them): its own check gives the allowed range. */
const isNumber = (o: Option): boolean => /^(n|x|steps|turns|pid)$/.test(argName(o));

/** A negative number as commander itself tells one from a flag. */
const NEGATIVE_NUMBER = /^-(\d+|\d*\.\d+)([eE][+-]?\d+)?$/;

/**
 * Why a value given to a flag that is neither a path nor a number looks like the next flag rather
 * than its value (undefined: it does not). `joined`: the user wrote it as `--flag=VALUE`, on purpose.
 */
function flagLikeProblem(o: Option, value: string, joined: boolean): string | undefined {
  if (!value.startsWith("-") || value === "-" || joined) return undefined;
  if (isNumber(o) && NEGATIVE_NUMBER.test(value)) return undefined;
  return `'${value}' looks like a flag, not ${isNumber(o) ? "a number" : "its value"}`;
}

/** A value as the user would type it back: quoted when empty or when it holds spaces or quotes (`--seed "": …`, not `--seed : …`). */
export const shownValue = (v: string): string => (v === "" || /[\s"'\\]/.test(v) ? JSON.stringify(v) : v);
const shown = (v: string | null): string => (v === null ? "(no value)" : shownValue(v));

function watch(c: Command, o: Option, argv: readonly string[]): void {
  const flag = o.long ?? o.short ?? o.name();
  const also = o.long && o.short ? ` (${o.short} is ${o.long})` : "";
  const multi = repeatable(o);
  let first: string | null | undefined;
  // Commander assigns the value in its own listener for this event, registered before this one.
  c.on(`option:${o.name()}`, (value: string | null) => {
    const problem = value === null || !isPath(o) ? undefined : pathProblem(value);
    if (problem !== undefined && value !== null) {
      const what = argName(o) === "dir" ? "folder" : argName(o) === "file" ? "file" : argName(o);
      throw new UsageError(`${flag}: ${problem}; ${flag} takes a ${what}`, {
        hint: `${flag} names a ${what} — ${o.description}. ${pathAdvice(value, what, flag)}`,
      });
    }
    const joined = value !== null && o.long !== undefined && argv.includes(`${o.long}=${value}`);
    const flagLike = value === null || isPath(o) ? undefined : flagLikeProblem(o, value, joined);
    if (flagLike !== undefined && value !== null) {
      throw new UsageError(`${flag} ${value}: ${flagLike}; ${flag} takes <${argName(o)}>`, {
        hint: `Give ${flag} its value before the next flag; for a value that starts with '-', write it joined to the flag: ${o.long ?? flag}=${value}.`,
      });
    }
    if (multi) return;
    if (first !== undefined) {
      throw new UsageError(`${flag} is given twice${also}: ${shown(first)} and ${shown(value)}; it takes one value`, {
        hint: `Keep the ${flag} with the value you mean and drop the other; a later ${flag} does not replace an earlier one.`,
      });
    }
    first = value;
  });
}

/**
 * Refuses the options named in `unused` (attribute names: `expertLength`) that the command line gave
 * alongside `mode` (a switch such as `--graph`), which leaves them without effect: ignoring them would
 * let the user believe they took. `does` says what the mode does instead, for the hint.
 */
export function refuseUnused(c: Command, mode: string, does: string, unused: string[]): void {
  for (const name of unused) {
    if (c.getOptionValueSource(name) !== "cli") continue;
    const o = c.options.find((x) => x.attributeName() === name);
    const flag = o?.long ?? name;
    throw new UsageError(`${flag} has no effect with ${mode}`, { hint: `${mode} ${does}; drop ${flag}, or drop ${mode} for what ${flag} is for.` });
  }
}
