/**
 * A run folder that cannot be written: the device is full, the file outgrew the process's file-size
 * limit (`ulimit -f`; Node ignores SIGXFSZ, so the write fails with EFBIG), a quota, a read-only
 * mount, permissions, an I/O error, a folder in the file's place. These are the user's machine, not a tcod bug: a coded error
 * (TC7015) naming the file and the cause in words, with a hint — never a stack trace.
 */
import { UserError } from "../plan/errors.js";

export class RunFolderWriteError extends UserError {
  readonly code = "TC7015";
}

const CAUSES: Record<string, { cause: (runDir: string) => string; hint: string }> = {
  ENOSPC: { cause: (d) => `no space left on the device holding ${d}`, hint: "Free space on that device (or choose an --out on another one)" },
  EFBIG: { cause: () => "the file exceeds the process's file-size limit (ulimit -f)", hint: "Raise the limit (`ulimit -f unlimited` in the shell that starts tcod)" },
  EDQUOT: { cause: (d) => `the disk quota of the user writing ${d} is used up`, hint: "Free space within your quota (or choose an --out outside it)" },
  EROFS: { cause: (d) => `${d} is on a read-only file system`, hint: "Choose an --out on a writable file system" },
  EACCES: { cause: () => "permission denied", hint: "Make the run folder writable for this user" },
  EPERM: { cause: () => "permission denied", hint: "Make the run folder writable for this user" },
  // A folder where the run writes a file (report.html, episodes.jsonl…): open(2) refuses it.
  EISDIR: { cause: () => "a folder is in the file's place", hint: "Move that folder out of the way" },
  // A link that leads nowhere in the file's place (a loop), or a file where the path needs a folder.
  ELOOP: { cause: () => "a loop of symbolic links is in the file's place", hint: "Remove that link" },
  ENOTDIR: { cause: () => "a file or link is where the path needs a folder", hint: "Move it out of the way" },
  EIO: { cause: (d) => `an I/O error on the device holding ${d}`, hint: "Check the device (system log, dmesg)" },
};

/**
 * The coded error for a failed write of `file` (undefined: not known) in `runDir`, or null when `e`
 * is not a write failure of the machine's. `then`: what to do once the cause is mended (default: resume the run).
 */
export function writeErrorOf(e: unknown, file: string | undefined, runDir: string, then?: string): RunFolderWriteError | null {
  if (e instanceof RunFolderWriteError) return e;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const c = code === undefined ? undefined : CAUSES[code];
  if (c === undefined) return null;
  return new RunFolderWriteError(`cannot write ${file ?? `a file in ${runDir}`}: ${c.cause(runDir)} (${code})`, {
    ...(file !== undefined ? { where: { file } } : {}),
    hint: `${c.hint}, then ${then ?? `continue the run from its last checkpoint with --resume ${runDir} (the checkpoint on disk is the last one written whole)`}.`,
  });
}
