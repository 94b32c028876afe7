/**
 * The language server's compilations share work between sweep points and across edits: the imports
 * the first load resolved, and memoized calls (a call's value stands in for evaluating it again while
 * the module values it read are the same values, charged against the same limits). Whatever is
 * shared, an analysis after an edit must equal `tcod check` of the same text (diagnostics with their
 * codes, spans and messages, from every sweep point; plans), and hover and inlay hints must equal those
 * of a fresh analysis (no stale span or origin).
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { parse } from "../../grammar/index.js";
import { readSourceFile } from "../../plan/read-file.js";
import { hover, inlayHints } from "../../lsp/features.js";
import { Workspace, type Analysis } from "../../lsp/workspace.js";
import { valueEdits } from "./value-edits.js";

const ROOT = join(import.meta.dirname, "../..");

/**
 * A project whose lib.tcod exports f0 … f14 over `unit` (f(k+1) calls fk twice: f14 inlines 32,767
 * calls) and `more` lines; returns the path of its main.tcod, not yet written.
 */
function budgetProject(unit: "turns" | "steps", more: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-sweep-"));
  writeFileSync(join(dir, "package.json"), "{}\n");
  const fns = [`fn f0(x: ${unit}) : ${unit} = x`, ...Array.from({ length: 14 }, (_, i) => `fn f${i + 1}(x: ${unit}) : ${unit} = f${i}(x) + f${i}(x) - x`)];
  writeFileSync(join(dir, "lib.tcod"), [...fns.map((f) => `export ${f}`), ...more, ""].join("\n"));
  return join(dir, "main.tcod");
}
const walk = (d: string): string[] => readdirSync(d).sort().flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? (n === "node_modules" ? [] : walk(p)) : n.endsWith(".tcod") ? [p] : [];
});

/** A value as data: maps as entries, without scopes and declarations (what the evaluator read, not what it made). */
const valueJson = (v: unknown) => JSON.stringify(v, (k, x: unknown) => (k === "scope" || k === "decl" || k === "source" ? undefined : x instanceof Map ? [...x] : x));
/** Diagnostics as shown (related spans too), plans as written, and each plan's evaluated fields (spans, origins). */
const outcome = (r: CompileResult) => ({
  diagnostics: r.diagnostics.map((d) => `${render(d, (f) => r.sources.get(f))}\n  related: ${d.related.map((x) => `${x.span.file}:${x.span.start.offset}-${x.span.end.offset} ${x.message}`).join("; ")}`),
  plans: r.plans.map((p) => JSON.stringify(p.plan)),
  fields: r.plans.map((p) => [...p.curriculum.fields].map(([k, f]) => `${k}: ${valueJson(f.value)}`)),
});
/**
 * `tcod check` of `path` with `text` in place of the file, each sweep point evaluated on its own (the
 * reference: `tcod check` itself shares what points evaluate alike, `shared` below).
 */
const check = (path: string, text: string) =>
  outcome(compileFile(path, { host: { read: (p) => (p === path ? { text } : readSourceFile(p)), parse }, sharePoints: false }));
/** `tcod check` as it runs: sweep points share the fields and the entry's values they evaluate alike. */
const shared = (path: string, text: string) =>
  outcome(compileFile(path, { host: { read: (p) => (p === path ? { text } : readSourceFile(p)), parse } }));

/** Each text in turn, edited into `path` in `ws`: the editor's outcome, and check's, equal the reference. */
function expectEditsAsCheck(ws: Workspace, path: string, texts: string[]): void {
  for (const v of texts) {
    ws.setOpen(path, v);
    const want = check(path, v);
    expect(outcome(ws.analyze(path).result)).toEqual(want);
    expect(shared(path, v)).toEqual(want);
  }
}

