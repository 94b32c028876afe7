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
import { rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString, startupSnapshot } from "node:v8";
import { checkFiles, preparseStdlib } from "../compiler/index.js";
import { forgetPaths } from "../compiler/modules.js";
import { main } from "./cli.js";
import * as check from "./commands/check.js";

declare global {
  // The bundle's `import.meta.url` and `import.meta.dirname` (esbuild defines): this file's URL and
  // folder where the package is now.
  var __tcodModuleUrl: string;
  var __tcodModuleDir: string;
}

/**
 * Points the bundle's `import.meta` at `file`: its folder now, its URL when first read (only an
 * extension or a syntax error loads a file through it). Making a file URL and reading a path back
 * from it, in Node.js's cold URL code, cost a start ~0.3 ms.
 */
function locate(file: string): void {
  globalThis.__tcodModuleDir = dirname(file);
  Object.defineProperty(globalThis, "__tcodModuleUrl", {
    configurable: true,
    get: () => {
      const url = pathToFileURL(file).href;
      Object.defineProperty(globalThis, "__tcodModuleUrl", { value: url, writable: true, configurable: true });
      return url;
    },
  });
}

/**
 * Curricula that touch what a check of a typical file does: imports of std/, a let, functions,
 * schedules (a feedback one too), units, models served three ways, the fields most examples set
 * (optimizer, staleness, eval), range checks. A function first run at a check is compiled then.
 */
const WARM_UP = `import { f2b, b2f } from "std/tcod"
import { opd } from "std/loss"
import { texthouse } from "std/envs"
import { listed_format } from "std/agent"
import { paced_f2b, kl_settled } from "std/feedback"
let agent = listed_format(memory: "accumulate")
model teacher { path: "oracle"  serve: embedded(smoothing: 0.1) }
model student { path: "loglinear"  serve: embedded(features: 64, candidate_log_odds: 12) }
model remote { path: "org/model"  serve: openai("http://127.0.0.1:8001/v1", dialect: "vllm") }
fn capped(x: turns, k: steps = 6 steps) : turns = min(x, f2b(every: k, max: 30 turns))
curriculum warm {
  teacher: remote
  student: student
  env: texthouse(split: "train", agent: agent)
  steps: 60
  batch: 4 tasks × 2 rollouts
  horizon: capped(30 turns)
  prefix: b2f(every: 5 steps)
  loss: 0.5 * opd(coef: 1.0, aggregate: "seq_mean_token_mean")
  optimizer: adam(lr: 0.03, eps: 1e-6, grad_clip: 1.0, loss_fn: "importance_sampling")
  staleness: 0 steps
  temperature: 1.0
  eval: [evaluate(every: 30 steps, env: texthouse(split: "valid_seen", agent: agent), tasks: 8 tasks, name: "seen", at_start: false)]
}
curriculum paced {
  teacher: teacher
  student: student
  env: texthouse(split: "train")
  steps: 90
  batch: 16 tasks × 1 rollout
  horizon: paced_f2b(every: 1 step, max: 20 turns, when: kl_settled(below: 0.6, decay: 0.5), patience: 1 step, clock: "at_most")
  loss: opd(estimator: "full")
  optimizer: adam(lr: 0.03)
  eval: evaluate(every: 30 steps, env: texthouse(split: "valid_unseen"), temperature: 0.4)
}
`;

/**
 * A check of files this small (in all) runs without Sparkplug, V8's baseline compiler: its code
 * compiled during a check of a few KB is not run long enough to pay for itself (an example of 2.3 KB:
 * ~3 ms less CPU without it, of ~60), while a long check gains from it (a generated file of 10 KB
 * took ~5% more CPU without it, 100 KB ~9%): bench/results/cold-check.md. Only the speed changes.
 */
const NO_SPARKPLUG_BELOW_BYTES = 8 * 1024;

function smallCheck(args: readonly string[]): boolean {
  let bytes = 0;
  for (const a of args.slice(1)) if (!a.startsWith("-")) bytes += statSync(a, { throwIfNoEntry: false })?.size ?? 0;
  return bytes <= NO_SPARKPLUG_BELOW_BYTES;
}

if (startupSnapshot.isBuildingSnapshot()) {
  locate(__filename);
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
  check.warmUp();
  smallCheck([]);
  rmSync(file);
  forgetPaths();
  startupSnapshot.setDeserializeMainFunction(() => {
    // `node --snapshot-blob BLOB …`: the package is the one holding BLOB (dist/check.blob).
    const i = process.execArgv.findIndex((a) => a === "--snapshot-blob" || a.startsWith("--snapshot-blob="));
    const arg = process.execArgv[i]!.includes("=") ? process.execArgv[i]!.slice("--snapshot-blob=".length) : process.execArgv[i + 1]!;
    const dist = dirname(resolve(arg));
    locate(join(dist, "snapshot", "check.cjs"));
    try {
      if (smallCheck(process.argv.slice(1))) setFlagsFromString("--no-sparkplug");
    } catch {
      // a file that cannot be read is the check's to report
    }
    // argv as commander expects it from `node bin/tcod.mjs check …`.
    void main([process.execPath, join(dist, "..", "bin", "tcod.mjs"), ...process.argv.slice(1)], { check: async () => check });
  });
}
