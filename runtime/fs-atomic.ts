/**
 * Durable file replacement for run-folder state: write a temporary file, fsync it, rename it over
 * the target, fsync the folder. A process killed at any point leaves the old file or the new one,
 * never a half-written one; the fsyncs make the same hold across a machine crash (POSIX rename is
 * atomic, but without them the data or the rename may still sit in the page cache).
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** fsync a folder, so a rename or a new entry in it survives a crash (a no-op where folders cannot be opened). */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some platforms (Windows) cannot open a folder for fsync; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** fsync one file by path. */
export function fsyncFile(path: string): void {
  const fd = openSync(path, "r");
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

/** fsync every file and folder under `dir` (a checkpoint written by a backend that does not sync). */
export function fsyncTree(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) fsyncTree(p);
    else fsyncFile(p);
  }
  fsyncDir(dir);
}

/** Replaces `path` with `data` atomically and durably. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);
  const fd = openSync(tmp, "w");
  try {
    const buf = typeof data === "string" ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}
