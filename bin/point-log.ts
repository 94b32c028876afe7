/**
 * A sweep point's stderr kept in its run folder (RUN_DIR/stderr.log): the sweep appends what each
 * attempt of the point writes, as it arrives, under a header line per attempt (start, resume or
 * restart), so a point that completes keeps its warnings and notes (a preflight warning, rows kept
 * aside on a restart, a stale lock taken over) and a crash keeps what came before it. The sweep's
 * summary counts the warnings and notes in the file (`countLog`) and names it.
 */
import { closeSync, openSync, readSync, writeSync } from "node:fs";
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

/** One attempt's writer. A write the machine refuses stops the writing; `failed` says why. */
export interface PointLog {
  write(chunk: Buffer | string): void;
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
  // Each chunk written at once (no buffer in this process): a point or a sweep that dies keeps what came before.
  const put = (data: Buffer | string) => {
    if (fd === undefined) return;
    try {
      const buf = typeof data === "string" ? Buffer.from(data) : data;
      for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    } catch (e) { fail(e); }
  };
  try { fd = openSync(path, "a"); } catch (e) { fail(e); }
  put(`--- ${header} ---\n`);
  let lastNewline = true;
  return {
    write(chunk) {
      if (chunk.length === 0) return;
      put(chunk);
      lastNewline = (typeof chunk === "string" ? chunk.endsWith("\n") : chunk[chunk.length - 1] === 0x0a);
    },
    close(footer) {
      if (footer !== undefined) put(`${lastNewline ? "" : "\n"}--- ${footer} ---\n`);
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
