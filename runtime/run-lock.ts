/**
 * One run per run folder: RUN_DIR/run.lock holds the pid, host and start time of the `tcod run` that
 * owns the folder. It is created atomically (a fully written temporary file hard-linked to the name,
 * which fails if the name exists; O_EXCL where links are not supported), so of two runs started on
 * one folder exactly one gets it. A lock whose process is gone (same host, `kill(pid, 0)` says no
 * such process) is stale and taken over, with a note; one held by a live process, or by a process on
 * another host (which cannot be checked from here), refuses the second run (TC7009). An empty lock
 * (only a crash while it was written leaves one: the O_EXCL fallback below, or data a power loss did
 * not flush) is taken over with a note once it is still empty a moment later; any other text is not
 * a lock tcod wrote, and taking the folder over could put two runs in it: TC7014 naming the file.
 * The caller removes the lock when the run ends (release()), and also on process exit (the CLI's
 * exit handler: a second Ctrl-C ends the process without running `finally` blocks).
 */
import { closeSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "../plan/errors.js";
import { jsonSyntaxError } from "../plan/json-error.js";
import { notRegularFile } from "../plan/read-file.js";
import { RunFolderError } from "./checkpoint.js";
import { RunFolderWriteError } from "./write-error.js";

export const LOCK_FILE = "run.lock";

interface LockInfo { pid: number; host: string; started: string }

export interface RunLock {
  /** Removes the lock if it is still this process's; idempotent. */
  release(): void;
}

/** Whether a process of this host is alive: signal 0 checks without sending (EPERM: alive, not ours). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** What a lock file holds: tcod's lock, nothing yet (empty: cut off while written), or what is wrong with it. */
type LockText = { text: string; info: LockInfo } | { text: string; empty: true };

function readLock(file: string): LockText | null {
  // A folder (or a pipe, a device) in the lock's place: no run can take the folder until it is moved.
  const notFile = notRegularFile(file);
  if (notFile) {
    throw new RunFolderWriteError(`cannot take ${file}, the run folder's lock: ${notFile.message}`, {
      where: { file }, hint: `Move ${file} out of the way (tcod keeps the pid of the run that owns the folder in this file), then run again.`,
    });
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null; // released meanwhile
    throw e;
  }
  // NULs: the blocks a power loss allocated but never wrote.
  if (/^[\s\0]*$/.test(text)) return { text, empty: true };
  const foreign = (what: string, at?: { line: number; column: number }) => new RunFolderError(`${file} is not a run lock tcod wrote: ${what}`, {
    where: { file, ...(at ?? { line: 1 }) },
    hint: `tcod keeps {"pid", "host", "started"} of the run that owns the folder in this file; if no run is using ${dirname(file)}, remove ${file} and run again.`,
  });
  let d: unknown;
  try { d = JSON.parse(text); } catch (e) {
    const j = jsonSyntaxError(e, text);
    if (!j) throw e;
    throw foreign(`not JSON (${j.message} at line ${j.line}, column ${j.column})`, { line: j.line, column: j.column });
  }
  const l = d as Partial<LockInfo> | null;
  if (l === null || typeof l !== "object" || Array.isArray(l)) throw foreign(`it holds ${Array.isArray(l) ? "a list" : l === null ? "null" : `a ${typeof l}`}, not an object`);
  if (!Number.isSafeInteger(l.pid) || (l.pid as number) <= 0) throw foreign(`its \`pid\` is ${JSON.stringify(l.pid) ?? "missing"}, not a process id`);
  if (typeof l.host !== "string" || typeof l.started !== "string") throw foreign("it has no string `host` and `started`");
  return { text, info: l as LockInfo };
}

/** Blocks the thread for `ms` (acquireRunLock is synchronous: its callers take the folder before anything else). */
const pause = (ms: number): void => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms); };

/** How long an empty lock is given to be written by the run that just created it (the O_EXCL fallback). */
const EMPTY_LOCK_GRACE_MS = 200;

