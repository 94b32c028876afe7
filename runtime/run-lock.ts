/**
 * One run per run folder: RUN_DIR/run.lock holds the pid, host and start time of the `tcod run` that
 * owns the folder. It is created atomically (a fully written temporary file hard-linked to the name,
 * which fails if the name exists; O_EXCL where links are not supported), so of two runs started on
 * one folder exactly one gets it. A lock whose process is gone (same host, `kill(pid, 0)` says no
 * such process) or that cannot be read is stale and taken over; one held by a live process, or by a
 * process on another host (which cannot be checked from here), refuses the second run (TC7009).
 * The caller removes the lock when the run ends (release()), and also on process exit (the CLI's
 * exit handler: a second Ctrl-C ends the process without running `finally` blocks).
 */
import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { UsageError } from "../plan/errors.js";
import { notRegularFile } from "../plan/read-file.js";
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

function readLock(file: string): { text: string; info: LockInfo | null } | null {
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
  try {
    const d = JSON.parse(text) as Partial<LockInfo>;
    if (Number.isSafeInteger(d.pid) && (d.pid as number) > 0 && typeof d.host === "string" && typeof d.started === "string") return { text, info: d as LockInfo };
  } catch { /* unreadable: stale */ }
  return { text, info: null };
}

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

/**
 * Takes RUN_DIR/run.lock for this process, or throws a UsageError (TC7009) naming the process that
 * holds it. `note` is told when a stale lock is taken over.
 */
export function acquireRunLock(runDir: string, note: (message: string) => void): RunLock {
  const file = join(runDir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  const text = JSON.stringify(mine) + "\n";
  for (let attempt = 0; ; attempt++) {
    if (createExclusive(file, text)) break;
    const held = readLock(file);
    if (held === null) continue; // released between the two calls: try again
    const { info } = held;
    const sameHost = info !== null && info.host === hostname();
    if (info !== null && (!sameHost || alive(info.pid))) {
      throw new UsageError(`${runDir} is in use by pid ${info.pid}${sameHost ? "" : ` on host ${info.host}`} (started ${info.started}); a run folder takes one run at a time`, {
        where: { file },
        hint: sameHost
          ? `Wait for that run to end (or stop it: Ctrl-C, or kill ${info.pid}), then resume with --resume ${runDir}; or choose another --out.`
          : `If that run has ended (its host went down), remove ${file} and resume with --resume ${runDir}; or choose another --out.`,
      });
    }
    if (attempt >= 2) throw new UsageError(`${runDir}: cannot take ${file}; other runs are taking it at the same time`, { where: { file }, hint: "Start one run per run folder." });
    // Stale: remove it only if it is still the lock just read (another run may have taken it over).
    const again = readLock(file);
    if (again !== null && again.text === held.text) {
      try { unlinkSync(file); } catch { /* removed meanwhile */ }
      note(info === null ? `${file} could not be read; taking the run folder over` : `${file} was left by pid ${info.pid} (started ${info.started}), which has ended; taking the run folder over`);
    }
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    const held = readLock(file);
    if (held?.text === text) {
      try { unlinkSync(file); } catch { /* gone */ }
    }
  };
  return { release };
}
