/**
 * A sweep point's stderr kept in its run folder (RUN_DIR/stderr.log), every attempt (start, resume or
 * restart) under a header line of its own, so a point that completes keeps its warnings and notes (a
 * preflight warning, rows kept aside on a restart, a stale lock taken over) and a crash keeps what
 * came before it. The sweep's summary counts the warnings and notes in the file (`countLog`) and names it.
 *
 * The log's descriptor is the point's stderr itself (`PointLog.fd`), not a pipe the sweep copies
 * from: the kernel writes what the point — and whatever it starts with that stderr (the worker, the
 * W&B sink) — says, as it says it, whether or not the sweep is still there. A sweep killed by SIGKILL
 * thus loses nothing its points say while winding down (the point sees its parent gone and
 * checkpoints, `tcod run --watch-parent`), and nothing is left in a pipe's buffer unread. The sweep
 * reads the attempt's part back (`written`) to show a failed point's stderr.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { brokenLink, fileReadError, notRegularFile } from "../plan/read-file.js";

export const POINT_LOG = "stderr.log";

export const pointLogPath = (runDir: string): string => join(runDir, POINT_LOG);

/**
 * Why the log cannot go where it goes (a folder, a pipe — which an open for appending would wait on
 * for ever —, a link that leads nowhere); undefined when a file is there or nothing is.
 */
export function pointLogBlocked(path: string): string | undefined {
  return (notRegularFile(path) ?? brokenLink(path))?.message;
}

/** One attempt's log. A write the machine refuses stops the writing; `failed` says why. */
export interface PointLog {
  /**
   * The log, open for appending, to be the point's stderr; undefined once it could not be opened or
   * written (`failed`), when the sweep pipes the point's stderr and shows it instead.
   */
  readonly fd: number | undefined;
  /** The last `max` bytes (as text) written to the log since this attempt's header. */
  written(max: number): string;
  close(footer?: string): void;
  readonly failed: string | undefined;
}

/** Opens `path` for appending and writes the attempt's header line. Never throws: a failure is `failed`. */
export function openPointLog(path: string, header: string): PointLog {
  let fd: number | undefined;
  let failed: string | undefined;
  const fail = (e: unknown) => {
    failed = fileReadError(e).message;
    if (fd !== undefined) try { closeSync(fd); } catch { /* already failing */ }
    fd = undefined;
  };
  const put = (data: string) => {
    if (fd === undefined) return;
    try {
      const buf = Buffer.from(data);
      for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    } catch (e) { fail(e); }
  };
  const size = () => fstatSync(fd!).size;
  // Whether the file ends a line (an empty one does): else a header or footer starts a line of its own.
  // A point whose sweep was killed may have been cut off in the middle of one.
  const endsLine = () => {
    const n = size();
    if (n === 0) return true;
    const last = Buffer.alloc(1);
    readSync(fd!, last, 0, 1, n - 1);
    return last[0] === 0x0a;
  };
  let from = 0;
  // "a+": appending (the point's writes and the footer after them go to the end, whoever writes), and reading back.
  try {
    fd = openSync(path, "a+");
    put(`${endsLine() ? "" : "\n"}--- ${header} ---\n`);
    if (fd !== undefined) from = size();
  } catch (e) { fail(e); }
  return {
    get fd() { return fd; },
    written(max) {
      if (fd === undefined) return "";
      try {
        const end = size(), start = Math.max(from, end - max);
        const buf = Buffer.alloc(end - start);
        for (let off = 0; off < buf.length;) {
          const n = readSync(fd, buf, off, buf.length - off, start + off);
          if (n === 0) break;
          off += n;
        }
        return buf.toString("utf8");
      } catch { return ""; }
    },
    close(footer) {
      if (fd === undefined) return;
      try {
        if (footer !== undefined) put(`${endsLine() ? "" : "\n"}--- ${footer} ---\n`);
      } catch (e) { fail(e); }
      if (fd !== undefined) try { closeSync(fd); } catch (e) { fail(e); }
      fd = undefined;
    },
    get failed() { return failed; },
  };
}

/**
 * A line a tcod command writes as a warning or a note: `tcod run: warning …`, `tcod run: note: …`,
 * a diagnostic `FILE:LINE:COL warning TC…`, a bare `warning: …` / `note: …`. Header lines (`--- …`),
 * hints, errors and other programs' output are neither.
 */
const KIND = /^(?:tcod [\w-]+:\s*|\S+:\d+(?::\d+)?:?\s+)?(warning|note)\b/;

export interface LogCounts { warnings: number; notes: number }

/**
 * The warnings and notes in a point's log, each different line once (a resumed point says its
 * preflight warnings again); undefined when there is no log or it cannot be read. Read in pieces, so
 * a log a chatty worker made large is never held whole.
 */
export function countLog(path: string): LogCounts | undefined {
  if (pointLogBlocked(path) !== undefined) return undefined;
  let fd: number;
  try { fd = openSync(path, "r"); } catch { return undefined; }
  const seen = { warning: new Set<string>(), note: new Set<string>() };
  const buf = Buffer.alloc(1 << 20);
  const text = new StringDecoder("utf8"); // a character split between two pieces stays whole
  let rest = "";
  const take = (line: string) => {
    const m = KIND.exec(line);
    if (m) seen[m[1] as "warning" | "note"].add(line.length > 1000 ? line.slice(0, 1000) : line);
  };
  try {
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0;) {
      const lines = (rest + text.write(buf.subarray(0, n))).split("\n");
      rest = lines.pop()!;
      // A line without an end for megabytes is no warning of ours: its head is enough to tell.
      if (rest.length > 1 << 16) rest = rest.slice(0, 1 << 16);
      lines.forEach(take);
    }
    take(rest + text.end());
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  return { warnings: seen.warning.size, notes: seen.note.size };
}

/** "2 warnings and 1 note" (undefined: neither). */
export function describeCounts(c: LogCounts | undefined): string | undefined {
  if (!c || c.warnings + c.notes === 0) return undefined;
  const n = (k: number, word: string) => `${k} ${word}${k === 1 ? "" : "s"}`;
  return [c.warnings ? n(c.warnings, "warning") : "", c.notes ? n(c.notes, "note") : ""].filter(Boolean).join(" and ");
}