/** Hover at every field name and value start of every curriculum and at every let, and the inlay hints. */
function editorView(a: Analysis): unknown {
  const at: number[] = [];
  for (const d of a.program?.modules.get(a.path)?.ast?.decls ?? []) {
    if (d.kind === "curriculum") for (const f of d.fields) at.push(f.nameSpan.start.offset, f.value.span.start.offset);
    if (d.kind === "let") at.push(d.nameSpan.start.offset, d.value.span.start.offset);
  }
  return { hovers: at.map((o) => hover(a, o)), hints: inlayHints(a) };
}

/** Edits of a file with sweeps: inside a curriculum, of a swept value, above everything, values typed, and back. */
function edits(text: string): string[] {
  const out = [text, text.replace(/(\ncurriculum [^\n]*\{)/, "$1 /* an edit inside */")];
  const value = /\nsweep[^]*?\[\s*([^,\]\s]+)/.exec(text);
  if (value) out.push(text.replace(value[0], value[0].slice(0, -value[1]!.length) + `(${value[1]})`));
  out.push(`// above\n${text}`, text.replace(/(\ncurriculum [^\n]*\{)/, "$1 /* an edit inside */\n"), text);
  // Values typed: numbers changed (patched into the parse, calls memoized under other steps reused), a name broken and repaired.
  out.push(...valueEdits(text), text);
  return out;
}

describe("sweep points sharing work in the language server", () => {
  it("report what tcod check reports, with the hovers and hints of a fresh analysis, after edits of every file with sweeps", () => {
    const files = [...walk(join(ROOT, "examples")), ...walk(join(ROOT, "test/fixtures"))].filter((p) => /^sweep /m.test(readFileSync(p, "utf8")));
    expect(files.length).toBeGreaterThanOrEqual(5);
    const ws = new Workspace();
    for (const path of files) {
      for (const [i, v] of edits(readFileSync(path, "utf8")).entries()) {
        ws.setOpen(path, v);
        const a = ws.analyze(path);
        const want = check(path, v);
        expect(outcome(a.result), `${path}, edit ${i}`).toEqual(want);
        expect(shared(path, v), `${path}, edit ${i}: tcod check`).toEqual(want);
        const cold = new Workspace();
        cold.setOpen(path, v);
        expect(editorView(a), `${path}, edit ${i}: hover and hints`).toEqual(editorView(cold.analyze(path)));
      }
      ws.close(path);
    }
  });

  it("charge a call whose value is reused, and the module values it reads, against each point's budget", () => {
    // `big` (a module value of lib, 32,767 inlined calls) is read inside `uses_big`. Point h=f13 fits
    // the budget of 50,000 (32,767 + 16,383 + a few); point h=f14 does not, as tcod check finds. After
    // an edit, point h=f14 reuses `uses_big(2 turns)` of point h=f13: `big`, kept from the first load,
    // is accounted for there all the same.
    const path = budgetProject("turns", ["let big = f14(1 turn)", "export fn uses_big(x: turns) : turns = x + big - big"]);
    const original = [
      'import { texthouse } from "std/envs"',
      'import { f13, f14, uses_big } from "./lib"',
      'model m { path: "x" }',
      "let h = f13",
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 10  horizon: min(uses_big(2 turns), 30 turns)  max_turns: h(3 turns) }",
      "sweep s product { h: [f13, f14] }",
      "",
    ].join("\n");
    const fits = original.replace("h: [f13, f14]", "h: [f13, f13]");
    expect(check(path, original).diagnostics.join("\n")).toContain("TC2019");
    expect(check(path, fits).diagnostics.join("\n")).not.toContain("TC2019");
    const ws = new Workspace();
    expectEditsAsCheck(ws, path, [original, `${original}let unrelated = 1 steps\n`, original.replace("steps: 10", "steps: 10 /* inside */"), fits, original, fits]);
  });

  it("evaluate a reused call again when a module value it read is not evaluated yet in this point", () => {
    // `half` reads total_steps, so it is not kept from the first load: each point evaluates it on first
    // use (32,767 inlined calls). Point 1 reads it through `pick` before `every_half(1)`, which it
    // memoizes; point 2 first reads it inside `every_half(1)`: the memoized value must not stand in
    // for that evaluation, or point 2 (16,383 + 32,767 more with h=f14) would fit the budget of 50,000
    // where tcod check finds it does not.
    const path = budgetProject("steps", ["export let half = total_steps / 2 + f14(0 steps)", "export fn every_half(x: number) : steps = half * x"]);
    const original = [
      'import { texthouse } from "std/envs"',
      'import { f13, f14, half, every_half } from "./lib"',
      'model m { path: "x" }',
      "let pick = half",
      "let h = f13",
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 40  staleness: pick * 0  checkpoint_every: every_half(1)  seed: h(3 steps) / 1 steps }",
      "sweep s zip { pick: [half, 5 steps]  h: [f13, f14] }",
      "",
    ].join("\n");
    expect(check(path, original).diagnostics.join("\n")).toContain("TC2019");
    expect(check(path, original.replace("h: [f13, f14]", "h: [f13, f13]")).diagnostics.join("\n")).not.toContain("TC2019");
    const ws = new Workspace();
    expectEditsAsCheck(ws, path, [original, `${original}let unrelated = 1 steps\n`, original.replace("steps: 40", "steps: 40 /* inside */")]);
  });

  it("share the entry's values and the fields that read no swept name, charged to each point as evaluating them would be", () => {
    // `big` (an entry let, 32,767 inlined calls) is evaluated by the first load and shared by the
    // points of c's swept max_turns, as is `horizon`, which reads it. Points f13 fit the budget of
    // 50,000 (32,767 + 16,383); point f14 does not: with `max_turns` after `horizon`, the shared field
    // is accounted for and f14 goes over; before it, accounting for the shared field (or for `big`
    // inside it) would go over, so they are evaluated, and the error is where check finds it. Then
    // d, not swept, is evaluated by the first load's evaluator: it must see the first load's `big`
    // (1 turn: its horizon is out of range, reported), not what point f14 made of it.
    const path = budgetProject("turns", []);
    const head = [
      'import { texthouse } from "std/envs"',
      'import { f13, f14 } from "./lib"',
      'model m { path: "x" }',
      "let big = f14(1 turn)",
    ];
    const after = [...head,
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 10  horizon: min(big, 30 turns)  max_turns: 3 turns }",
      "curriculum d { teacher: m  student: m  env: texthouse()  steps: 10  horizon: big - 2 turns  max_turns: 30 turns }",
      "sweep s product { c.max_turns: [f13(3 turns), f14(3 turns), f13(3 turns)] }",
      "",
    ].join("\n");
    const before = after.replace("horizon: min(big, 30 turns)  max_turns: 3 turns", "max_turns: 3 turns  horizon: min(big, 30 turns)");
    const fits = after.replace("f14(3 turns)", "f13(3 turns)");
    const codes = (v: string) => check(path, v).diagnostics.map((x) => /TC\d+/.exec(x)![0]).sort();
    expect(codes(after)).toEqual(["TC2019", "TC4001"]);
    expect(codes(before)).toEqual(["TC2019", "TC4001"]);
    expect(codes(fits)).toEqual(["TC4001"]);
    const ws = new Workspace();
    expectEditsAsCheck(ws, path, [after, before, fits, after.replace("steps: 10", "steps: 11"), before.replace("steps: 10", "steps: 12"), fits, before]);
  });

  it("lower a point whose fields are another point's values but for the horizon to the plan lowering it whole makes", () => {
    // The points of `h` differ only in the horizon: a schedule, constants (two the same: identical
    // points), an adaptive depth, and values whose checks fail in one point only (0 turns, out of
    // range; an infinite constant, not finite). With `prefix` reading `h` too, every point is lowered
    // whole.
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-sweep-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "main.tcod");
    const program = (values: string, prefix = "b2f(every: 4 steps)") => [
      'import { f2b, b2f } from "std/tcod"',
      'import { texthouse } from "std/envs"',
      'import { adaptive_depth, coverage } from "std/turnopd"',
      'model m { path: "x" }',
      "let h = 5 turns",
      `curriculum c { teacher: m  student: m  env: texthouse()  steps: 30  max_turns: 12 turns  prefix: ${prefix}  horizon: h }`,
      `sweep s product { h: [${values}] }`,
      "",
    ].join("\n");
    const depth = "adaptive_depth(probe_every: 10 steps, probe_episodes: 4 episodes, rule: coverage(keep: 0.9), initial: 2 turns)";
    const clean = program(`f2b(every: 4 steps, max: 10 turns), 5 turns, 7 turns, (5 turns), ${depth}`);
    const failing = program(`f2b(every: 4 steps, max: 10 turns), 5 turns, 0 turns, ${depth}, 1e308 * 10 * 1 turn`);
    const codes = (v: string) => check(path, v).diagnostics.map((x) => /TC\d+/.exec(x)![0]).sort();
    expect(check(path, clean).plans).toHaveLength(5);
    expect(codes(clean)).toHaveLength(1);
    expect(codes(failing)).toEqual(["TC4001", "TC4001"]);
    const ws = new Workspace();
    expectEditsAsCheck(ws, path, [
      clean, clean.replace("steps: 30", "steps: 31"), failing, clean, program(`${depth}, 5 turns, 6 turns`),
      program("5 turns, 6 turns", "min(h, 11 turns) - 1 turn"), clean,
    ]);
  });

  it("charge a kept module value once, not again inside a value that forced it", () => {
    // `b`, declared first, forces `a` (32,767 inlined calls): check charges a once, inside b, and
    // fits the budget of 50,000. Adopted after an edit, b's kept value must not count a's calls as its
    // own (then a, at its own first use, would be charged again: 65,534, a budget error check does not
    // report); nor may a be left unpaid when b stands in for it: with max_turns inlining 32,767 more
    // after both, check finds the budget exceeded, and so must the editor.
    const path = budgetProject("turns", ["export let b = min(a, 30 turns)", "let a = f14(1 turn)"]);
    const fits = [
      'import { texthouse } from "std/envs"',
      'import { b, f14 } from "./lib"',
      'model m { path: "x" }',
      "curriculum c { teacher: m  student: m  env: texthouse()  steps: 10  horizon: min(b, 30 turns)  max_turns: 30 turns }",
      "",
    ].join("\n");
    const over = fits.replace("max_turns: 30 turns", "max_turns: f14(30 turns)");
    // Each sweep point has a loader of its own that forces nothing but what the curriculum reads: b
    // stands in for a there, so it must pay for a too.
    const overSwept = `${over}sweep s product { c.steps: [10, 20] }\n`;
    expect(check(path, fits).diagnostics).toEqual([]);
    expect(check(path, over).diagnostics.join("\n")).toContain("TC2019");
    expect(check(path, overSwept).diagnostics.join("\n")).toContain("TC2019");
    const ws = new Workspace();
    expectEditsAsCheck(ws, path, [fits, `${fits}let unrelated = 1 steps\n`, fits, over, fits, over, overSwept, `${overSwept}let unrelated = 1 steps\n`]);
    // Charged once, not twice, where the total still fits: a (16,383) inside b, then 32,767 more.
    const path2 = budgetProject("turns", ["export let b = min(a, 30 turns)", "let a = f13(1 turn)"]);
    const swept = `${over}sweep s product { c.steps: [10, 20] }\n`;
    expect(check(path2, over).diagnostics).toEqual([]);
    expectEditsAsCheck(ws, path2, [over, `${over}let unrelated = 1 steps\n`, swept, `${swept}let unrelated = 1 steps\n`]);
  });
});
