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
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The first line of bin/tcod.js as packed, and where it is installed on Linux and macOS (bin/tcod's). */
export const NODE_LINE = "#!/usr/bin/env node\n";
export const SH_LINE = "#!/bin/sh\n";
/**
 * The V8 flags `tcod check` runs its snapshot with (bin/tcod passes them; a blob runs only under the
 * flags it was built with, so they are the third line of dist/check.blob.node; scripts/build.mjs has
 * the same). The old generation's first limit at 1 GB: a large file's check does no full collection
 * of its AST, which is all alive (10 MB: 0.85x the CPU and wall time, bench/results/check-size.md).
 */
export const SNAPSHOT_FLAGS = "--initial-old-space-size=1024";

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
    const [blob, cjs, build, launcher] = process.argv.slice(1);
    const tmp = blob + ".tmp-" + process.pid;
    if (build) try {
      execFileSync(process.execPath, [${JSON.stringify(SNAPSHOT_FLAGS)}, "--snapshot-blob", tmp, "--build-snapshot", cjs], { stdio: "ignore", timeout: 120000 });
      // As scripts/build.mjs does: Node.js's code for its own modules, but what a check loads, dropped.
      try { require(require("node:path").join(require("node:path").dirname(cjs), "trim.cjs")).trimBlob(tmp, [${JSON.stringify(SNAPSHOT_FLAGS)}]); } catch {}
      renameSync(tmp, blob);
      writeFileSync(blob + ".node", process.execPath + "\\n" + process.version + "\\n" + ${JSON.stringify(SNAPSHOT_FLAGS)} + "\\n");
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
  spawn(process.execPath, ["-e", `(() => {${script}})()`, blob, cjs, build ? "1" : "", launcher], { detached: true, stdio: "ignore" }).unref();
}

/** The blob bin/tcod would take: built by this Node.js with SNAPSHOT_FLAGS (dist/check.blob.node), and not older than it. */
function usable(blob: string): boolean {
  if (!existsSync(blob) || !existsSync(`${blob}.node`)) return false;
  const [built, , flags] = readFileSync(`${blob}.node`, "utf8").split("\n");
  return built === process.execPath && flags === SNAPSHOT_FLAGS && statSync(process.execPath).mtimeMs <= statSync(blob).mtimeMs;
}
