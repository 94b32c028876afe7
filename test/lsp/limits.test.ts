/**
 * The language server reads sources as `tcod check` does: a buffer or an imported file larger than
 * MAX_SOURCE_BYTES (UTF-8 bytes, not characters) is not parsed; its analysis is the diagnostic that
 * `tcod check` gives the same file on disk, not an out-of-memory. A long operator chain, which
 * compiles, is answered by every feature without overflowing the stack.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { complete, definition, documentSymbols, hover, references, rename, semanticTokens, StdIndex } from "../../lsp/features.js";
import { oversized, Workspace } from "../../lsp/workspace.js";
import { MAX_SOURCE_BYTES } from "../../plan/read-file.js";

const shown = (r: CompileResult) => r.diagnostics.map((d) => `${d.code} ${render(d, (f) => r.sources.get(f))}`);

describe("source size limit in the language server", () => {
  it("counts UTF-8 bytes", () => {
    expect(oversized("x".repeat(1000))).toBeUndefined();
    expect(oversized("x".repeat(MAX_SOURCE_BYTES))).toBeUndefined();
    expect(oversized("x".repeat(MAX_SOURCE_BYTES + 1))).toBe(MAX_SOURCE_BYTES + 1);
    // Fewer characters than the limit, more bytes: 'é' is 2 bytes.
    expect(oversized("é".repeat(MAX_SOURCE_BYTES / 2 + 1))).toBe(MAX_SOURCE_BYTES + 2);
    expect(oversized("é".repeat(MAX_SOURCE_BYTES / 2))).toBeUndefined();
  });

  it("reports a buffer, and an imported file, too large to check as tcod check reports the file", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-limit-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const big = `// ${"x".repeat(MAX_SOURCE_BYTES)}\n`;
    const path = join(dir, "big.tcod");
    writeFileSync(path, big);
    const ws = new Workspace();
    ws.setOpen(path, big);
    const a = ws.analyze(path);
    const expected = shown(compileFile(path));
    expect(expected.length).toBe(1);
    expect(shown(a.result)).toEqual(expected);

    // An import of that file from a small one: reported where it is imported, as by tcod check.
    const main = join(dir, "main.tcod");
    writeFileSync(main, 'import { x } from "./big"\n');
    ws.close(path);
    ws.setOpen(main, 'import { x } from "./big"\n');
    expect(shown(ws.analyze(main).result)).toEqual(shown(compileFile(main)));
  });
});

describe("an import of something that is not a file, in the language server", () => {
  it("is reported as tcod check reports it (TC1109: it is a folder), not as a module not found", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-folder-import-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    mkdirSync(join(dir, "lib.tcod"));
    const main = join(dir, "main.tcod");
    const text = 'import { x } from "./lib.tcod"\nlet y = x\n';
    writeFileSync(main, text);
    const ws = new Workspace();
    ws.setOpen(main, text);
    const expected = shown(compileFile(main));
    expect(expected[0]).toMatch(/^TC1109 .*it is a folder, not a file/s);
    expect(shown(ws.analyze(main).result)).toEqual(expected);
  });
});

describe("a long chain of operators in the language server", () => {
  // `1+1+…+1` compiles (no diagnostic) and is a tree as deep as it is long: the features that walk
  // the tree (occurrences, semantic tokens) must not overflow the stack (was: JSON-RPC -32603
  // "Maximum call stack size exceeded" for semantic tokens, hover, definition, references, rename,
  // completion).
  it("answers semantic tokens, hover, definition, references, rename, completion and symbols", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-chain-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "m.tcod");
    const n = 200_000;
    const text = `let a = 1 step\nlet x = ${"a+".repeat(n)}2 steps\n`;
    const ws = new Workspace();
    ws.setOpen(path, text);
    const a = ws.analyze(path);
    expect(a.result.diagnostics).toEqual([]);
    const tokens = semanticTokens(a, () => false);
    // Both declarations, every use of `a`, and the unit of each number.
    expect(tokens.filter((t) => t.type === "variable").length).toBe(n + 2);
    expect(tokens.filter((t) => t.type === "enumMember").map((t) => text.slice(t.span.start.offset, t.span.end.offset))).toEqual(["step", "steps"]);
    const use = text.indexOf("a+");
    expect(hover(a, use)?.markdown).toContain("let a");
    expect(definition(a, use)?.start.offset).toBe(4);
    expect(references(ws, a, 4).length).toBe(n + 1);
    const r = rename(ws, a, 4, "b", () => false);
    expect("edits" in r && r.edits.length).toBe(n + 1);
    expect(complete(a, new StdIndex(ws), text, text.length - 1).map((e) => e.label)).toContain("a");
    expect(documentSymbols(a.program!.modules.get(path)!.ast!.decls).map((s) => s.name)).toEqual(["a", "x"]);
  }, 60_000);

  it("finds the unit of a number with a comment before it", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-unit-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "m.tcod");
    const text = "let x = 2 /* a */ steps\n";
    const ws = new Workspace();
    ws.setOpen(path, text);
    const units = semanticTokens(ws.analyze(path), () => false).filter((t) => t.type === "enumMember");
    expect(units.map((t) => text.slice(t.span.start.offset, t.span.end.offset))).toEqual(["steps"]);
  });
});
