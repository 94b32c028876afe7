/**
 * The start-up snapshot of `tcod check` (dist/check.blob; scripts/build.mjs builds it with
 * `node --snapshot-blob dist/check.blob --build-snapshot dist/snapshot/check.cjs`): the CLI and the
 * compiler loaded, the stdlib parsed and one curriculum checked (so the code a check runs is
 * compiled: V8 keeps the bytecode, not the type feedback), saved as a V8 heap that
 * `node --snapshot-blob dist/check.blob check FILES…` starts from in under half the time of a check
 * without it. Beyond `node -e 0`, such a start costs the deserializing of this heap about as much as
 * the check itself (bench/cold-check.bench.mjs), so what the heap holds matters: see `main` in
 * bin/cli.ts. bin/tcod picks it for `tcod check` when it was built by the Node.js that runs; every
 * other command, and any other Node.js, runs bin/tcod.mjs.
 *
 * The Chevrotain parser is not in it: valid files take the fast parser (grammar/fast.ts), and the
 * first file that does not is parsed by dist/snapshot/recovering.cjs, required then (scripts/build.mjs).
 *
 * Node.js 20 runs a snapshot's main function without a module loader, so this bundle is CommonJS
 * and loads nothing else (an extension's ts-morph and esbuild are loaded through createRequire, from
 * where the package is at run time, not where the snapshot was built).
 */
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startupSnapshot } from "node:v8";
import { checkFiles, preparseStdlib } from "../compiler/index.js";
import { forgetPaths } from "../compiler/modules.js";
import { main } from "./cli.js";
import * as check from "./commands/check.js";

declare global {
  // The bundle's `import.meta.url` (esbuild define): this file's URL where the package is now.
  var __tcodModuleUrl: string;
}

/** A curriculum that touches what a check does: imports of std/, functions, schedules, units, a range check. */
const WARM_UP = `import { f2b, b2f } from "std/tcod"
import { opd } from "std/loss"
import { texthouse } from "std/envs"
model teacher { path: "oracle"  serve: embedded() }
model student { path: "loglinear"  serve: embedded() }
fn capped(x: turns, k: steps = 6 steps) : turns = min(x, f2b(every: k, max: 30 turns))
curriculum warm {
  teacher: teacher
  student: student
  env: texthouse(split: "train")
  steps: 60
  batch: 4 tasks × 2 rollouts
  horizon: capped(30 turns)
  prefix: b2f(every: 5 steps)
  loss: 0.5 * opd()
}
`;

if (startupSnapshot.isBuildingSnapshot()) {
  globalThis.__tcodModuleUrl = pathToFileURL(__filename).href;
  preparseStdlib();
  const file = join(dirname(__filename), "warm-up.tcod");
  writeFileSync(file, WARM_UP);
  for (let i = 0; i < 3; i++) {
    const r = checkFiles([file]);
    if (!r.ok) throw new Error(`snapshot warm-up did not compile: ${r.diagnostics.map((x) => x.message).join("; ")}`);
  }
  // The CLI's way to the check (bin/cli.ts main, bin/commands/check.ts direct), run as far as the
  // action, which runs nothing here: compiled now, not at each start.
  void main([process.execPath, "tcod", "check", file], { check: async () => ({ register: () => {}, direct: () => () => {} }) });
  rmSync(file);
  forgetPaths();
  startupSnapshot.setDeserializeMainFunction(() => {
    // `node --snapshot-blob BLOB …`: the package is the one holding BLOB (dist/check.blob).
    const i = process.execArgv.findIndex((a) => a === "--snapshot-blob" || a.startsWith("--snapshot-blob="));
    const arg = process.execArgv[i]!.includes("=") ? process.execArgv[i]!.slice("--snapshot-blob=".length) : process.execArgv[i + 1]!;
    const dist = dirname(resolve(arg));
    globalThis.__tcodModuleUrl = pathToFileURL(join(dist, "snapshot", "check.cjs")).href;
    // argv as commander expects it from `node bin/tcod.mjs check …`.
    void main([process.execPath, join(dist, "..", "bin", "tcod.mjs"), ...process.argv.slice(1)], { check: async () => check });
  });
}
