/**
 * The language server's incremental re-check (lsp/workspace.ts: a cached view of the disk, parses
 * reused by text, modules of earlier compilations adopted, memoized calls) reports exactly what a
 * fresh `tcod check` reports: on every example and fixture, analysed cold, then again after edits in
 * one long-lived workspace (so stdlib and shared modules come from earlier compilations), and across
 * an edit of an imported module that breaks it and then repairs it.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { Workspace } from "../../lsp/workspace.js";

const ROOT = join(import.meta.dirname, "../..");
const walk = (d: string): string[] => readdirSync(d).sort().flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? (n === "node_modules" ? [] : walk(p)) : n.endsWith(".tcod") ? [p] : [];
});
const shown = (r: CompileResult, text: (f: string) => string | undefined) =>
  r.diagnostics.map((d) => `${render(d, text)}\n  related: ${d.related.map((x) => `${x.span.file}:${x.span.start.offset}-${x.span.end.offset} ${x.message}`).join("; ")}`);
/** `tcod check FILE` (checkFiles of one file is compileFile with the defaults). */
const check = (path: string) => { const r = compileFile(path); return shown(r, (f) => r.sources.get(f)); };
const viaLsp = (ws: Workspace, path: string) => { const r = ws.analyze(path).result; return shown(r, (f) => r.sources.get(f)); };

describe("the language server's re-check", () => {
  const files = [...walk(join(ROOT, "examples")), ...walk(join(ROOT, "test/fixtures"))];

  it("reports what tcod check reports, cold and after edits, in one long-lived workspace", () => {
    const ws = new Workspace();
    let compared = 0;
    for (const path of files) {
      const text = readFileSync(path, "utf8");
      const expected = check(path);
      // A U+FFFD (bytes that are not UTF-8, or the character) reads otherwise in an editor's buffer,
      // which cannot tell the two apart (test/lsp/source-bytes.test.ts): such a file is compared as
      // the language server reads it from disk, as tcod check does.
      if (text.includes("\uFFFD")) {
        expect(viaLsp(ws, path), `${path} from disk`).toEqual(expected);
        compared++;
        continue;
      }
      ws.setOpen(path, text);
      expect(viaLsp(ws, path), path).toEqual(expected);
      // An edit (a new value at the end), then back: the second analysis adopts what the first kept.
      ws.setOpen(path, `${text}\nlet lsp_probe = 3 steps\n`);
      ws.analyze(path);
      ws.setOpen(path, text);
      expect(viaLsp(ws, path), `${path} after an edit`).toEqual(expected);
      ws.close(path);
      compared++;
    }
    expect(compared).toBeGreaterThan(80);
  });

  it("follows an edit of an imported module through the import graph, and back", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-inc-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    writeFileSync(join(dir, "leaf.tcod"), "/// A horizon.\nexport fn h(x: turns) : turns = min(x, 30 turns)\nexport let k = 6 steps\n");
    writeFileSync(join(dir, "mid.tcod"), 'import { h, k } from "./leaf"\nexport fn g(x: turns) : turns = h(x) + 0 turns\nexport let every = k\n');
    writeFileSync(join(dir, "main.tcod"), [
      'import { g, every } from "./mid"', 'import { f2b } from "std/tcod"', 'import { texthouse } from "std/envs"',
      'model m { path: "x" }',
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 60  horizon: min(g(f2b(every: every, max: 30 turns)), 30 turns)  max_turns: 30 turns }", "",
    ].join("\n"));
    cpSync(join(dir, "leaf.tcod"), join(dir, "leaf.orig"));
    const main = join(dir, "main.tcod");
    const leaf = join(dir, "leaf.tcod");
    const ws = new Workspace();
    const original = readFileSync(leaf, "utf8");
    const variants = [
      original,
      original.replace("min(x, 30 turns)", "min(x, 30 steps)"), // a unit error in the leaf: reported in leaf, at its use in main
      original.replace("export let k = 6 steps", "export let k = 0 steps"), // a value that breaks the curriculum's range
      original.replace("export fn h", "fn h"), // no longer exported: mid's import fails
      original,
    ];
    ws.setOpen(main, readFileSync(main, "utf8"));
    for (const v of variants) {
      // tcod check reads the disk: write the variant, and give the workspace the same text as a buffer.
      writeFileSync(leaf, v);
      ws.setOpen(leaf, v);
      expect(viaLsp(ws, main), v).toEqual(check(main));
    }
    // Edits of the disk alone are seen after revalidation (below); first, values kept from an earlier
    // compilation count against the inlining budget once per compilation, as their evaluation does:
    // a let inlining 2^15 − 1 calls, used twice, fits the budget of 50,000 (2^16 − 1 does not).
    const lib = join(dir, "lib.tcod");
    for (const k of [14, 15, 14]) {
      const fns = ["fn f0(x: turns) : turns = x", ...Array.from({ length: k }, (_, i) => `fn f${i + 1}(x: turns) : turns = f${i}(x) + f${i}(x) - x`)];
      writeFileSync(lib, `${fns.join("\n")}\nexport let big = f${k}(1 turn)\n`);
      const heavy = join(dir, "heavy.tcod");
      writeFileSync(heavy, 'import { big } from "./lib"\nimport { texthouse } from "std/envs"\nmodel m { path: "x" }\ncurriculum c { teacher: m  student: m  env: texthouse()  steps: 10  horizon: min(big, 30 turns)  max_turns: max(big, 30 turns) }\n');
      ws.filesChanged([{ path: lib, kind: "changed" }]);
      ws.setOpen(heavy, readFileSync(heavy, "utf8"));
      const expected = check(heavy);
      expect(viaLsp(ws, heavy), `k = ${k}`).toEqual(expected);
      ws.setOpen(heavy, `${readFileSync(heavy, "utf8")}\nlet again = big\n`);
      ws.analyze(heavy);
      ws.setOpen(heavy, readFileSync(heavy, "utf8"));
      expect(viaLsp(ws, heavy), `k = ${k}, after an edit`).toEqual(expected);
      ws.close(heavy);
    }
    // Edits of the disk alone are seen after revalidation.
    ws.close(leaf);
    writeFileSync(leaf, variants[1]!);
    ws.revalidate();
    expect(viaLsp(ws, main)).toEqual(check(main));
  });
});
