/**
 * A curriculum named on the command line — `--curriculum NAME`, the target of `tcod explain FILE
 * CURRICULUM.FIELD` — checked for its shape before anything is compiled. A value that cannot name a
 * curriculum (empty, spaces, `a.`, `a..b`) is the argument's fault: TC7009 saying what the argument
 * looks like, with the file's curricula as the hint. A well-formed name the file does not declare is
 * left to the compiler, which reports TC2017 at the argument (`<--curriculum>`, `<target>`), with the
 * same list, in every command.
 */
import { declaredCurricula } from "../compiler/index.js";
import { UsageError } from "../plan/errors.js";

/** A curriculum's name, as the lexer reads an identifier (grammar/lexer.ts). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A value as the user would type it back: quoted when empty or when it holds spaces or quotes. */
const shown = (v: string): string => (v === "" || /[\s"'\\]/.test(v) ? JSON.stringify(v) : v);

/** `Curricula in FILE: a, b.` after `lead` (given the first of them, for an example), or what to do when the file cannot be read. */
function curriculaHint(file: string, lead: (first: string) => string): string {
  const names = declaredCurricula(file);
  if (names === undefined) return `${lead("my_curriculum")} \`tcod check ${file}\` says why the file cannot be read.`;
  return `${lead(names[0] ?? "my_curriculum")} Curricula in ${file}: ${names.join(", ") || "none (it declares no curriculum)"}.`;
}

/**
 * `--curriculum VALUE` of `file`: the curriculum's name to compile. With `points` (`tcod run`), a
 * sweep point's name (`NAME@lr=0.1`, as `--dry-run` lists them) is taken too, and its curriculum named.
 */
export function curriculumFlag(file: string, value: string, opts: { points?: boolean } = {}): string {
  const at = opts.points ? value.indexOf("@") : -1;
  const name = at >= 0 ? value.slice(0, at) : value;
  if (NAME.test(name)) return name;
  const what = value.trim() === "" ? "the name is empty" : `'${name}' is not a curriculum's name (letters, digits and _, not starting with a digit)`;
  throw new UsageError(`--curriculum ${shown(value)}: ${what}`, {
    hint: curriculaHint(file, () => `Name one${opts.points ? " (or a sweep point, CURRICULUM@SETTINGS, as --dry-run lists them)" : ""}, or drop --curriculum${opts.points ? "" : " for all of them"}.`),
  });
}

/**
 * The target of `tcod explain FILE TARGET`: `CURRICULUM.FIELD[.MEMBER…]`, or with `--graph` a
 * curriculum alone. Each part a name; anything else is TC7009 saying what a target looks like.
 */
export function explainTarget(file: string, target: string, graph: boolean): { curriculum: string; path: string[] } {
  const [curriculum = "", ...path] = target.split(".");
  const shape = graph ? "CURRICULUM" : "CURRICULUM.FIELD[.MEMBER…]";
  const bad = [curriculum, ...path].find((p) => !NAME.test(p));
  if (bad !== undefined || (graph ? path.length > 0 : path.length === 0)) {
    const why = target.trim() === "" ? "it is empty"
      : bad === "" ? "a part between dots is empty"
      : bad !== undefined ? `'${bad}' is not a name (letters, digits and _, not starting with a digit)`
      : graph ? "with --graph, name a curriculum alone" : "it names no field";
    throw new UsageError(`target ${shown(target)}: ${why}; a target is ${shape}`, {
      hint: curriculaHint(file, (first) => `e.g. tcod explain ${file} ${first}${graph ? " --graph" : ".horizon"}.`),
    });
  }
  return { curriculum, path };
}