/** Creates `file` holding `text`, atomically; false when it exists already. */
function createExclusive(file: string, text: string): boolean {
  const tmp = `${file}.${process.pid}`;
  writeFileSync(tmp, text);
  try {
    linkSync(tmp, file);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // No hard links on this file system: O_EXCL (a reader may see the file empty for a moment).
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw e;
    let fd: number;
    try {
      fd = openSync(file, "wx");
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e2;
    }
    try { writeSync(fd, text); } finally { closeSync(fd); }
    return true;
  } finally {
    try { unlinkSync(tmp); } catch { /* already gone */ }
  }
}

/** Refuses the run folder held by the lock `info` when its process may still run (TC7009 naming it). */
function refuseLive(info: LockInfo, runDir: string): void {
  const file = join(runDir, LOCK_FILE);
  const sameHost = info.host === hostname();
  if (sameHost && !alive(info.pid)) return;
  throw new UsageError(`${runDir} is in use by pid ${info.pid}${sameHost ? "" : ` on host ${info.host}`} (started ${info.started}); a run folder takes one run at a time`, {
    where: { file },
    hint: sameHost
      ? `Wait for that run to end (or stop it: Ctrl-C, or kill ${info.pid}), then resume with --resume ${runDir}; or choose another --out.`
      : `If that run has ended (its host went down), remove ${file} and resume with --resume ${runDir}; or choose another --out.`,
  });
}

/**
 * What acquireRunLock would refuse of the lock in `runDir` as it is now, read-only: a live run's lock
 * (TC7009), something else in its place (TC7014, TC7015). A stale or empty lock passes (taking it over
 * is the acquiring run's). For checks made before a run takes its folder, so that a refusal writes nothing.
 */
export function checkRunLock(runDir: string): void {
  // No folder (or a file in its place, which whoever makes the folder reports): no lock to refuse.
  try { if (!statSync(runDir).isDirectory()) return; } catch { return; }
  const held = readLock(join(runDir, LOCK_FILE));
  if (held !== null && "info" in held) refuseLive(held.info, runDir);
}

/**
 * Takes RUN_DIR/run.lock for this process, or throws a UsageError (TC7009) naming the process that
 * holds it, or a RunFolderError (TC7014) for a lock tcod did not write. `note` is told when a stale
 * lock is taken over.
 */
export function acquireRunLock(runDir: string, note: (message: string) => void): RunLock {
  const file = join(runDir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  const text = JSON.stringify(mine) + "\n";
  for (let attempt = 0; ; attempt++) {
    // A lock there already is read first: one this run cannot take is refused before anything is
    // written in the folder (not even the temporary file createExclusive links).
    let held = readLock(file);
    if (held === null) {
      if (createExclusive(file, text)) break;
      continue; // taken between the two calls: read it
    }
    if ("empty" in held) {
      // A run that created it under O_EXCL writes it at once: still empty a moment later, it was cut off by a crash.
      pause(EMPTY_LOCK_GRACE_MS);
      const later = readLock(file);
      if (later === null) continue;
      if (!("empty" in later)) held = later;
    }
    const info = "info" in held ? held.info : null;
    if (info !== null) refuseLive(info, runDir);
    if (attempt >= 2) throw new UsageError(`${runDir}: cannot take ${file}; other runs are taking it at the same time`, { where: { file }, hint: "Start one run per run folder." });
    // Stale: remove it only if it is still the lock just read (another run may have taken it over).
    const again = readLock(file);
    if (again !== null && again.text === held.text) {
      try { unlinkSync(file); } catch { /* removed meanwhile */ }
      note(info === null ? `${file}:1: the lock is empty (a run was cut off by a crash while it took the folder); taking the run folder over` : `${file} was left by pid ${info.pid} (started ${info.started}), which has ended; taking the run folder over`);
    }
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    let held: LockText | null;
    // Something else in the lock's place now (a folder, a foreign text) is not this run's to remove.
    try { held = readLock(file); } catch { return; }
    if (held?.text === text) {
      try { unlinkSync(file); } catch { /* gone */ }
    }
  };
  return { release };
}
