/**
 * `tcod check` skips the function-body checks of a stdlib module checked clean before in the process
 * from the same text (compiler/index.ts `stdlibBodies`; the start-up snapshot carries those of its
 * warm-up), counting their inlined calls; where those could have reached the budget it compiles
 * again with every body checked. The result must be the one of checking every body.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { importClosureTexts, type Module } from "../../compiler/modules.js";

const ROOT = join(import.meta.dirname, "../..");
const walk = (d: string): string[] => readdirSync(d).sort().flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? (n === "node_modules" ? [] : walk(p)) : n.endsWith(".tcod") ? [p] : [];
});
const outcome = (r: CompileResult) => ({
  diagnostics: r.diagnostics.map((d) => `${render(d, (f) => r.sources.get(f))}\n  related: ${d.related.map((x) => `${x.span.file}:${x.span.start.offset} ${x.message}`).join("; ")}`),
  plans: r.plans.map((p) => JSON.stringify(p.plan)),
});
const both = (path: string) => [outcome(compileFile(path)), outcome(compileFile(path, { stdlibBodyRecords: false }))];

describe("stdlib function bodies checked once per process", { timeout: 300_000 }, () => {
  it("give every example and fixture the result of checking every body", () => {
    const files = [...walk(join(ROOT, "examples")), ...walk(join(ROOT, "test/fixtures"))];
    expect(files.length).toBeGreaterThan(50);
    for (const f of files) compileFile(f); // the records, where bodies are clean
    for (const f of files) {
      const [skipped, reference] = both(f);
      expect(skipped, f).toEqual(reference);
    }
  });

  it("compile again with every body checked where the skipped calls could have reached the inlining budget", () => {
    // The entry's values inline 49,150 calls and n more (its module is checked first), then the stdlib
    // bodies are checked, then the curriculum is evaluated. Around the n where check first reports the
    // budget exceeded, the skipped bodies' calls decide it: each such n must give check's result.
    const dir = mkdtempSync(join(tmpdir(), "tcod-stdlib-bodies-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const fns = ["fn f0(x: turns) : turns = x", ...Array.from({ length: 14 }, (_, i) => `fn f${i + 1}(x: turns) : turns = f${i}(x) + f${i}(x) - x`)];
    writeFileSync(join(dir, "lib.tcod"), fns.map((f) => `export ${f}`).join("\n") + "\n");
    const source = (n: number) => [
      'import { f0, f13, f14 } from "./lib"',
      'import { texthouse } from "std/envs"',
      'import { f2b } from "std/tcod"',
      'import { paced_f2b, kl_settled } from "std/feedback"',
      'model m { path: "x" }',
      "let a = f14(1 turn)",
      "let b = f13(1 turn)",
      `let c = ${["0 turns", ...Array.from({ length: n }, () => "f0(1 turn)")].join(" + ")}`,
      "curriculum c1 { teacher: m  student: m  env: texthouse()  steps: 10  horizon: f2b(every: 2 steps, max: 30 turns)  max_turns: 30 turns }",
      "",
    ].join("\n");
    const path = join(dir, "main.tcod");
    const over = (n: number) => {
      writeFileSync(path, source(n));
      return compileFile(path, { stdlibBodyRecords: false }).diagnostics.some((x) => x.code === "TC2019");
    };
    // The smallest n over the budget (the reference: every body checked).
    let lo = 0;
    let hi = 1000;
    expect(over(lo)).toBe(false);
    expect(over(hi)).toBe(true);
    while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (over(mid)) hi = mid; else lo = mid; }
    for (let n = hi - 24; n <= hi + 2; n++) {
      writeFileSync(path, source(n));
      compileFile(path);
      const [skipped, reference] = both(path);
      expect(skipped, `n = ${n}`).toEqual(reference);
    }
  });

  it("key a record by the texts of the module and of everything it imports, so an edited import is checked again", () => {
    const mod = (path: string, text: string, deps: Module[] = []) => ({ path, text, deps: [] as { target: Module }[], _deps: deps }) as unknown as Module & { _deps: Module[] };
    const b = mod("/std/loss.tcod", "fn l() = 1");
    const a = mod("/std/tcod.tcod", "import { l } from \"std/loss\"");
    (a.deps as { target: Module }[]).push({ target: b });
    (b.deps as { target: Module }[]).push({ target: a }); // a cycle ends
    const before = importClosureTexts(a, "/std/");
    expect(before).toEqual(["loss.tcod", "fn l() = 1", "tcod.tcod", "import { l } from \"std/loss\""]);
    (b as { text: string }).text = "fn l() = 2";
    expect(importClosureTexts(a, "/std/")).not.toEqual(before);
    expect(importClosureTexts(mod("/elsewhere/x.tcod", "t"), "/std/")).toEqual(["/elsewhere/x.tcod", "t"]);
  });
});
