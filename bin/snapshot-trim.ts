/**
 * Drops from a start-up snapshot blob (dist/check.blob) the compiled code Node.js keeps there for
 * its own built-in modules, but for the few `tcod check` compiles after its start (bench/results/
 * cold-check.md): Node.js compiles all of them into every blob it builds (about 2.7 MB of the blob's
 * 5.6 MB) and reads and copies all of it at each start, while a check loads almost none; a module
 * without its code is compiled from its source when loaded, so nothing else changes.
 *
 * The code is the blob's last part, written by Node.js (src/node_snapshotable.cc, SnapshotData::
 * ToBlob) as a vector: a 64-bit count, then per module a 64-bit length and its id, a 64-bit length
 * and the code. Nothing records where it starts, so it is found as the first place from which such a
 * vector of module ids ends exactly at the end of the file; a blob laid out otherwise (another
 * Node.js) is left as it is. The trimmed blob is kept only when it answers as the whole one does
 * (`trimBlob`: `check --version`, through commander, and a check of a stdlib module).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The modules whose code stays: those a `tcod check` from the snapshot loads after its start when
 * stderr is a terminal (tty) or a file (sync_write_stream), and those of a command line that commander
 * parses (--help, usage errors: commander requires child_process).
 */
export const KEPT = ["tty", "internal/tty", "internal/fs/sync_write_stream", "child_process", "internal/child_process", "dgram", "internal/dgram", "internal/socket_list", "process"];

const ID = /^[A-Za-z_][A-Za-z0-9_/.-]*$/;

/** Where the vector of built-in code starts in `b` and its entries [id, start, end]; undefined when there is none. */
export function findCodeCache(b: Buffer): { start: number; entries: [string, number, number][] } | undefined {
  const u64 = (p: number): number => (b.readUInt32LE(p + 4) === 0 ? b.readUInt32LE(p) : -1);
  const walk = (start: number): [string, number, number][] | undefined => {
    const n = u64(start);
    const entries: [string, number, number][] = [];
    let p = start + 8;
    for (let i = 0; i < n; i++) {
      if (p + 8 > b.length) return undefined;
      const len = u64(p);
      if (len < 1 || len > 200 || p + 16 + len > b.length) return undefined;
      const id = b.toString("latin1", p + 8, p + 8 + len);
      if (!ID.test(id)) return undefined;
      const size = u64(p + 8 + len);
      const end = p + 16 + len + size;
      if (size < 0 || end > b.length) return undefined;
      entries.push([id, p, end]);
      p = end;
    }
    return p === b.length ? entries : undefined;
  };
  for (let p = 0; p + 16 <= b.length; p++) {
    const n = u64(p);
    if (n < 1 || n > 5000) continue;
    const len = u64(p + 8);
    if (len < 1 || len > 200 || p + 16 + len > b.length || !ID.test(b.toString("latin1", p + 16, p + 16 + len))) continue;
    const entries = walk(p);
    if (entries) return { start: p, entries };
  }
  return undefined;
}

/**
 * Trims the blob at `file` in place (keeping `keep`'s code) when `verify(trimmed)` says the trimmed
 * blob works; true when it was trimmed. Any failure leaves the blob as it was.
 */
export function trimCodeCache(file: string, verify: (trimmed: string) => boolean, keep: readonly string[] = KEPT): boolean {
  const tmp = `${file}.trim-${process.pid}`;
  try {
    const b = readFileSync(file);
    const found = findCodeCache(b);
    if (!found) return false;
    const kept = found.entries.filter(([id]) => keep.includes(id));
    const count = Buffer.alloc(8);
    count.writeUInt32LE(kept.length, 0);
    writeFileSync(tmp, Buffer.concat([b.subarray(0, found.start), count, ...kept.map(([, s, e]) => b.subarray(s, e))]));
    if (!verify(tmp)) return false;
    renameSync(tmp, file);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Trims the blob `file` (in dist/, run with the V8 `flags` it was built with) when the trimmed one
 * prints, writes and exits as it does for `check --version` and for a check of std/tcod.
 */
export function trimBlob(file: string, flags: readonly string[]): boolean {
  const run = (blob: string, args: string[]): string => {
    const r = spawnSync(process.execPath, [...flags, "--snapshot-blob", blob, ...args], { encoding: "utf8", timeout: 60_000 });
    return JSON.stringify([r.status, r.signal, r.stdout, r.stderr]);
  };
  const cases = [["check", "--version"], ["check", join(dirname(file), "..", "stdlib", "std", "tcod.tcod")]];
  const whole = cases.map((c) => run(file, c));
  return trimCodeCache(file, (trimmed) => cases.every((c, i) => run(trimmed, c) === whole[i]));
}
