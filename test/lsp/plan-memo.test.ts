/**
 * The language server keeps the plan of each curriculum and sweep point (CompileHost.plans) and
 * reuses it while nothing it reads changed. Whatever it reuses, each analysis must equal a fresh
 * compilation of the same texts: the same diagnostics and the same plans (sources, positions and
 * values included), after edits that the plans read (directly, through another declaration, through
 * a function, a sweep, a shadowed builtin, positions that move, values typed: numbers changed, a
 * name broken and repaired) and edits that they do not.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { parse } from "../../grammar/index.js";
import { readSourceFile } from "../../plan/read-file.js";
import { Workspace } from "../../lsp/workspace.js";
import { valueEdits } from "./value-edits.js";

const ROOT = join(import.meta.dirname, "../..");
const walk = (d: string): string[] => readdirSync(d).sort().flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? (n === "node_modules" ? [] : walk(p)) : n.endsWith(".tcod") ? [p] : [];
});

/** Diagnostics as shown, and plans as written. */
const outcome = (r: CompileResult) => ({
  diagnostics: r.diagnostics.map((d) => render(d, (f) => r.sources.get(f))),
  plans: r.plans.map((p) => JSON.stringify(p.plan)),
});
/** A fresh compilation of `path` with `text` in place of the file (nothing reused). */
const fresh = (path: string, text: string) =>
  outcome(compileFile(path, { host: { read: (p) => (p === path ? { text } : readSourceFile(p)), parse } }));

describe("plans reused across an editor's compilations", () => {
  it("equal a fresh compilation after edits inside and outside what each plan reads", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-memo-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "main.tcod");
    const original = [
      'import { f2b } from "std/tcod"',
      'import { texthouse } from "std/envs"',
      'model m { path: "x" }',
      "let base = 6",
      "let k = base * 1 steps",
      "let other = 3 steps",
      "fn cap(x: turns) : turns = min(x, 20 turns)",
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 30  horizon: cap(f2b(every: k, max: 10 turns)) }",
      "curriculum d { teacher: m  student: m  env: texthouse()  steps: 40  horizon: f2b(every: other, max: 10 turns) }",
      "sweep grid product { k: [4 steps, 8 steps]  c.steps: [30, 60] }",
      "",
    ].join("\n");
    const variants = [
      original,
      original.replace("let base = 6", "let base = 5"), // read by c's points only through k, which the sweep sets
      original.replace("let other = 3 steps", "let other = 4 steps"), // read by d only
      original.replace("min(x, 20 turns)", "min(x, 25 turns)"), // a function c calls
      original + "let unrelated = 2 steps\n", // read by nothing
      "// a line above everything: every position moves\n" + original,
      original.replace("fn cap", "let min = 3\nfn cap"), // hides the builtin cap calls
      original.replace("let other = 3 steps", "let other = 3 steps\nlet f2b = 1"), // a second f2b
      original.replace("k: [4 steps, 8 steps]", "k: [4 steps, 9 steps]"), // a sweep value
      original.replace("steps: 40", "steps: 0"), // an error in d: no plan is written
      original.replace("/// ", "").replace('model m { path: "x" }', '/// The model.\nmodel m { path: "x" }'), // a doc comment
      original,
    ];
    const ws = new Workspace();
    for (const [i, v] of variants.entries()) {
      ws.setOpen(path, v);
      expect(outcome(ws.analyze(path).result), `variant ${i}`).toEqual(fresh(path, v));
    }
  });

  it("equal a fresh compilation as steps are typed, where a schedule leaves its range at a late step", () => {
    // The horizon reaches 0 turns at step 300: range checks over more steps, then fewer, then more
    // (an editor computes only the steps it has not seen for a schedule that does not read total_steps).
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-memo-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "main.tcod");
    const at = (steps: number, horizon = "30 turns - floor(step / 10 steps) * 1 turn") => [
      'import { b2f } from "std/tcod"', 'import { texthouse } from "std/envs"', 'model m { path: "x" }',
      `curriculum c { teacher: m  student: m  env: texthouse()  steps: ${steps}  horizon: ${horizon}  prefix: b2f(every: 5 steps) }`, "",
    ].join("\n");
    const ws = new Workspace();
    for (const v of [at(250), at(251), at(299), at(300), at(350), at(29), at(299), at(2), at(300), at(301, "30 turns - floor(step * 30 / total_steps) * 1 turn"), at(300, "30 turns - floor(step * 30 / total_steps) * 1 turn"), at(301)]) {
      ws.setOpen(path, v);
      expect(outcome(ws.analyze(path).result), v).toEqual(fresh(path, v));
    }
    expect(fresh(path, at(300)).diagnostics.join("\n")).toContain("at step 300");
  });

  it("count a reused evaluation against the inlining budget, as tcod check does", () => {
    // f14 inlines 2^15 − 1 calls: once fits the budget of 50,000, twice does not. The curriculum's
    // plan, reused after an unrelated value that spends the budget first, must still report it.
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-memo-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "heavy.tcod");
    const fns = ["fn f0(x: turns) : turns = x", ...Array.from({ length: 14 }, (_, i) => `fn f${i + 1}(x: turns) : turns = f${i}(x) + f${i}(x) - x`)];
    const original = [
      'import { texthouse } from "std/envs"', 'model m { path: "x" }', ...fns,
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 10  horizon: min(f14(2 turns), 30 turns)  max_turns: 30 turns }", "",
    ].join("\n");
    const ws = new Workspace();
    const spent = `${original}let spend = f14(3 turns)\n`;
    expect(fresh(path, original).diagnostics).toEqual([]);
    expect(fresh(path, spent).diagnostics.join("\n")).toContain("TC2019");
    for (const v of [original, spent, original]) {
      ws.setOpen(path, v);
      expect(outcome(ws.analyze(path).result)).toEqual(fresh(path, v));
    }
  });

  it("equal a fresh compilation on every example and fixture, after edits around and inside the curricula", () => {
    const files = [...walk(join(ROOT, "examples")), ...walk(join(ROOT, "test/fixtures"))];
    const ws = new Workspace();
    let compared = 0;
    for (const path of files) {
      const text = readFileSync(path, "utf8");
      const edits = [
        text,
        `${text}\nlet lsp_probe = 3 steps\n`,
        text.replace(/(\ncurriculum [^\n]*\{)/, "$1 /* an edit inside */"),
        `// above\n${text}`,
        text,
        ...valueEdits(text),
        text,
      ];
      for (const [i, v] of edits.entries()) {
        ws.setOpen(path, v);
        expect(outcome(ws.analyze(path).result), `${path}, edit ${i}`).toEqual(fresh(path, v));
      }
      ws.close(path);
      compared++;
    }
    expect(compared).toBeGreaterThan(80);
  });
});
