/**
 * Rules every command's flags follow, applied once to the whole program (bin/cli.ts) rather than
 * flag by flag: commander on its own lets a later value of a flag replace an earlier one and takes
 * an empty path as given, so `--seed 1 --seed 2` or `--out ''` would run with something the user
 * did not mean.
 *
 * - A flag that takes one value may be given once. A flag meant to repeat collects its values into
 *   a list (`--set`, `--infra`: a list default) or is variadic; those stay repeatable.
 * - A flag whose value is a path (its argument is named `<dir>`, `<file>` or a file name such as
 *   `<metrics.jsonl>`) takes no empty value: `--out ''` is not "the default folder".
 */
import type { Command, Option } from "commander";
import { UsageError } from "../plan/errors.js";

/** Installs the rules on every subcommand of `program` (each command's own options). */
export function enforceFlagRules(program: Command): void {
  for (const c of program.commands) {
    for (const o of c.options) {
      if (!o.required && !o.optional) continue; // a switch (--quiet, --json): repeating it changes nothing
      watch(c, o);
    }
  }
}

/** An option whose values accumulate (a list default, as `collect` builds) or that takes several at once. */
const repeatable = (o: Option): boolean => o.variadic || Array.isArray(o.defaultValue);

/** What the option's argument is called in its flags: `dir` for `-o, --out <dir>`. */
const argName = (o: Option): string => /[<[]([^>\]]*)[>\]]/.exec(o.flags)?.[1] ?? "value";

/** Whether the option's value names a file or folder. */
const isPath = (o: Option): boolean => /^(dir|file)$|\.\w+$/.test(argName(o));

/** A value as the user would type it back: quoted when empty or when it holds spaces or quotes. */
const shown = (v: string | null): string => (v === null ? "(no value)" : v === "" || /[\s"'\\]/.test(v) ? JSON.stringify(v) : v);

function watch(c: Command, o: Option): void {
  const flag = o.long ?? o.short ?? o.name();
  const also = o.long && o.short ? ` (${o.short} is ${o.long})` : "";
  const multi = repeatable(o);
  let first: string | null | undefined;
  // Commander assigns the value in its own listener for this event, registered before this one.
  c.on(`option:${o.name()}`, (value: string | null) => {
    if (value === "" && isPath(o)) {
      const what = argName(o) === "dir" ? "folder" : argName(o) === "file" ? "file" : argName(o);
      throw new UsageError(`${flag}: the path is empty; ${flag} takes a ${what}`, {
        hint: `${flag} names a ${what} — ${o.description}. Name one, or drop the flag.`,
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
