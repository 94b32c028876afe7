// The language server's re-check after an edit (what runs between a keystroke and its diagnostics):
// the edited file is re-analysed by lsp/workspace.ts as `tcod lsp` does it (the disk through its cache,
// parses reused by text, modules of earlier compilations adopted, memoized calls; see the header of
// lsp/workspace.ts). On every example, and in the 1,000-module project of
// bench/compile-scale.bench.mjs (an edit to the entry, and to a module deep in the tree).
// Two kinds of keystroke: `append`, a new top-level value at the end of the file (read by no plan:
// each curriculum's and sweep point's plan is reused), and `inside`, a comment typed inside the first
// curriculum (its text changes: that curriculum, every sweep point of it, is compiled again).
// Targets: p95 ≤ 10 ms on the examples, ≤ 50 ms in the 1,000-module project.
// Wall time and CPU time (process.cpuUsage around each analysis) are both recorded: on a loaded
// machine the wall time includes waiting for a core; the load average is recorded with them. On
// Linux, also the main thread's CPU time (`main_cpu_*`): process CPU counts V8's compiler and GC
// helper threads too, which in a new process are much of it (see mainThreadMs).
// The process runs under the V8 flags of `tcod lsp` (lsp/node-flags.ts), as the server does.
// Usage: node bench/lsp-incremental.bench.mjs [edits]   → bench/results/lsp-incremental.json
import { build } from "esbuild";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";

