// `tcod check` time and peak memory against source size: one generated file of about 10 KB, 100 KB,
// 1 MB and 10 MB (blocks of documented lets, functions and calls, every value checked; one curriculum
// that reads some of them). Each size is checked REPEAT times in a child process that reports its own
// CPU seconds (user + system) and peak RSS on exit (bench/check-size-usage.mjs); wall seconds are
// measured here. A check that runs past CHECK_TIMEOUT_S is killed and recorded as such, with the CPU
// time and peak RSS it had reached (from /proc). Results are written after every size. The machine is shared, so
// linearity is judged on CPU time, as ratios: CPU per MB at each size, and the CPU of each size over
// the one 10× smaller. The baseline in the same run is `check` of a file of one curriculum (node
// start-up and the stdlib). The load average at start and end is recorded.
// Usage: npm run build && nice -n 10 node bench/check-size.bench.mjs   → bench/results/check-size.json (+ .md)
// CHECK_NODE_FLAGS="--max-semi-space-size=64" runs the checks under those node flags → check-size-flags.json (+ .md).
// AGAINST=DIR (another checkout, built: DIR/bin/tcod.mjs) checks each size with that build too, alternating
// run by run with this one, and adds its best CPU and peak and the ratios to the table: a change measured
// against the build before it in the same run, where the machine's load is the same for both.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const REPEAT = Number(process.env.REPEAT ?? 2);
const TIMEOUT_S = Number(process.env.CHECK_TIMEOUT_S ?? Infinity);
// Node flags for the checks (e.g. `--max-semi-space-size=64`); with any, results go to check-size-flags.*.
const NODE_FLAGS = (process.env.CHECK_NODE_FLAGS ?? "").split(" ").filter(Boolean);
const OUT = NODE_FLAGS.length ? "check-size-flags" : "check-size";
const AGAINST = process.env.AGAINST;
const SIZES = (process.env.SIZES ?? "10000,100000,1000000,10000000").split(",").map(Number);

const HEAD = `import { texthouse } from "std/envs"
import { f2b } from "std/tcod"
model m { path: "x" }
`;
const CURRICULUM = (n) => `curriculum big {
  teacher: m
  student: m
  env:     texthouse()
  steps:   100
  horizon: f${n - 1}(3 turns) + floor(step / k${n - 1}) * 1 turn
}
`;
const block = (i) => `/// Block ${i}: a value in steps, a function of turns, and a schedule that uses both.
let k${i} = ${(i % 7) + 1} steps
fn f${i}(x: turns) : turns = min(x + ${i % 5} turns, 30 turns)
let h${i} = f${i}(2 turns) + floor(step / k${i}) * 1 turn
`;

function generate(bytes) {
  const dir = mkdtempSync(join(tmpdir(), "tcod-size-"));
  writeFileSync(join(dir, "package.json"), "{}");
  const parts = [HEAD];
  let size = HEAD.length, n = 0;
  while (size < bytes) { const b = block(n++); parts.push(b); size += b.length; }
  n = Math.max(n, 1);
  if (parts.length === 1) { parts.push(block(0)); }
  parts.push(CURRICULUM(n));
  const file = join(dir, "big.tcod");
  writeFileSync(file, parts.join(""));
  return { file, bytes: readFileSync(file).length, blocks: n };
}

/** CPU seconds and peak RSS (MB) of a running process, from /proc (Linux). */
function procUsage(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return { cpu: (Number(f[11]) + Number(f[12])) / 100, peakMb: hwm ? Number(hwm[1]) / 1024 : NaN };
  } catch { return { cpu: NaN, peakMb: NaN }; }
}

