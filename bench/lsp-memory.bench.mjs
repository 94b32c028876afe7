// The language server's memory on a large file, against `tcod check`'s on the same file.
// The file (~3 MB): the six texthouse examples' declarations repeated with their names renamed
// (`teacher` → `teacher_17`, …), under one set of imports; it checks without diagnostics.
// Measured in child processes run with --expose-gc and the server's V8 flags (lsp/node-flags.ts),
// each loading the sources of ROOT bundled (as `tcod lsp` runs them):
// - `check`: `compileFile(path)` as `tcod check` calls it, its result held;
// - `lsp`: a `Workspace` with the file open, analysed, its semantic tokens, inlay hints and document
//   symbols asked for (what an editor asks after opening it); then EDITS keystrokes typed in the
//   middle of the file, each analysed and its semantic tokens asked for, as the server does;
// the heap retained (heapUsed after a full GC, less the same process's after a small file was checked,
// so the code and stdlib both load count in neither) and the process's peak RSS (for `lsp`, also
// after the file was opened, before the keystrokes: `peak_rss_open_mb`).
// Usage: node bench/lsp-memory.bench.mjs [edits]  (BENCH_ROOT=DIR: measure a checkout at DIR instead)
//   → prints JSON; results in bench/results/lsp-memory.md.
import { build } from "esbuild";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";

const HERE = join(import.meta.dirname, "..");
const ROOT = resolve(process.env.BENCH_ROOT ?? HERE);
const EDITS = Number(process.argv[2] ?? 20);
const TARGET_BYTES = 3 * 1024 * 1024;

/** The large file: every texthouse example's declarations, renamed per copy, until TARGET_BYTES. */
function largeFile() {
  const dir = join(HERE, "examples/texthouse");
  const imports = new Set();
  const bodies = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".tcod")).sort()) {
    const lines = readFileSync(join(dir, f), "utf8").split("\n");
    for (const l of lines) if (l.startsWith("import ")) imports.add(l);
    const body = lines.filter((l) => !l.startsWith("import ")).join("\n");
    const names = [...body.matchAll(/^(?:let|model|curriculum|fn|sweep)\s+(\w+)/gm)].map((m) => m[1]);
    bodies.push({ body, names });
  }
  let out = [...imports].join("\n") + "\n";
  for (let i = 0; out.length < TARGET_BYTES; i++) {
    const { body, names } = bodies[i % bodies.length];
    // A declared name is renamed where it is used as a name, not where it is a field or argument name (`teacher: teacher`).
    out += names.reduce((t, n) => t.replace(new RegExp(`\\b${n}\\b(?!\\s*:)`, "g"), `${n}_${i}`), body) + "\n";
  }
  return out;
}

if (process.env.BENCH_CHILD) {
  const { mode, bundle, file, small } = JSON.parse(process.env.BENCH_CHILD);
  const m = await import(pathToFileURL(bundle).href);
  const heap = () => { for (let i = 0; i < 3; i++) globalThis.gc(); return process.memoryUsage().heapUsed; };
  // The code and the stdlib, loaded and warmed by a small file first.
  const warm = mode === "check" ? m.compileFile(small) : (() => { const w = new m.Workspace(); w.setOpen(small, readFileSync(small, "utf8")); return w.analyze(small); })();
  if (warm.result ? !warm.result.ok : !warm.ok) throw new Error("the small file did not check");
  const base = heap();
  const text = readFileSync(file, "utf8");
  const out = { mode };
  let held;
  if (mode === "check") {
    const t0 = performance.now();
    held = m.compileFile(file);
    out.ms = Math.round(performance.now() - t0);
    out.ok = held.ok;
    out.plans = held.plans.length;
    out.retained_mb = +((heap() - base) / 2 ** 20).toFixed(1);
  } else {
    const ws = new m.Workspace();
    const isLibrary = () => false;
    const ask = (a) => { m.semanticTokens(a, isLibrary); m.inlayHints(a); m.documentSymbols(a.program.modules.get(a.path).ast.decls); };
    const t0 = performance.now();
    ws.setOpen(file, text);
    let a = ws.analyze(file);
    out.ms = Math.round(performance.now() - t0);
    out.ok = a.result.ok;
    out.plans = a.result.plans.length;
    ask(a);
    out.peak_rss_open_mb = Math.round(process.resourceUsage().maxRSS / 1024);
    out.retained_mb = +((heap() - base) / 2 ** 20).toFixed(1);
    // Keystrokes in the middle of the file: a comment typed at the end of a line there.
    let now = text;
    const at = now.indexOf("\n", now.length >> 1);
    for (let k = 0; k < EDITS; k++) {
      now = now.slice(0, at + (k && k + 2)) + (k === 0 ? " //" : "x") + now.slice(at + (k && k + 2));
      ws.setOpen(file, now);
      a = ws.analyze(file);
      ask(a);
    }
    out.ok_after_edits = a.result.ok;
    out.retained_after_edits_mb = +((heap() - base) / 2 ** 20).toFixed(1);
    held = ws;
  }
  out.peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(JSON.stringify(out) + "\n");
  void held;
  process.exit(0);
}

const tmp = mkdtempSync(join(tmpdir(), "tcod-lsp-memory-"));
try {
  writeFileSync(join(tmp, "package.json"), "{}\n");
  const file = join(tmp, "large.tcod");
  writeFileSync(file, largeFile());
  const small = join(tmp, "small.tcod");
  writeFileSync(small, readFileSync(join(HERE, "examples/texthouse/opd.tcod")));
  // Inside ROOT's dist/: the bundle finds the stdlib by walking up from where it is.
  const bundle = join(ROOT, "dist", `lsp-memory-bench-${process.pid}.mjs`);
  await build({
    stdin: { contents: 'export { Workspace } from "./lsp/workspace.ts"; export { compileFile } from "./compiler/index.ts"; export { semanticTokens, inlayHints, documentSymbols } from "./lsp/features.ts"; export { LSP_NODE_FLAGS } from "./lsp/node-flags.ts";', resolveDir: ROOT, loader: "ts" },
    outfile: bundle, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning",
    external: ["ts-morph", "esbuild"],
    define: { "process.env.TCOD_SKIP_GRAMMAR_VALIDATION": '"1"' },
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  const { LSP_NODE_FLAGS } = await import(pathToFileURL(bundle).href);
  const results = { root: ROOT, file_bytes: readFileSync(file).length, edits: EDITS };
  for (const mode of ["check", "lsp"]) {
    const r = spawnSync(process.execPath, ["--expose-gc", ...LSP_NODE_FLAGS, import.meta.filename], {
      env: { ...process.env, BENCH_CHILD: JSON.stringify({ mode, bundle, file, small }) }, encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
    results[mode] = JSON.parse(r.stdout);
  }
  results.lsp_over_check_retained = +(results.lsp.retained_mb / results.check.retained_mb).toFixed(2);
  results.lsp_over_check_peak_rss = +(results.lsp.peak_rss_mb / results.check.peak_rss_mb).toFixed(2);
  console.log(JSON.stringify(results, null, 2));
} finally {
  rmSync(tmp, { recursive: true, force: true });
  rmSync(join(ROOT, "dist", `lsp-memory-bench-${process.pid}.mjs`), { force: true });
}
