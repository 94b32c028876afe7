/**
 * Errors of the commands that are not compiler diagnostics (run, explain, plot, export, import,
 * and the output of compile): every one is a catalogue message (TC7xxx run/CLI, TC8xxx interop) with
 * a position where one exists, printed one way, exit 1. cli.ts sends anything a command throws
 * through `asCliErrors`; only what it does not recognise is an internal error (exit 2).
 */
import { d, type Message } from "../compiler/diagnostics/index.js";

/** One coded error; `at` is its position (FILE:LINE:COL, a JSON path, a run folder) where one exists. */
export class CliError extends Error {
  constructor(readonly diag: Message, readonly at?: string) { super(diag.message); }
}

/** Throws a coded error. */
export function fail(m: Message, at?: string): never {
  throw new CliError(m, at);
}

/**
 * Runtime error classes, registered by the commands that load the runtime (so `tcod check` never
 * imports it): a class and how its instances become a catalogue message.
 */
const known: { is: (e: unknown) => boolean; to: (e: Error) => CliError[] }[] = [];
export function registerErrorClass<E extends Error>(cls: abstract new (...a: never[]) => E, to: (e: E) => Message | CliError[]): void {
  known.push({ is: (e) => e instanceof cls, to: (e) => { const m = to(e as E); return Array.isArray(m) ? m : [new CliError(m)]; } });
}

/** The coded errors `e` stands for, or undefined when it is not a user error (a bug). */
export function asCliErrors(e: unknown): CliError[] | undefined {
  if (e instanceof CliError) return [e];
  for (const k of known) if (k.is(e)) return k.to(e as Error);
  const fsErr = fsError(e);
  if (fsErr) return [fsErr];
  return undefined;
}

/** A file-system error on a path the user gave (no such file, a folder where a file is wanted, no permission). */
function fsError(e: unknown): CliError | undefined {
  const x = e as NodeJS.ErrnoException;
  if (!(e instanceof Error) || typeof x.code !== "string" || typeof x.path !== "string") return undefined;
  const reasons: Record<string, string> = {
    ENOENT: "no such file or folder", EACCES: "permission denied", EPERM: "operation not permitted", EISDIR: "it is a folder",
    ENOTDIR: "a part of the path is a file, not a folder", EEXIST: "it already exists", EROFS: "read-only file system",
    ENOSPC: "no space left on the device", ENAMETOOLONG: "the name is too long", ELOOP: "too many symbolic links",
  };
  const reason = reasons[x.code];
  if (!reason) return undefined;
  const writing = ["mkdir", "rename", "write", "unlink", "rmdir", "copyfile", "symlink"].includes(x.syscall ?? "");
  return new CliError(writing
    ? d.cannotWrite({ path: x.path, reason, hint: "Give a folder you can write, not an existing file (--out DIR)." })
    : d.cannotRead({ path: x.path, reason }));
}

/** Prints coded errors the one way (as the compiler's): `FILE:LINE:COL error CODE: message` (or `tcod CMD: error CODE: …`) and the hint. */
export function printCliErrors(command: string, errors: CliError[]): void {
  for (const e of errors) {
    const head = e.at ? `${e.at} error ${e.diag.code}` : `tcod ${command}: error ${e.diag.code}`;
    process.stderr.write(`${head}: ${e.diag.message}\n${e.diag.hint ? `  hint: ${e.diag.hint}\n` : ""}`);
  }
  if (errors.length > 1) process.stderr.write(`${errors.length} error(s)\n`);
}
