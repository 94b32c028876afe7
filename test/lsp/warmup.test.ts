/**
 * The server's warm-up (lsp/warmup.ts): its curriculum checks clean and its keystrokes are the kinds
 * it means to warm (a broken name is reported with its did-you-mean); and running it changes nothing
 * a user's workspace reports afterwards (every example and fixture, as `tcod check` reports it).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { warmUp, warmUpSource, WARMUP_STEPS } from "../../lsp/warmup.js";
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

  it("runs its steps and changes nothing the user's workspace reports", () => {
    let steps = 0;
    for (const _ of warmUp()) steps++;
    expect(steps).toBe(WARMUP_STEPS + 1);
    const ws = new Workspace();
    for (const path of [...walk(join(ROOT, "examples")), ...walk(join(ROOT, "test/fixtures"))]) {
      ws.setOpen(path, readFileSync(path, "utf8"));
      expect(shown(ws.analyze(path).result), path).toEqual(shown(compileFile(path)));
    }
  });
});
