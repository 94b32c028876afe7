/**
 * A call memoized on a function (values.ts `Closure.memo`) is found again after an edit that moves it:
 * its key is the arguments as the function's body sees them, not where they were written. Keyed with
 * the arguments' spans, a line typed above the call missed the entry and added another one, alike but
 * for its positions (up to 1,024 per function, kept as long as the stdlib module: in an editor, the
 * session), at every keystroke that moved the call.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { parse } from "../../grammar/index.js";
import { readSourceFile } from "../../plan/read-file.js";
import type { Closure } from "../../compiler/values.js";
import { Workspace, type Analysis } from "../../lsp/workspace.js";

const outcome = (r: CompileResult) => ({
  diagnostics: r.diagnostics.map((d) => render(d, (f) => r.sources.get(f))),
  plans: r.plans.map((p) => JSON.stringify(p.plan)),
});
const fresh = (path: string, text: string) =>
  outcome(compileFile(path, { host: { read: (p) => (p === path ? { text } : readSourceFile(p)), parse } }));

/** The closure of `std/schedule`'s `stepwise` in an analysis (the module is adopted from one compilation to the next). */
function stepwise(a: Analysis): Closure {
  const mod = [...a.program!.modules.values()].find((m) => m.path.endsWith(`${sep}std${sep}schedule.tcod`))!;
  return mod.exports.get("stepwise")!.get() as Closure;
}

describe("a memoized call moved by an edit", () => {
  it("is found again, not memoized a second time, and the analysis equals a fresh compilation", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-memo-positions-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "main.tcod");
    const text = [
      'import { stepwise } from "std/schedule"',
      'import { texthouse } from "std/envs"',
      'model m { path: "x" }',
      "let lr = stepwise(from: 0.1, factor: 0.5, every: 10 steps)",
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 30  optimizer: adam(lr: lr) }",
      "",
    ].join("\n");
    writeFileSync(path, text);
    const ws = new Workspace();
    ws.setOpen(path, text);
    const first = ws.analyze(path);
    expect(first.result.diagnostics).toEqual([]);
    const f = stepwise(first);
    expect(f.memo?.size).toBe(1);
    const [entry] = f.memo!.values();
    // Lines typed above the call (its arguments' spans move), then a column shift on its own line.
    const edits = [`// a comment\n${text}`, `// a comment\n\n${text}`, `// a comment\n\n${text.replace("let lr =", "let lr  =")}`];
    for (const now of edits) {
      ws.setOpen(path, now);
      const a = ws.analyze(path);
      expect(stepwise(a)).toBe(f);
      expect(f.memo!.size).toBe(1);
      expect([...f.memo!.values()][0]).toBe(entry);
      expect(outcome(a.result)).toEqual(fresh(path, now));
    }
  });
});