function measure(file, root = ROOT) {
  const usageFile = `${file}.usage.json`;
  rmSync(usageFile, { force: true });
  const t0 = performance.now();
  const child = spawn(process.execPath, [...NODE_FLAGS, "--import", join(ROOT, "bench/check-size-usage.mjs"), join(root, "bin/tcod.mjs"), "check", file], { env: { ...process.env, TCOD_USAGE_FILE: usageFile }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (b) => { stderr = (stderr + b.toString()).slice(-4000); });
  return new Promise((done) => {
    let last = { cpu: NaN, peakMb: NaN }, timedOut = false;
    const poll = setInterval(() => {
      const now = procUsage(child.pid);
      // A process being reaped has no VmHWM any more: keep the last reading that has one.
      if (Number.isFinite(now.cpu) && Number.isFinite(now.peakMb)) last = now;
      if ((performance.now() - t0) / 1000 > TIMEOUT_S) { timedOut = true; child.kill("SIGKILL"); }
    }, 250);
    child.on("close", (code) => {
      clearInterval(poll);
      const wall = (performance.now() - t0) / 1000;
      const u = existsSync(usageFile) ? JSON.parse(readFileSync(usageFile, "utf8")) : last;
      done({ ok: !timedOut && stderr.includes("ok: 1 file"), timedOut, exit: code, wall, cpu: u.cpu, peakMb: u.peakMb, tail: stderr.split("\n").slice(-3).join("\n") });
    });
  });
}

const loadStart = loadavg();
const started = new Date().toISOString();
const baseline = generate(0);
const base = [];
for (let i = 0; i < REPEAT; i++) base.push(await measure(baseline.file));
const rows = [];
for (const target of SIZES) {
  const g = generate(target);
  const runs = [];
  const againstRuns = [];
  for (let i = 0; i < REPEAT; i++) {
    if (AGAINST) againstRuns.push(await measure(g.file, AGAINST));
    runs.push(await measure(g.file));
    if (runs[runs.length - 1].timedOut) break; // one timeout says enough
  }
  const best = runs.reduce((a, b) => (b.cpu < a.cpu ? b : a));
  rows.push({ target, bytes: g.bytes, blocks: g.blocks, ok: runs.every((x) => x.ok), timedOut: runs.some((x) => x.timedOut), wall: best.wall, cpu: best.cpu, peakMb: Math.round(best.peakMb), runs: runs.map(({ tail: _t, ...x }) => x), ...(runs.every((x) => x.ok) ? {} : { tail: best.tail }), ...(AGAINST ? { against: bestOf(againstRuns) } : {}) });
  console.log(`${g.bytes} bytes: cpu ${best.cpu.toFixed(2)} s, wall ${best.wall.toFixed(2)} s, peak ${best.peakMb.toFixed(0)} MB, ok ${runs.every((x) => x.ok)}${best.timedOut ? ` (killed after ${TIMEOUT_S} s wall)` : ""}`);
  write();
}
/** The commit of a checkout, if it is one. */
function commitOf(dir) {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}
/** The run with the least CPU time, without its stderr tail. */
function bestOf(runs) {
  const { tail: _t, ...best } = runs.reduce((a, b) => (b.cpu < a.cpu ? b : a));
  return { ...best, peakMb: Math.round(Math.min(...runs.map((x) => x.peakMb))), runs: runs.map(({ tail: _u, ...x }) => x) };
}
function write() {
const baseCpu = Math.min(...base.map((b) => b.cpu));
const withRatios = rows.map((r, i) => ({
  ...r,
  cpuOverBaseline: r.cpu / baseCpu,
  cpuPerMb: (r.cpu - baseCpu) / (r.bytes / 1e6),
  ...(i > 0 ? { cpuOverPrevious: (r.cpu - baseCpu) / Math.max(1e-9, rows[i - 1].cpu - baseCpu), bytesOverPrevious: r.bytes / rows[i - 1].bytes, peakOverPrevious: r.peakMb / rows[i - 1].peakMb } : {}),
}));
const result = {
  bench: "check-size", started, finished: new Date().toISOString(), node: process.version, cores: cpus().length,
  loadavg: { start: loadStart, end: loadavg() }, repeat: REPEAT, checkTimeoutS: Number.isFinite(TIMEOUT_S) ? TIMEOUT_S : null,
  baseline: { bytes: baseline.bytes, cpu: baseCpu, wall: Math.min(...base.map((b) => b.wall)), peakMb: Math.round(Math.min(...base.map((b) => b.peakMb))) },
  rows: withRatios,
  ...(AGAINST ? { against: { dir: AGAINST, commit: commitOf(AGAINST) } } : {}),
  note: "cpu = user + system seconds of the check process (best of `repeat`); cpuPerMb and cpuOverPrevious subtract the baseline (start-up + stdlib). Linear growth: cpuOverPrevious ≈ bytesOverPrevious (10).",
};
writeFileSync(join(ROOT, `bench/results/${OUT}.json`), JSON.stringify(result, null, 2) + "\n");
const f = (x, d = 2) => x.toFixed(d);
// The generated part replaces the file's top; its history (from the first `## ` heading on) is kept.
const mdPath = join(ROOT, `bench/results/${OUT}.md`);
const previous = existsSync(mdPath) ? readFileSync(mdPath, "utf8") : "";
const history = previous.search(/^## /m) >= 0 ? previous.slice(previous.search(/^## /m)) : "";
writeFileSync(mdPath, [
  "# `tcod check` against source size (bench/check-size.bench.mjs)", "",
  `${started}, node ${process.version}${NODE_FLAGS.length ? ` ${NODE_FLAGS.join(" ")}` : ""}, ${cpus().length} cores shared with other work: load average ${loadStart.map((x) => f(x)).join(" ")} at start, ${result.loadavg.end.map((x) => f(x)).join(" ")} at end. CPU time (user + system) is the measure; wall time is shown for reference. Best of ${REPEAT}.`, "",
  `Baseline (a file of one curriculum: start-up and the stdlib): ${f(baseCpu)} s CPU, ${result.baseline.peakMb} MB.${Number.isFinite(TIMEOUT_S) ? ` A check running past ${TIMEOUT_S} s of wall time is killed: its row shows the CPU time and peak RSS it had reached (a lower bound).` : ""}`, "",
  "| source | blocks | ok | CPU s | wall s | peak MB | CPU − baseline per MB | CPU growth vs 10× smaller | peak growth |",
  "|---:|---:|:-:|---:|---:|---:|---:|---:|---:|",
  ...withRatios.map((r) => `| ${(r.bytes / 1e6).toFixed(r.bytes < 1e6 ? 2 : 1)} MB | ${r.blocks} | ${r.ok ? "yes" : r.timedOut ? "killed" : "NO"} | ${f(r.cpu)} | ${f(r.wall)} | ${r.peakMb} | ${f(r.cpuPerMb)} | ${r.cpuOverPrevious !== undefined ? `${f(r.cpuOverPrevious, 1)}× (bytes ${f(r.bytesOverPrevious, 1)}×)` : "—"} | ${r.peakOverPrevious !== undefined ? `${f(r.peakOverPrevious, 1)}×` : "—"} |`),
  ...(AGAINST ? [
    "", `Against the build in ${result.against.commit ? `\`${result.against.commit}\`` : AGAINST} (checked alternately with this one, run by run; best of ${REPEAT} each):`, "",
    "| source | CPU s | its CPU s | CPU ratio | wall s | its wall s | peak MB | its peak MB | peak ratio |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...withRatios.map((r) => `| ${(r.bytes / 1e6).toFixed(r.bytes < 1e6 ? 2 : 1)} MB | ${f(r.cpu)} | ${f(r.against.cpu)} | ${f(r.cpu / r.against.cpu)} | ${f(r.wall)} | ${f(r.against.wall)} | ${r.peakMb} | ${r.against.peakMb} | ${f(r.peakMb / r.against.peakMb)} |`),
  ] : []),
  "", `Reproduce: \`npm run build && ${AGAINST ? "AGAINST=DIR " : ""}${Number.isFinite(TIMEOUT_S) ? `CHECK_TIMEOUT_S=${TIMEOUT_S} ` : ""}${NODE_FLAGS.length ? `CHECK_NODE_FLAGS="${NODE_FLAGS.join(" ")}" ` : ""}${process.env.SIZES ? `SIZES=${SIZES.join(",")} ` : ""}REPEAT=${REPEAT} nice -n 10 node bench/check-size.bench.mjs\`.`, "",
].join("\n") + (history ? `\n${history}` : ""));
}
