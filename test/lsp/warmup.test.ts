/**
 * The server's warm-up (lsp/warmup.ts): its curriculum checks clean and its keystrokes are the kinds
 * it means to warm (a broken name is reported with its did-you-mean); and running it changes nothing
 * a user's workspace reports afterwards (every example and fixture, as `tcod check` reports it).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { parse } from "../../grammar/index.js";
import { DOCUMENT_STEPS, documentEdits, warmUp, warmUpSource, WARMUP_STEPS } from "../../lsp/warmup.js";
import { Workspace } from "../../lsp/workspace.js";

const ROOT = join(import.meta.dirname, "../..");
const walk = (d: string): string[] => readdirSync(d).sort().flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? (n === "node_modules" ? [] : walk(p)) : n.endsWith(".tcod") ? [p] : [];
});
const shown = (r: CompileResult) => r.diagnostics.map((d) => `${render(d, (f) => r.sources.get(f))} ${d.related.map((x) => `${x.span.file}:${x.span.start.offset} ${x.message}`).join("; ")}`);

describe("the language server's warm-up", () => {
  it("checks a clean curriculum, edited as a user types", () => {
    const ws = new Workspace();
    ws.setOpen(warmUpSource.path, warmUpSource.text);
    expect(shown(ws.analyze(warmUpSource.path).result)).toEqual([]);
    for (let i = 0; i < 10; i++) {
      ws.setOpen(warmUpSource.path, warmUpSource.edited(i));
      const codes = ws.analyze(warmUpSource.path).result.diagnostics.map((d) => d.code);
      expect(codes, `keystroke ${i}`).toEqual(i % 10 === 4 ? ["TC2002"] : []);
    }
  });

  it("types into a copy of a document: a value appended, a comment, its numbers, a name broken", () => {
    const path = join(ROOT, "examples/alfworld/paced-f2b.tcod");
    const text = readFileSync(path, "utf8");
    const edit = documentEdits(text, parse(text, path).ast.decls);
    const texts = Array.from({ length: 12 }, (_, i) => edit(i));
    for (let i = 1; i < texts.length; i++) expect(texts[i], `keystroke ${i}`).not.toBe(texts[i - 1]);
    expect(texts[0]).toBe(`${text}\nlet tcod_warmup_0 = 1 steps\n`);
    expect(texts[1]).toMatch(/\ncurriculum [^\n]*\{ \/\* 0 \*\//);
    // The curriculum's numbers typed anew, one after another (then its `let`s' and functions').
    expect(texts[2]).toBe(text.replace("steps: 250", "steps: 251"));
    expect(texts[6]).toBe(text.replace("batch: 16 tasks", "batch: 17 tasks"));
    // The first name it reads, broken and typed again.
    expect(texts[3]).toBe(text.replace("teacher: teacher\n", "teacher: teache\n"));
    expect(texts[7]).toBe(text);
    // A document with no curriculum: values appended only.
    const lib = "let x = 3 steps\n";
    const only = documentEdits(lib, parse(lib, "lib.tcod").ast.decls);
    expect([only(0), only(1)]).toEqual([`${lib}\nlet tcod_warmup_0 = 1 steps\n`, `${lib}\nlet tcod_warmup_1 = 2 steps\n`]);
  });

  it("runs its steps and changes nothing the user's workspace reports", () => {
    // One example of each environment; alfworld/paced-f2b has a sweep.
    const examples = ["alfworld/paced-f2b", "scienceworld/embedded-f2b", "texthouse/gpu/turnopd", "webshop/opd"].map((e) => join(ROOT, `examples/${e}.tcod`));
    let steps = 0;
    for (const _ of warmUp()) steps++;
    expect(steps).toBe(WARMUP_STEPS + 1);
    // The user's documents, typed into in workspaces of the warm-up's own.
    steps = 0;
    for (const _ of warmUp(examples.map((path) => ({ path, text: readFileSync(path, "utf8") })), 0)) steps++;
    expect(steps).toBe(examples.length * (DOCUMENT_STEPS + 1) + 1);
    const ws = new Workspace();
    for (const path of [...walk(join(ROOT, "examples")), ...walk(join(ROOT, "test/fixtures"))]) {
      const text = readFileSync(path, "utf8");
      // A U+FFFD reads otherwise in an editor's buffer (test/lsp/source-bytes.test.ts): such a file from disk.
      if (!text.includes("\uFFFD")) ws.setOpen(path, text);
      expect(shown(ws.analyze(path).result), path).toEqual(shown(compileFile(path)));
    }
  });
});
