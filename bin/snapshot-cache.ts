/**
 * Builds the start-up snapshot of `tcod check` where the package is installed (an npm package ships
 * dist/snapshot/check.cjs but no blob: a blob fits only the Node.js build that makes it). When
 * `tcod check` runs without a usable dist/check.blob, a detached process builds one for this Node.js
 * (as scripts/build.mjs does), so the next check starts from it (bin/tcod). Nothing happens where the
 * package folder is not writable, or with TCOD_NO_SNAPSHOT=1; a failed build leaves nothing behind.
 *
 * The npm bin, bin/tcod.js, is the same sh-and-JavaScript file as bin/tcod but starts with
 * `#!/usr/bin/env node` (npm writes Windows shims from that line). In an installed package (under a
 * node_modules folder, never a checkout) the same process then gives it bin/tcod's `#!/bin/sh`, so
 * that the kernel runs it as sh, which takes the snapshot; tools that run it with node still can.
 */
import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { accessSync, constants, existsSync, linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The first line of bin/tcod.js as packed, and where it is installed on Linux and macOS (bin/tcod's). */
export const NODE_LINE = "#!/usr/bin/env node\n";
export const SH_LINE = "#!/bin/sh\n";
/**
 * The V8 flags `tcod check` runs its snapshot with (bin/tcod passes them; a blob runs only under the
 * flags it was built with, so they are the third line of dist/check.blob.node, space-separated;
 * scripts/build.mjs makes the same):
 * - `--initial-old-space-size=1024`: the old generation's first limit at 1 GB, so a large file's check
 *   does no full collection of its AST, which is all alive (10 MB: 0.85x the CPU and wall time,
 *   bench/results/check-size.md);
 * - `--hash-seed=N --no-rehash-snapshot`: the string hash seed fixed for the blob, so a start does not
 *   re-hash every string and dictionary the snapshot holds with a fresh random seed (~9 ms of a ~70 ms
 *   check, bench/results/cold-check.md). N is drawn at random on the machine that runs the blob, when
 *   its package's first blob is built, and kept in dist/check.seed (`packageHashSeed`), so it stays as
 *   unknown to whoever writes the files a check reads as V8's per-process seed is (the defence
 *   against inputs crafted to collide in V8's hash tables); only `check` from the snapshot runs with it.
 */
export const snapshotFlags = (seed: number | string): string[] => ["--initial-old-space-size=1024", `--hash-seed=${seed}`, "--no-rehash-snapshot"];
/** A new hash seed: random, never 0 (V8's "pick one at random per process"), below 2^48. */
export const newHashSeed = (): number => randomInt(1, 2 ** 48 - 1);
/** A seed as dist/check.seed and the flags line hold it: 1 … 2^48 − 2, in digits. */
const SEED_DIGITS = "[1-9][0-9]{0,14}";
const SEED = new RegExp(`^${SEED_DIGITS}$`);
/**
 * The package's hash seed, dist/check.seed: drawn once and kept, so that every blob built in this
 * dist/ (by scripts/build.mjs, or by two checks' background builds at once) runs under the same
 * flags, and a blob never meets another build's flags line. Made with link(), which does not replace
 * a file: of two processes making it at once, both read the one that won.
 */
export function packageHashSeed(dist: string): number {
  const file = join(dist, "check.seed");
  const read = (): number | null => {
    try {
      const text = readFileSync(file, "utf8").trim();
      return SEED.test(text) ? Number(text) : null;
    } catch {
      return null;
    }
  };
  const found = read();
  if (found !== null) return found;
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${newHashSeed()}\n`);
  try {
    linkSync(tmp, file);
  } catch {
    // made meanwhile by another process (read below), or a file that is not a seed: replaced
    if (read() === null) renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  return read() ?? newHashSeed();
}
/** The flags line of dist/check.blob.node that bin/tcod accepts (its `case` matches the same). */
export const SNAPSHOT_FLAGS_LINE = new RegExp(`^${snapshotFlags("SEED").join(" ").replace("SEED", SEED_DIGITS)}$`);

export function buildSnapshotLater(argv: string[]): void {
  if (argv[2] !== "check" || process.env.TCOD_NO_SNAPSHOT || process.platform === "win32") return;
  const dist = dirname(fileURLToPath(import.meta.url));
  const cjs = join(dist, "snapshot", "check.cjs");
  const blob = join(dist, "check.blob");
  let build: boolean;
  let launcher = join(dist, "..", "bin", "tcod.js");
  try {
    if (!existsSync(cjs)) return;
    accessSync(dist, constants.W_OK);
    accessSync(dirname(cjs), constants.W_OK);
    build = !usable(blob);
    if (!(dist.split(sep).includes("node_modules") && readFileSync(launcher, "utf8").startsWith(NODE_LINE))) launcher = "";
  } catch {
    launcher = "";
    build = false;
  }
  if (!build && !launcher) return;
  const script = `
    const { execFileSync } = require("node:child_process");
    const { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } = require("node:fs");
    const [blob, cjs, build, launcher, ...flags] = process.argv.slice(1);
    const tmp = blob + ".tmp-" + process.pid;
    if (build) try {
      execFileSync(process.execPath, [...flags, "--snapshot-blob", tmp, "--build-snapshot", cjs], { stdio: "ignore", timeout: 120000 });
      // As scripts/build.mjs does: Node.js's code for its own modules, but what a check loads, dropped.
      try { require(require("node:path").join(require("node:path").dirname(cjs), "trim.cjs")).trimBlob(tmp, flags); } catch {}
      renameSync(tmp, blob);
      writeFileSync(blob + ".node", process.execPath + "\\n" + process.version + "\\n" + flags.join(" ") + "\\n");
    } catch { rmSync(tmp, { force: true }); return; }
    if (!launcher) return;
    const next = launcher + ".tmp-" + process.pid;
    try {
      const text = readFileSync(launcher, "utf8");
      if (!text.startsWith(${JSON.stringify(NODE_LINE)})) return;
      writeFileSync(next, ${JSON.stringify(SH_LINE)} + text.slice(${NODE_LINE.length}), { mode: 0o755 });
      chmodSync(next, 0o755);
      renameSync(next, launcher);
    } catch { rmSync(next, { force: true }); }`;
  let flags: string[] = [];
  try {
    if (build) flags = snapshotFlags(packageHashSeed(dist));
  } catch {
    build = false; // no seed can be kept here: no blob either
    if (!launcher) return;
  }
  spawn(process.execPath, ["-e", `(() => {${script}})()`, blob, cjs, build ? "1" : "", launcher, ...flags], { detached: true, stdio: "ignore" }).unref();
}

/** The blob bin/tcod would take: built by this Node.js with the snapshot's flags (dist/check.blob.node), and not older than it. */
function usable(blob: string): boolean {
  if (!existsSync(blob) || !existsSync(`${blob}.node`)) return false;
  const [built, , flags] = readFileSync(`${blob}.node`, "utf8").split("\n");
  return built === process.execPath && SNAPSHOT_FLAGS_LINE.test(flags ?? "") && statSync(process.execPath).mtimeMs <= statSync(blob).mtimeMs;
}
