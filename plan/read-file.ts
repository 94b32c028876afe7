/**
 * Reading a file a user named (a source, an import, a metrics trace) without hanging or running out
 * of memory: only a regular file (a device such as /dev/zero, a FIFO or a socket would be read
 * forever, or block), and only up to a size limit. Errors are `FileReadError`s whose message says
 * why about "it" and whose `kind` says which case it is; callers name the file and turn them into
 * their coded diagnostic.
 */
import { lstatSync, readFileSync, statSync, type Stats } from "node:fs";
import { decodeSource, type SourceText } from "../grammar/source-chars.js";

/** Source files (.tcod) are read up to this size (check time against size: bench/results/check-size.md). */
export const MAX_SOURCE_BYTES = 32 * 1024 * 1024;

/** Files of a run folder (state.json, metrics.jsonl) are read whole up to this size (V8's longest string is ~512 MiB). */
export const MAX_RUN_FILE_BYTES = 512 * 1024 * 1024;

export const mib = (n: number): string => `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;

/** Why a file could not be read. */
export type FileReadKind = "missing" | "folder" | "special" | "tooLarge" | "denied" | "other";

export class FileReadError extends Error {
  constructor(message: string, readonly kind: FileReadKind, readonly size?: number, readonly limit?: number) {
    super(message);
    this.name = "FileReadError";
  }
}

/** A file-system error as a short reason ("no such file", "permission denied"), never a raw errno line. */
export function fileReadError(e: unknown): FileReadError {
  if (e instanceof FileReadError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new FileReadError("no such file", "missing");
  if (code === "ENOTDIR") return new FileReadError("no such file (a part of the path is a file, not a folder)", "missing");
  if (code === "EISDIR") return new FileReadError("it is a folder, not a file", "folder");
  if (code === "EACCES" || code === "EPERM") return new FileReadError("permission denied", "denied");
  if (code === "ENAMETOOLONG") return new FileReadError("the path is too long", "missing");
  if (code === "ELOOP") return new FileReadError("the path has a loop of symbolic links", "missing");
  return new FileReadError(code ? `${code}` : (e as Error).message, "other");
}

/**
 * Why `path` is there but not a regular file ("it is a folder, not a file", "it is not a regular file
 * (a device, pipe or socket)", "the path has a loop of symbolic links"), as readTextFile would say;
 * undefined when it is a regular file or cannot be looked at (missing, no permission).
 */
export function notRegularFile(path: string): FileReadError | undefined {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    // A loop of symlinks is there but leads nowhere: say so, not "not found".
    return (e as NodeJS.ErrnoException).code === "ELOOP" ? fileReadError(e) : undefined;
  }
  return notRegular(st);
}

/**
 * Why `path`, a symbolic link, leads nowhere ("the path has a loop of symbolic links", "it is a
 * symbolic link to a missing target"); undefined when nothing is at `path` or it resolves. For a
 * caller that takes a missing file for "none yet" (existsSync says false for such a link too).
 */
export function brokenLink(path: string): FileReadError | undefined {
  try { lstatSync(path); } catch { return undefined; }
  try {
    statSync(path);
    return undefined;
  } catch (e) {
    const r = fileReadError(e);
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? new FileReadError("it is a symbolic link to a missing target", "missing") : r;
  }
}

function notRegular(st: Stats): FileReadError | undefined {
  if (st.isDirectory()) return new FileReadError("it is a folder, not a file", "folder");
  if (!st.isFile()) return new FileReadError("it is not a regular file (a device, pipe or socket)", "special");
  return undefined;
}

/**
 * The text of `path` (UTF-8) if it is a regular file of at most `maxBytes`; throws a
 * `FileReadError` otherwise, with the reason about "it" (callers name the file).
 */
export function readTextFile(path: string, maxBytes = MAX_SOURCE_BYTES): string {
  return readFile(path, maxBytes, "utf8");
}

/**
 * The bytes of `path`, on the terms of readTextFile: for a caller that must know whether they are
 * UTF-8 (text read as UTF-8 has U+FFFD for bytes that are not, which cannot be told from a U+FFFD
 * the file holds).
 */
export function readBytesFile(path: string, maxBytes = MAX_SOURCE_BYTES): Buffer {
  return readFile(path, maxBytes);
}

/**
 * A .tcod source, on the terms of readTextFile (up to MAX_SOURCE_BYTES): its text decoded from its
 * bytes with where those that are not UTF-8 stood, which the lexer names (TC1008); a U+FFFD the file
 * holds is then a character like any other.
 */
export function readSourceFile(path: string, maxBytes = MAX_SOURCE_BYTES): SourceText {
  return decodeSource(readFile(path, maxBytes));
}

function readFile(path: string, maxBytes: number): Buffer;
function readFile(path: string, maxBytes: number, encoding: "utf8"): string;
function readFile(path: string, maxBytes: number, encoding?: "utf8"): string | Buffer {
  try {
    // One stat for both questions (a check stats every file it reads).
    const st = statSync(path);
    const notFile = notRegular(st);
    if (notFile) throw notFile;
    if (st.size > maxBytes) throw new FileReadError(`it is ${mib(st.size)}; tcod reads files up to ${mib(maxBytes)}`, "tooLarge", st.size, maxBytes);
    return encoding ? readFileSync(path, encoding) : readFileSync(path);
  } catch (e) {
    throw fileReadError(e);
  }
}
