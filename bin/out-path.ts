/**
 * Output paths the user names (--out): checked before any work is done, so an existing file where a
 * folder is wanted, or a folder nobody may write, is a user error (TC7009), never a crash midway.
 */
import { accessSync, constants, existsSync, lstatSync, mkdirSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../plan/errors.js";

const reasonOf = (e: unknown): string => {
  const code = (e as NodeJS.ErrnoException).code;
  return code === "EACCES" || code === "EPERM" ? "permission denied"
    : code === "ENOTDIR" || code === "EEXIST" ? "a part of the path is a file, not a folder"
    : code === "EROFS" ? "read-only file system"
    : code === "ELOOP" ? "the path has a loop of symbolic links"
    : code === "ENOSPC" ? "no space left on the device"
    : code === "ENOENT" ? "a folder on the path cannot be created there (a link to a missing folder, or a special file system)"
    : (e as Error).message;
};

/**
 * `mkdir -p`, one level at a time from the nearest existing folder. Node 20's
 * `mkdirSync(dir, { recursive: true })` never returns for a path under /proc (its parent exists,
 * the child cannot be made: ENOENT, and it retries forever); this throws instead.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  let at = resolve(dir);
  while (!existsSync(at)) {
    missing.push(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (e) {
      // Made meanwhile by another process: fine if it is a folder.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(d).isDirectory()) throw e;
    }
  }
}

/** Creates `dir` (and its parents) unless it exists, and checks that it is a folder this process may write. */
export function ensureOutDir(dir: string, option = "--out"): void {
  const hint = `Give ${option} a folder you can write; it is created when missing.`;
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw cannotWrite(dir, "it is a file, not a folder", hint);
  try {
    makeDirs(dir);
    accessSync(dir, constants.W_OK);
    // A file made and removed: permission bits do not tell all (root passes every access check, and
    // a special file system such as /proc or a read-only mount refuses new files all the same).
    const probe = join(dir, `.tcod-write-check-${process.pid}`);
    try {
      writeFileSync(probe, "", { flag: "wx" });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw code === "ENOENT" || code === "EROFS" || code === "EPERM" ? Object.assign(new Error("new files cannot be made in it (a special or read-only file system)"), { code: "PROBE" }) : e;
    }
    unlinkSync(probe);
  } catch (e) {
    throw cannotWrite(dir, reasonOf(e), hint);
  }
}

/** Checks that `file` can be written: not a folder, in a folder that exists (or can be made) and may be written. */
export function ensureOutFile(file: string, option = "--out", example = "name.tcod"): void {
  if (existsSync(file) && statSync(file).isDirectory()) throw cannotWrite(file, "it is a folder, not a file", `Give ${option} a file name, e.g. ${file.replace(/\/+$/, "")}/${example}.`);
  ensureOutDir(dirname(resolve(file)), `the folder of ${option}`);
}

const cannotWrite = (path: string, reason: string, hint: string) => new UsageError(`cannot write ${path}: ${reason}`, { hint, where: { file: path } });

/**
 * Writes a file the user named; a write that fails all the same (a special file system such as
 * /proc, a full disk, a read-only file) is a user error naming the path, not a crash.
 */
export function writeOutFile(file: string, text: string, option = "--out"): void {
  try {
    writeFileSync(file, text);
  } catch (e) {
    throw cannotWrite(file, reasonOf(e), `Give ${option} a file in a folder you can write.`);
  }
}

/**
 * Refuses a `path` that `writeAtomic` would replace rather than write: a device, pipe or socket (the
 * renamed file takes its place, so `--out /dev/full --force` would leave a file where /dev/full was).
 */
export function refuseSpecialFile(path: string, option = "--out"): void {
  let st;
  try { st = lstatSync(path); } catch { return; }
  if (st.isCharacterDevice() || st.isBlockDevice() || st.isFIFO() || st.isSocket()) {
    const what = st.isFIFO() ? "a pipe" : st.isSocket() ? "a socket" : "a device";
    throw cannotWrite(path, `it is ${what}, which the file tcod writes whole would replace`, `Move it out of the way, or give ${option} another path.`);
  }
}

/** Writes `path` whole or not at all (a temporary file renamed over it); a failure is a user error naming the path. */
export function writeAtomic(path: string, text: string, option = "--out"): void {
  refuseSpecialFile(path, option);
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    makeDirs(dirname(path));
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw cannotWrite(path, reasonOf(e), `Give ${option} a folder you can write.`);
  }
}
