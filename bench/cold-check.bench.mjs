// Cold start of `tcod check` on one example against `node -e 0`, interleaved in the same run (the
// machine is shared and noisy: only the ratio means something). Build first: `npm run build`.
// `tcod …` is the package's command, bin/tcod (for check: node started from the snapshot
// dist/check.blob; --version is answered in sh from package.json, without Node.js);
// `node bin/tcod.mjs check` is the same check without the snapshot, for comparison, and
// `node bin/tcod.mjs --version` the Node.js launcher alone (as npm's Windows shims run the bin), and
// `node dist/tcod.js --version` the CLI loaded to answer it (as every launcher did before).
// Two cases split the snapshot's cost: node started from an empty user-land snapshot (built here,
// under dist/check.blob's V8 flags; what any snapshot costs before its heap) and `tcod check --version` (dist/check.blob deserialized,
// the CLI set up, nothing checked).
// CPU time (user + system of the child, from /proc of this process's children) is recorded beside
// the wall time: on a loaded machine the wall time includes waiting for a core.
// BENCH_BASELINE=DIR (a built checkout of another commit, node_modules linked) adds that build's
// `tcod check` of the same example, interleaved with the rest, for a ratio in the same run.
// Usage: node bench/cold-check.bench.mjs [runs]   → bench/results/cold-check.json
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const runs = Number(process.argv[2] ?? 21);
const example = "examples/texthouse/tcod-f2b.tcod";
const scratch = mkdtempSync(join(tmpdir(), "tcod-cold-"));
const emptyBlob = join(scratch, "empty.blob");
writeFileSync(join(scratch, "empty.cjs"), 'require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {});\n');
// Built and run under the V8 flags dist/check.blob was (its hash seed among them: bin/snapshot-cache.ts).
const blobFlags = readFileSync(join(ROOT, "dist/check.blob.node"), "utf8").split("\n")[2].split(" ");
spawnSync(process.execPath, [...blobFlags, "--snapshot-blob", emptyBlob, "--build-snapshot", join(scratch, "empty.cjs")], { stdio: "ignore" });
const cases = {
  "node -e 0": [process.execPath, ["-e", "0"]],
  "node --snapshot-blob EMPTY": [process.execPath, [...blobFlags, "--snapshot-blob", emptyBlob]],
  "tcod check --version": [join(ROOT, "bin/tcod"), ["check", "--version"]],
  "tcod --version": [join(ROOT, "bin/tcod"), ["--version"]],
  "node bin/tcod.mjs --version": [process.execPath, [join(ROOT, "bin/tcod.mjs"), "--version"]],
  "node dist/tcod.js --version": [process.execPath, [join(ROOT, "dist/tcod.js"), "--version"]],
  [`tcod check ${example}`]: [join(ROOT, "bin/tcod"), ["check", example]],
  [`node bin/tcod.mjs check ${example}`]: [process.execPath, [join(ROOT, "bin/tcod.mjs"), "check", example]],
  ...(process.env.BENCH_BASELINE ? { [`baseline: tcod check ${example}`]: [join(process.env.BENCH_BASELINE, "bin/tcod"), ["check", example]] } : {}),
};
// NODE_EXTRA_CA_CERTS makes every Node.js read and parse that certificate bundle at start-up, before
// any script: where it is set (as on the shared development machine, where it cost ~150 ms of CPU per
// start), it inflates `node -e 0` and hides the ratio tcod's start-up is held to. The children run
// without it; the result records that it was removed.
const env = { ...process.env };
const removedEnv = "NODE_EXTRA_CA_CERTS" in env ? ["NODE_EXTRA_CA_CERTS"] : [];
delete env.NODE_EXTRA_CA_CERTS;
/** CPU seconds (user + system) of this process's reaped children so far (/proc/self/stat, fields 16–17). */
const HZ = 100;
const childCpuMs = () => {
  const f = readFileSync("/proc/self/stat", "utf8").slice(readFileSync("/proc/self/stat", "utf8").lastIndexOf(")") + 2).split(" ");
  return ((Number(f[13]) + Number(f[14])) * 1000) / HZ;
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const cpu = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const loadStart = loadavg().map((x) => Number(x.toFixed(2)));
for (let i = 0; i < runs + 2; i++) {
  for (const [name, [cmd, args]] of Object.entries(cases)) {
    const c0 = childCpuMs();
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { cwd: ROOT, env });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const cms = childCpuMs() - c0;
    if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
    if (i >= 2) { times[name].push(ms); cpu[name].push(cms); } // two warm-up rounds fill the OS file cache
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const base = median(times["node -e 0"]);
const cpuBase = mean(cpu["node -e 0"]);
const result = {
  date: new Date().toISOString(), command: `${process.env.BENCH_BASELINE ? "BENCH_BASELINE=DIR " : ""}node bench/cold-check.bench.mjs ${runs}`, node: process.version, cpus: cpus().length, runs,
  ...(process.env.BENCH_BASELINE ? { baseline: process.env.BENCH_BASELINE_COMMIT ?? process.env.BENCH_BASELINE } : {}),
  env_removed: removedEnv,
  loadavg_at_start: loadStart, loadavg_at_end: loadavg().map((x) => Number(x.toFixed(2))),
  median_ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Number(median(v).toFixed(1))])),
  ratio_to_node: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Number((median(v) / base).toFixed(2))])),
  // CPU time is counted in 10 ms ticks: means over the runs, not medians.
  cpu_mean_ms: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Number(mean(v).toFixed(1))])),
  cpu_ratio_to_node: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Number((mean(v) / cpuBase).toFixed(2))])),
  // The heap `tcod check` deserializes at every start, and an empty user-land snapshot's.
  snapshot_blob_bytes: statSync(join(ROOT, "dist/check.blob")).size,
  empty_snapshot_blob_bytes: statSync(emptyBlob).size,
  target: "tcod check ≤ 1.5 × node -e 0",
};
rmSync(scratch, { recursive: true, force: true });
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results/cold-check.json"), JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify(result, null, 2));
