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
// machine the wall time includes waiting for a core; the load average is recorded with them.
// Usage: node bench/lsp-incremental.bench.mjs [edits]   → bench/results/lsp-incremental.json
import { build } from "esbuild";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = join(import.meta.dirname, "..");
const edits = Number(process.argv[2] ?? 40);
const loadStart = loadavg().map((x) => Number(x.toFixed(2)));
const out = join(ROOT, "dist", `lsp-bench-${process.pid}.mjs`);
await build({
  stdin: { contents: 'export { Workspace } from "./lsp/workspace.ts";', resolveDir: ROOT, loader: "ts" },
  outfile: out, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning",
  external: ["ts-morph", "esbuild"],
  define: { "process.env.TCOD_SKIP_GRAMMAR_VALIDATION": '"1"' },
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const { Workspace } = await import(pathToFileURL(out).href);
rmSync(out, { force: true });

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

const EDITS = {
  append: (base, i) => `${base}\nlet bench_edit_${i % 3} = ${i + 1} steps\n`,
  inside: (base, i) => {
    const out = base.replace(/(\ncurriculum [^\n]*\{)/, `$1 /* bench edit ${i} */`);
    if (out === base) throw new Error("no curriculum to edit");
    return out;
  },
};

/** Open `path`, analyse it once (the cold start of the session), then time `edits` edits of `edited`. */
function session(path, edited = path, kind = "append") {
  const ws = new Workspace();
  const base = readFileSync(edited, "utf8");
  ws.setOpen(path, readFileSync(path, "utf8"));
  if (edited !== path) ws.setOpen(edited, base);
  const first = ws.analyze(path);
  const times = [];
  const cpu = [];
  for (let i = 0; i < edits; i++) {
    // A keystroke-sized edit that keeps the file valid: a new top-level value, changed each time.
    ws.setOpen(edited, EDITS[kind](base, i));
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const a = ws.analyze(path);
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    if (a.result.diagnostics.length !== first.result.diagnostics.length) throw new Error(`${path}: the edit changed the diagnostics`);
  }
  return {
    first_ms: Number(first.ms.toFixed(1)), median_ms: Number(pct(times, 50).toFixed(2)), p95_ms: Number(pct(times, 95).toFixed(2)),
    cpu_median_ms: Number(pct(cpu, 50).toFixed(2)), cpu_p95_ms: Number(pct(cpu, 95).toFixed(2)), diagnostics: first.result.diagnostics.length,
  };
}

const examples = [];
const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith(".tcod") ? [join(d, n)] : []));
const all = [];
const inside = [];
for (const f of walk(join(ROOT, "examples"))) {
  examples.push({ file: f.slice(ROOT.length + 1), ...session(f) });
  inside.push({ file: f.slice(ROOT.length + 1), ...session(f, f, "inside") });
}
for (const e of examples) all.push(e.p95_ms);
const allCpu = examples.map((e) => e.cpu_p95_ms);
const summary = (xs) => ({
  p95_ms_max: Number(Math.max(...xs.map((e) => e.p95_ms)).toFixed(2)), p95_ms_median: Number(pct(xs.map((e) => e.p95_ms), 50).toFixed(2)),
  cpu_p95_ms_max: Number(Math.max(...xs.map((e) => e.cpu_p95_ms)).toFixed(2)), cpu_p95_ms_median: Number(pct(xs.map((e) => e.cpu_p95_ms), 50).toFixed(2)),
  worst_cpu: xs.reduce((a, b) => (b.cpu_p95_ms > a.cpu_p95_ms ? b : a)).file,
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
const scaleEntry = session(join(dir, "main.tcod"));
const scaleLeaf = session(join(dir, "main.tcod"), join(dir, "m700.tcod"));
const scaleInside = session(join(dir, "main.tcod"), join(dir, "main.tcod"), "inside");
rmSync(dir, { recursive: true, force: true });

const result = {
  date: new Date().toISOString(), node: process.version, cpus: cpus().length, edits,
  loadavg_at_start: loadStart, loadavg_at_end: loadavg().map((x) => Number(x.toFixed(2))),
  examples_p95_ms_max: Number(Math.max(...all).toFixed(2)),
  examples_p95_ms_median: Number(pct(all, 50).toFixed(2)),
  examples_cpu_p95_ms_max: Number(Math.max(...allCpu).toFixed(2)),
  examples_cpu_p95_ms_median: Number(pct(allCpu, 50).toFixed(2)),
  examples_append: summary(examples),
  examples_inside: summary(inside),
  examples,
  examples_inside_curriculum: inside,
  project_1000_modules: { edit_entry: scaleEntry, edit_module_700: scaleLeaf, edit_entry_inside_curriculum: scaleInside },
  targets: "p95 ≤ 10 ms on the examples; ≤ 50 ms in the 1,000-module project",
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results/lsp-incremental.json"), JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify({ ...result, examples: undefined, examples_inside_curriculum: undefined }, null, 2));