const ROOT = join(import.meta.dirname, "..");
const edits = Number(process.argv[2] ?? 40);
const loadStart = loadavg().map((x) => Number(x.toFixed(2)));
/** The Workspace class of the sources under `root` (bundled, as `tcod lsp` runs it). */
async function workspaceOf(root, tag, keep = false) {
  const out = join(ROOT, "dist", `lsp-bench-${process.pid}-${tag}.mjs`);
  if (process.env.BENCH_CHILD) return (await import(pathToFileURL(JSON.parse(process.env.BENCH_CHILD).bundle).href));
  // With the server's warm-up (lsp/warmup.ts) and its V8 flags (lsp/node-flags.ts), where the build has them.
  const warmup = existsSync(join(root, "lsp/warmup.ts")) ? 'export * from "./lsp/warmup.ts";' : "";
  const flags = existsSync(join(root, "lsp/node-flags.ts")) ? 'export { LSP_NODE_FLAGS } from "./lsp/node-flags.ts";' : "";
  await build({
    stdin: { contents: 'export { Workspace } from "./lsp/workspace.ts";' + warmup + flags, resolveDir: root, loader: "ts" },
    outfile: out, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning",
    external: ["ts-morph", "esbuild"],
    define: { "process.env.TCOD_SKIP_GRAMMAR_VALIDATION": '"1"' },
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  if (keep) return { ...(await import(pathToFileURL(out).href)), bundle: out };
  try { return (await import(pathToFileURL(out).href)); } finally { rmSync(out, { force: true }); }
}
const THIS = await workspaceOf(ROOT, "this", true);
// The bench runs under the V8 flags `tcod lsp` runs under (lsp/node-flags.ts; since session 10), as
// its cold processes do: started without them, it runs itself again with them. The baseline's
// sessions share this process and its flags (the ratios are the code's); its cold processes run
// under its own. BENCH_NODE_DEFAULTS=1: this process runs under Node.js's defaults (to compare).
const FLAGS = THIS.LSP_NODE_FLAGS ?? [];
if (!process.env.BENCH_CHILD && !process.env.BENCH_NODE_DEFAULTS && FLAGS.some((f) => !process.execArgv.includes(f))) {
  rmSync(THIS.bundle, { force: true });
  const again = spawnSync(process.execPath, [...process.execArgv, ...FLAGS, ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(again.status ?? 1);
}
const Workspace = THIS.Workspace;
// BENCH_BASELINE=DIR: a checkout of the baseline (node_modules linked), timed in the same run, each
// session right before this build's, for ratios measured under the same load.
const BASE = process.env.BENCH_BASELINE && !process.env.BENCH_CHILD ? await workspaceOf(resolve(process.env.BENCH_BASELINE), "baseline", true) : undefined;
const BASELINE = BASE?.Workspace;

/**
 * CPU time of this process's main thread so far, ms (Linux: the scheduler's run time of the thread,
 * in ns), else undefined. process.cpuUsage counts every thread: also V8's optimizing compiler and
 * GC helper threads, which run beside the main thread and, where a core is free, do not delay the
 * diagnostics; the main thread's time is the re-check's own (since session 10, both are recorded).
 */
const MAIN_THREAD = `/proc/self/task/${process.pid}/schedstat`;
const mainThreadMs = existsSync(MAIN_THREAD) ? () => Number(readFileSync(MAIN_THREAD, "utf8").split(" ")[0]) / 1e6 : () => undefined;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** The number literals of `text` between offsets a and b (not inside comments or strings), as [offset, text]. */
function numbersIn(text, a, b) {
  const out = [];
  const re = /\/\/[^\n]*|\/\*[^]*?\*\/|"(?:[^"\\\n]|\\.)*"|(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?(?![\w.])/g;
  re.lastIndex = a;
  for (let m; (m = re.exec(text)) && m.index < b;) if (/^\d/.test(m[0])) out.push([m.index, m[0]]);
  return out;
}
/** The first curriculum's body: [start, end) offsets of its braces' inside. */
function curriculumBody(text) {
  const m = /\ncurriculum [^\n]*\{/.exec(text);
  if (!m) throw new Error("no curriculum to edit");
  let depth = 1;
  let k = m.index + m[0].length;
  for (; k < text.length && depth > 0; k++) depth += text[k] === "{" ? 1 : text[k] === "}" ? -1 : 0;
  return [m.index + m[0].length, k - 1];
}
/** A number replaced by a nearby one, different for each edit i: 250 → 251, 252, …; 0.3 → 0.301, 0.302, …; 1e-6 → 1.01e-6, …. */
function nudged(num, i) {
  const [mant, exp] = num.split("e");
  const m = mant.includes(".") ? `${mant}${String(i + 1).padStart(3, "0")}` : exp !== undefined ? `${mant}.${String(i + 1).padStart(3, "0")}` : String(Number(mant) + i + 1);
  return exp !== undefined ? `${m}e${exp}` : m;
}
const splice = (text, at, len, s) => text.slice(0, at) + s + text.slice(at + len);

/**
 * Keystroke kinds. Each `make(base)` returns (i) => the text after edit i, or undefined when the file
 * has no place for it; every edit of a run differs from the one before.
 * - append: a new top-level value at the end of the file (read by no plan);
 * - inside: a comment typed inside the first curriculum (whitespace and comments only);
 * - field: the number of the first curriculum's `steps:` field changed (250 → 251, 252, …);
 * - value: a number in a `let` or function body of the file changed, or where the file has none, the
 *   first number inside a call in the first curriculum (`every: 6 steps` → 7, 8, …, or 0.3 → 0.301, …);
 * - ident: a character typed into a name the first curriculum reads: its last letter deleted (the
 *   name is unknown: a diagnostic with a did-you-mean), then typed again (the file as it was), and so on.
 */
const EDITS = {
  append: (base) => (i) => `${base}\nlet bench_edit_${i % 3} = ${i + 1} steps\n`,
  inside: (base) => (i) => {
    const out = base.replace(/(\ncurriculum [^\n]*\{)/, `$1 /* bench edit ${i} */`);
    if (out === base) throw new Error("no curriculum to edit");
    return out;
  },
  field: (base) => {
    const [a, b] = curriculumBody(base);
    const m = /[\s{]steps:\s*(\d+)/.exec(base.slice(a - 1, b));
    if (!m) return undefined;
    const at = a - 1 + m.index + m[0].length - m[1].length;
    return (i) => splice(base, at, m[1].length, nudged(m[1], i));
  },
  value: (base) => {
    const decls = [...base.matchAll(/\n(?:export )?(?:let|fn) [^]*?(?=\n(?:export |let |fn |model |curriculum |sweep |import )|$)/g)];
    const inLets = decls.flatMap((m) => numbersIn(base, m.index, m.index + m[0].length));
    const [a, b] = /\ncurriculum /.test(base) ? curriculumBody(base) : [0, 0];
    // A number inside a call's parentheses in the curriculum: after "(" and before the matching ")".
    const inCalls = numbersIn(base, a, b).filter(([at]) => { const before = base.slice(a, at); return (before.match(/\(/g) ?? []).length > (before.match(/\)/g) ?? []).length; });
    return [...inLets, ...inCalls].map(([at, num]) => (i) => splice(base, at, num.length, nudged(num, i)));
  },
  ident: (base) => {
    const [a, b] = curriculumBody(base);
    // The value of a field: the first name after `NAME:` that is not a keyword or a unit.
    const re = /\n\s*\w+:\s*([A-Za-z_]\w{2,})/g;
    re.lastIndex = a;
    const m = re.exec(base);
    if (!m || m.index > b) return undefined;
    const end = m.index + m[0].length;
    return (i) => (i % 2 === 0 ? splice(base, end - 1, 1, "") : base);
  },
};

/** Diagnostics as codes and positions (to compare an edit's with the file's). */
const codes = (a) => a.result.diagnostics.map((d) => `${d.code}@${d.span.file}:${d.span.start.offset}${process.env.BENCH_DEBUG ? " " + d.message : ""}`).join(" ");

/**
 * The edit function of `kind` for `edited` (whose text is `base`): for `value`, the first candidate
 * whose edits keep the diagnostics of the file (a value out of its range would test the error path).
 */
const candidatesOf = (base, kind) => { const made = EDITS[kind](base); return made === undefined ? [] : Array.isArray(made) ? made : [made]; };
/** Which of `candidatesOf` editsOf chose, per session key (for the cold-process runs, which must not analyse before they time). */
const editIndex = new Map();
function editsOf(path, edited, base, kind) {
  const candidates = candidatesOf(base, kind);
  if (kind === "ident" || kind === "append" || kind === "inside") return candidates[0];
  const fresh = (text) => { const ws = new Workspace(); ws.setOpen(path, readFileSync(path, "utf8")); ws.setOpen(edited, text); return codes(ws.analyze(path)); };
  const want = fresh(base).replace(/:\d+/g, "");
  return candidates.find((f) => [0, edits - 1].every((i) => fresh(f(i)).replace(/:\d+/g, "") === want));
}

/** Open `path`, analyse it once (the cold start of the session), then time `edits` edits of `edited`. */
const editFns = new Map();
function session(path, edited = path, kind = "append", n = edits) {
  const base = readFileSync(edited, "utf8");
  const k = `${path}\n${edited}\n${kind}`;
  if (!editFns.has(k)) { const fn = editsOf(path, edited, base, kind); editFns.set(k, fn); editIndex.set(k, candidatesOf(base, kind).findIndex((f) => fn && f(0) === fn(0) && f(1) === fn(1))); }
  const edit = editFns.get(k);
  if (!edit) return undefined;
  // The warm-up pass warms the baseline's code too (it is a bundle of its own, compiled by the JIT
  // separately): before 2026-12-01 20:00 its timed pass paid its JIT warm-up on the first examples.
  if (n !== edits) { if (BASELINE) timed(BASELINE, path, edited, base, kind, edit, n); return timed(Workspace, path, edited, base, kind, edit, n); }
  if (!BASELINE) return timed(Workspace, path, edited, base, kind, edit);
  const before = timed(BASELINE, path, edited, base, kind, edit);
  const now = timed(Workspace, path, edited, base, kind, edit);
  const ratio = (k) => Number((now[k] / before[k]).toFixed(2));
  return { ...now, baseline: before, ratio_cpu_median: ratio("cpu_median_ms"), ratio_cpu_p95: ratio("cpu_p95_ms") };
}

function timed(Workspace, path, edited, base, kind, edit, n = edits) {
  const ws = new Workspace();
  ws.setOpen(path, readFileSync(path, "utf8"));
  if (edited !== path) ws.setOpen(edited, base);
  const first = ws.analyze(path);
  const times = [];
  const cpu = [];
  const main = [];
  for (let i = 0; i < n; i++) {
    const text = edit(i);
    if (text === base && kind !== "ident") throw new Error(`${edited}: ${kind} edit ${i} changed nothing`);
    ws.setOpen(edited, text);
    const m0 = mainThreadMs();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const a = ws.analyze(path);
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    if (m0 !== undefined) main.push(mainThreadMs() - m0);
    // A valid edit keeps the file's diagnostics (their number); `ident`'s odd edits are the file again.
    if ((kind !== "ident" || text === base) && a.result.diagnostics.length !== first.result.diagnostics.length) throw new Error(`${path}: the ${kind} edit ${i} changed the diagnostics: ${codes(a)} (was ${codes(first)})`);
    if (kind === "ident" && text !== base && a.result.diagnostics.length === first.result.diagnostics.length) throw new Error(`${path}: the ident edit ${i} is not an error`);
  }
  const over = cpu.filter((x) => x > 10).length;
  const firstN = Math.min(n, WARMUP || 20);
  return {
    cpu_total_ms: Number(cpu.reduce((a, b) => a + b, 0).toFixed(1)), [`cpu_max_first_${firstN}_ms`]: Number(Math.max(...cpu.slice(0, firstN)).toFixed(2)),
    first_ms: Number(first.ms.toFixed(1)), median_ms: Number(pct(times, 50).toFixed(2)), p95_ms: Number(pct(times, 95).toFixed(2)),
    cpu_median_ms: Number(pct(cpu, 50).toFixed(2)), cpu_p95_ms: Number(pct(cpu, 95).toFixed(2)), cpu_edits_over_10ms: over, diagnostics: first.result.diagnostics.length,
    ...(main.length ? { main_cpu_median_ms: Number(pct(main, 50).toFixed(2)), main_cpu_p95_ms: Number(pct(main, 95).toFixed(2)), main_cpu_edits_over_10ms: main.filter((x) => x > 10).length } : {}),
    wall_edits_over_10ms: times.filter((x) => x > 10).length,
    // A cold process's every edit, for the percentiles over all of them (coldSummary).
    ...(process.env.BENCH_CHILD ? { samples: { wall: times.map(r2), cpu: cpu.map(r2), main: main.map(r2) } } : {}),
  };
}
const r2 = (x) => Number(x.toFixed(2));

const KINDS = (process.env.BENCH_KINDS ?? "append,inside,field,value,ident").split(",");
const only = process.env.BENCH_ONLY; // a substring of the example paths to run (for profiling)
const walk = (d) => readdirSync(d).sort().flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith(".tcod") ? [join(d, n)] : []));
const byKind = Object.fromEntries(KINDS.map((k) => [k, []]));
const files = walk(join(ROOT, "examples")).filter((f) => !only || f.includes(only));
// A warm-up pass (BENCH_WARMUP edits of each kind on every example, default 20, untimed but
// summarized as `warmup`): the timed pass measures a server whose code the JIT has compiled, as after
// the first minute of an editor session; the warm-up's own numbers show that first minute.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
// BENCH_CHILD: one cold-process run (see "Cold processes" below): in a process that has analysed
// nothing before, the example is opened (analysed once, untimed, as the server does at didOpen), then
// if asked the server's warm-up runs to its end (lsp/warmup.ts: the server starts it after the first
// diagnostics; typing a second later finds it done), then the first WARMUP edits of each kind.
if (process.env.BENCH_CHILD) {
  const cfg = JSON.parse(process.env.BENCH_CHILD);
  const out = { kinds: {} };
  const base = readFileSync(cfg.file, "utf8");
  { const ws = new Workspace(); ws.setOpen(cfg.file, base); ws.analyze(cfg.file); }
  if (cfg.warmup) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    // Since session 10 the server's warm-up also types into a copy of the opened document.
    for (const _ of (THIS.documentEdits ? THIS.warmUp([{ path: cfg.file, text: base }]) : THIS.warmUp()));
    const c = process.cpuUsage(c0);
    out.server_warmup = { cpu_ms: Number(((c.user + c.system) / 1000).toFixed(1)), wall_ms: Number((performance.now() - t0).toFixed(1)), rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20) };
  }
  for (const [kind, i] of Object.entries(cfg.index)) out.kinds[kind] = timed(Workspace, cfg.file, cfg.file, base, kind, candidatesOf(base, kind)[i], WARMUP);
  out.rss_mb_end = Math.round(process.memoryUsage().rss / 2 ** 20);
  console.log(JSON.stringify(out));
  process.exit(0);
}
const warm = Object.fromEntries(KINDS.map((k) => [k, []]));
if (WARMUP > 0) for (const f of files) for (const k of KINDS) { const r = session(f, f, k, WARMUP); if (r) warm[k].push({ file: f.slice(ROOT.length + 1), ...r }); }
for (const f of files) {
  for (const k of KINDS) {
    const r = session(f, f, k);
    if (r) byKind[k].push({ file: f.slice(ROOT.length + 1), ...r });
  }
}
const summary = (xs) => (xs.length === 0 ? { examples: 0 } : {
  examples: xs.length,
  p95_ms_max: Number(Math.max(...xs.map((e) => e.p95_ms)).toFixed(2)), p95_ms_median: Number(pct(xs.map((e) => e.p95_ms), 50).toFixed(2)),
  cpu_p50_ms_median: Number(pct(xs.map((e) => e.cpu_median_ms), 50).toFixed(2)),
  cpu_p95_ms_max: Number(Math.max(...xs.map((e) => e.cpu_p95_ms)).toFixed(2)), cpu_p95_ms_median: Number(pct(xs.map((e) => e.cpu_p95_ms), 50).toFixed(2)),
  examples_cpu_p95_over_10ms: xs.filter((e) => e.cpu_p95_ms > 10).map((e) => `${e.file} ${e.cpu_p95_ms}`),
  worst_cpu: xs.reduce((a, b) => (b.cpu_p95_ms > a.cpu_p95_ms ? b : a)).file,
  ...(xs[0].main_cpu_p95_ms !== undefined ? {
    main_cpu_p95_ms_max: Number(Math.max(...xs.map((e) => e.main_cpu_p95_ms)).toFixed(2)), main_cpu_p95_ms_median: Number(pct(xs.map((e) => e.main_cpu_p95_ms), 50).toFixed(2)),
    examples_main_cpu_p95_over_10ms: xs.filter((e) => e.main_cpu_p95_ms > 10).map((e) => `${e.file} ${e.main_cpu_p95_ms}`),
  } : {}),
  ...(xs[0].baseline ? {
    baseline_cpu_p50_ms_median: Number(pct(xs.map((e) => e.baseline.cpu_median_ms), 50).toFixed(2)),
    baseline_cpu_p95_ms_max: Number(Math.max(...xs.map((e) => e.baseline.cpu_p95_ms)).toFixed(2)),
    baseline_examples_cpu_p95_over_10ms: xs.filter((e) => e.baseline.cpu_p95_ms > 10).length,
    ratio_cpu_p50_median: Number(pct(xs.map((e) => e.ratio_cpu_median), 50).toFixed(2)),
    ratio_cpu_p95_median: Number(pct(xs.map((e) => e.ratio_cpu_p95), 50).toFixed(2)),
  } : {}),
});

// The 1,000-module project of compile-scale.bench.mjs.
const n = 1000;
const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-scale-"));
writeFileSync(join(dir, "package.json"), `{ "name": "scale", "private": true }\n`);
for (let i = 0; i < n; i++) {
  const kids = [2 * i + 1, 2 * i + 2].filter((c) => c < n);
  const imports = kids.map((c) => `import { f${c}, k${c} } from "./m${c}"`).join("\n");
  const body = kids.length ? `max(${kids.map((c) => `f${c}(x)`).join(", ")}${kids.length === 1 ? ", x" : ""}) + 0 turns` : "x";
  writeFileSync(join(dir, `m${i}.tcod`), `${imports}\nimport { f2b } from "std/tcod"\n/// Module ${i}.\nexport fn f${i}(x: turns) : turns = min(${body}, 30 turns)\nexport let k${i} = ${(i % 7) + 1} steps\nlet unused${i} = k${i} * 2 + ${i} steps\nfn helper${i}(a: steps = k${i}, b: number = 0.5) : turns = f2b(every: a, max: 30 turns) * b\n`);
}
writeFileSync(join(dir, "main.tcod"), `import { f0, k0 } from "./m0"\nimport { texthouse } from "std/envs"\nmodel m { path: "x" }\ncurriculum big { teacher: m  student: m  env: texthouse()  steps: 100  horizon: f0(1 turn) + floor(step / k0) * 1 turn  max_turns: 30 turns }\n`);
const scale = process.env.BENCH_SCALE === "0" ? undefined : {
  edit_entry: session(join(dir, "main.tcod")),
  edit_module_700: session(join(dir, "main.tcod"), join(dir, "m700.tcod")),
  edit_entry_inside_curriculum: session(join(dir, "main.tcod"), join(dir, "main.tcod"), "inside"),
  edit_entry_field: session(join(dir, "main.tcod"), join(dir, "main.tcod"), "field"),
  edit_module_700_value: session(join(dir, "main.tcod"), join(dir, "m700.tcod"), "value"),
};
rmSync(dir, { recursive: true, force: true });

// Cold processes: what a user who opens one file in a new server lives through. The warm-up pass
// above runs every example in one process, so past its first examples the compiler's code is
// already compiled by the JIT; here each run is a new process (BENCH_CHILD) that analyses one
// example and times the first WARMUP edits of each kind, each on a new workspace as above: without
// the server's warm-up, and (when this build has one) after it; with BENCH_BASELINE, the baseline's
// processes too (summarized as `baseline`). BENCH_COLD: the examples, BENCH_COLD_RUNS: runs of each
// (alternating), 0: none.
const COLD = (process.env.BENCH_COLD ?? "alfworld/paced-f2b,alfworld/atod,alfworld/tcod-b2f,scienceworld/embedded-f2b,texthouse/gpu/turnopd,webshop/opd").split(",").filter(Boolean);
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 2);
const coldRuns = [];
// Each process runs under its build's server flags (lsp/node-flags.ts: how `tcod lsp` is started),
// the baseline's (BENCH_BASELINE) right before this build's.
const builds = [...(BASE ? [["baseline", BASE]] : []), ["this", THIS]];
for (let r = 0; r < COLD_RUNS; r++) for (const name of COLD) for (const warmup of THIS.warmUp ? [false, true] : [false]) for (const [tag, B] of builds) {
  if (warmup && !B.warmUp) continue;
  const file = join(ROOT, "examples", `${name}.tcod`);
  const index = {};
  for (const k of KINDS) {
    const key = `${file}\n${file}\n${k}`;
    if (!editFns.has(key)) session(file, file, k, 1);
    if (editIndex.get(key) >= 0) index[k] = editIndex.get(key);
  }
  const child = spawnSync(process.execPath, [...(B.LSP_NODE_FLAGS ?? []), fileURLToPath(import.meta.url), String(edits)], { env: { ...process.env, BENCH_CHILD: JSON.stringify({ bundle: B.bundle, file, warmup, index }) }, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`cold run of ${name}: ${child.stderr}`);
  coldRuns.push({ build: tag, file: name, server_warmup: warmup, ...JSON.parse(child.stdout.trim().split("\n").pop()) });
}
for (const [, B] of builds) rmSync(B.bundle, { force: true });
const coldSummary = (runs) => {
  const sessions = runs.flatMap((r) => Object.values(r.kinds));
  const medians = sessions.map((s) => s.cpu_median_ms);
  return {
    processes: runs.length, sessions: sessions.length, edits: sessions.length * WARMUP,
    edits_cpu_over_10ms: sessions.reduce((a, s) => a + s.cpu_edits_over_10ms, 0),
    ...(sessions[0]?.main_cpu_edits_over_10ms !== undefined ? {
      edits_main_thread_cpu_over_10ms: sessions.reduce((a, s) => a + s.main_cpu_edits_over_10ms, 0),
      sessions_main_thread_cpu_max_over_10ms: sessions.filter((s) => s.main_cpu_p95_ms > 10).length,
    } : {}),
    sessions_cpu_max_over_10ms: sessions.filter((s) => s.cpu_p95_ms > 10).length,
    // Over every edit of every cold process: the wall time (what the user waits for, on a machine
    // with a core free: the load average is beside it), the process's CPU and the main thread's.
    ...(sessions[0]?.samples ? (() => {
      const all = (k) => sessions.flatMap((s) => s.samples[k]);
      return {
        edits_wall_over_10ms: sessions.reduce((a, s) => a + s.wall_edits_over_10ms, 0),
        edits_p95_ms: { wall: pct(all("wall"), 95), cpu: pct(all("cpu"), 95), ...(all("main").length ? { main_thread_cpu: pct(all("main"), 95) } : {}) },
        edits_p99_ms: { wall: pct(all("wall"), 99), cpu: pct(all("cpu"), 99), ...(all("main").length ? { main_thread_cpu: pct(all("main"), 99) } : {}) },
      };
    })() : {}),
    cpu_ms_per_process: Number((sessions.reduce((a, s) => a + s.cpu_total_ms, 0) / Math.max(1, runs.length)).toFixed(1)),
    cpu_p50_ms_median: medians.length ? Number(pct(medians, 50).toFixed(2)) : undefined,
    ...(runs[0]?.server_warmup ? {
      server_warmup_cpu_ms_median: pct(runs.map((r) => r.server_warmup.cpu_ms), 50), server_warmup_wall_ms_median: pct(runs.map((r) => r.server_warmup.wall_ms), 50),
      rss_mb_after_warmup_median: pct(runs.map((r) => r.server_warmup.rss_mb), 50),
    } : {}),
    rss_mb_end_median: runs.length ? pct(runs.map((r) => r.rss_mb_end), 50) : undefined,
  };
};
const coldOf = (B, tag) => ({
  node_flags: B.LSP_NODE_FLAGS ?? [],
  without_server_warmup: coldSummary(coldRuns.filter((r) => r.build === tag && !r.server_warmup)),
  ...(B.warmUp ? { after_server_warmup: coldSummary(coldRuns.filter((r) => r.build === tag && r.server_warmup)) } : {}),
});
const cold = COLD_RUNS > 0 ? {
  examples: COLD, runs: COLD_RUNS, edits_per_kind: WARMUP,
  ...coldOf(THIS, "this"),
  ...(BASE ? { baseline: coldOf(BASE, "baseline") } : {}),
} : undefined;

const result = {
  date: new Date().toISOString(), node: process.version, node_flags: process.execArgv, cpus: cpus().length, edits,
  loadavg_at_start: loadStart, loadavg_at_end: loadavg().map((x) => Number(x.toFixed(2))),
  warmup_edits: WARMUP,
  ...Object.fromEntries(KINDS.map((k) => [`examples_${k}`, summary(byKind[k])])),
  // The warm-up pass's "p95" of 20 edits is their maximum (pct's index 19 of 20); the timed pass's
  // first 20 edits of each session, in the same process once every example has been seen, give the
  // same statistic without the JIT's first compilations (timed_first_edits_max_over_10ms).
  warmup: Object.fromEntries(KINDS.map((k) => [k, {
    ...(({ examples, cpu_p50_ms_median, cpu_p95_ms_max, cpu_p95_ms_median, examples_cpu_p95_over_10ms }) => ({ examples, cpu_p50_ms_median, cpu_p95_ms_max, cpu_p95_ms_median, examples_cpu_p95_over_10ms }))(summary(warm[k])),
    timed_first_edits_max_over_10ms: byKind[k].filter((e) => e[`cpu_max_first_${Math.min(edits, WARMUP || 20)}_ms`] > 10).length,
  }])),
  cold_processes: cold,
  project_1000_modules: scale,
  per_example: Object.fromEntries(KINDS.map((k) => [k, byKind[k]])),
  targets: "p95 ≤ 10 ms on the examples; ≤ 50 ms in the 1,000-module project",
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(resolve(ROOT, process.env.BENCH_OUT ?? "bench/results/lsp-incremental.json"), JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify({ ...result, per_example: undefined }, null, 2));
