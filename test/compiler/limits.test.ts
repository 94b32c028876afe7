/**
 * Limits instead of crashes and hangs: inputs that are huge, long or pathological in shape get a
 * result or a coded diagnostic with a position — never a stack overflow, never an unbounded wait.
 * (No timing assertions: a hang shows up as the test timing out.)
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render } from "../../compiler/index.js";
import { parse } from "../../grammar/index.js";

const dir = mkdtempSync(join(tmpdir(), "tcod-limits-"));
writeFileSync(join(dir, "package.json"), "{}");
let n = 0;
function check(text: string) {
  const file = join(dir, `f${n++}.tcod`);
  writeFileSync(file, text);
  const r = compileFile(file);
  for (const x of r.diagnostics) {
    expect(x.code).toMatch(/^TC\d{4}$/);
    expect(x.code).not.toBe("TC9001");
  }
  return { r, codes: r.diagnostics.map((x) => x.code) };
}

const lines = (k: number, f: (i: number) => string) => Array.from({ length: k }, (_, i) => f(i + 1)).join("\n") + "\n";
const base = `import { texthouse } from "std/envs"
import { opd } from "std/loss"
model m { path: "loglinear"  serve: embedded() }
`;
const curriculum = (fields: string) => `${base}curriculum c { teacher: m  student: m  env: texthouse()  steps: 20\n  ${fields}\n}\n`;

// Big inputs on a shared machine: generous per-test time, no timing assertions.
describe("limits", { timeout: 120_000 }, () => {
  it("a 10 MB string literal lexes (no regexp stack overflow)", () => {
    const text = `let s = "${"a".repeat(10_000_000)}"\n`;
    const { ast, errors } = parse(text, "big.tcod");
    expect(errors).toEqual([]);
    expect(ast.decls.length).toBe(1);
    // Unterminated, escapes: still one token each, no overflow.
    expect(parse(`let s = "${"a\\n".repeat(300_000)}\n`, "u.tcod").errors.map((e) => e.code)).toEqual(["TC1002"]);
  });

  it("`let x = 1 + 1 + …` of 3,000 and of 30,000 terms checks, and folds", () => {
    expect(check(`let x = ${Array(3000).fill("1").join(" + ")}\n`).r.ok).toBe(true);
    expect(check(`let x = ${Array(30_000).fill("1").join(" + ")}\nlet y: steps = x\n`).codes).toEqual(["TC2001"]);
  });

  it("1,000 chained functions never called check quickly (each body once)", () => {
    expect(check("fn f0(a: number): number = a\n" + lines(999, (i) => `fn f${i}(a: number): number = f${i - 1}(a)`)).r.ok).toBe(true);
  });

  it("23 functions that each call the previous one twice check without inlining 2^23 calls", () => {
    expect(check("fn f0(a: number): number = a\n" + lines(23, (i) => `fn f${i}(a: number): number = f${i - 1}(a) + f${i - 1}(a)`)).r.ok).toBe(true);
  });

  it("…and when one is used, the inlining budget is a coded error at the use", () => {
    const text = "fn f0(a: number): number = a\n" + lines(23, (i) => `fn f${i}(a: number): number = f${i - 1}(a) + f${i - 1}(a)`) + "let y = f23(step / 1 step)\n";
    const { codes, r } = check(text);
    expect(codes).toEqual(["TC2019"]);
    expect(r.diagnostics[0]!.span.start.line).toBe(25);
  });

  it("TC2019 names the top-level call that ran over the budget, also when that call's own count is the one over", () => {
    // f_k(a) inlines 2^(k+1) - 1 calls. `a` and `b` use most of the budget, `c` adds n single calls,
    // and `z` is the call that runs over: inside its body for small n, at its own call for the
    // largest n whose error is still at z (then nothing named z had run yet).
    const fns = "fn f0(a: number): number = a\n" + lines(14, (i) => `fn f${i}(a: number): number = f${i - 1}(a) + f${i - 1}(a)`);
    const src = (k: number) => fns + "let a = f14(step / 1 step)\nlet b = f13(step / 1 step)\n"
      + `let c = ${["0", ...Array.from({ length: k }, () => "f0(step / 1 step)")].join(" + ")}\nlet z = f2(step / 1 step)\n`;
    const over = (k: number) => check(src(k)).r.diagnostics.find((x) => x.code === "TC2019");
    let lo = 0, hi = 2000; // smallest k over the budget
    while (lo < hi) { const mid = (lo + hi) >> 1; if (over(mid)) hi = mid; else lo = mid + 1; }
    const atZ: number[] = [];
    for (let k = lo; k < lo + 12; k++) {
      const dx = over(k)!;
      if (dx.span.start.line === 19) { atZ.push(k); expect(dx.message).toContain("'f2'"); }
    }
    expect(atZ.length).toBeGreaterThan(1); // z's body and z's own call both ran over
  });

  it("a chain of 1,000 nested calls, used, is a coded error, not a stack overflow", () => {
    const text = "fn f0(a: number): number = a\n" + lines(999, (i) => `fn f${i}(a: number): number = f${i - 1}(a)`) + "let y = f999(step / 1 step)\n";
    expect(check(text).codes).toEqual(["TC2020"]);
  });

  it("20,000 lets each reading the previous one: a value or a coded error, no stack overflow", () => {
    // Declared so that the first one checked needs all the others: x0 reads x1 reads x2 …
    const { codes } = check(lines(19_999, (i) => `let x${i - 1} = x${i} + 1`) + "let x19999 = 1\n");
    expect(codes.every((c) => c === "TC2020")).toBe(true);
  });

  it("a schedule of 3,000 terms: a plan or a coded error, no stack overflow", () => {
    const { codes } = check(curriculum(`temperature: 0.0 * (${Array(3000).fill("step / 20 steps").join(" + ")})`));
    expect(codes).toEqual(["TC2021"]);
  });

  it("NaN and ±Infinity are range errors at check", () => {
    const nan = check(curriculum(`loss: opd(coef: sqrt(-1))`));
    expect(nan.codes).toEqual(["TC4001"]);
    expect(nan.r.diagnostics[0]!.message).toContain("finite");
    expect(nan.r.diagnostics[0]!.span.file.endsWith(".tcod") && nan.r.diagnostics[0]!.span.start.line).toBe(5);
    expect(check(curriculum(`horizon: 1e999 turns`)).codes).toEqual(["TC4001"]);
    expect(check(curriculum(`horizon: 1 turn + exp(1000) * 1 turn`)).codes).toEqual(["TC4001"]);
    expect(check(curriculum(`optimizer: adam(lr: 1e999)`)).codes).toEqual(["TC4001"]);
    expect(check(curriculum(`loss: opd(coef: 1 / (step / 1 step - 5))`)).codes).toEqual(["TC4001"]);
  });

  it("thousands of errors on one very long line print a window of it each, not the whole line", () => {
    // 5,000 unknown imports on one 70 KB line: each error printed the whole line (350 MB of output;
    // 20,000 of them ran out of memory).
    const text = `import { ${Array.from({ length: 5000 }, (_, i) => `n${i}`).join(", ")} } from "std/envs"\nlet ok = 1\n`;
    const { r, codes } = check(text);
    expect(codes.length).toBe(5000);
    const src = (f: string) => r.sources.get(f);
    let total = 0;
    for (const x of r.diagnostics) {
      const out = render(x, src);
      total += out.length;
      const [, excerpt, caret] = out.split("\n");
      expect(excerpt!.length).toBeLessThan(230);
      // The caret stands under the name the error is about.
      const name = text.slice(x.span.start.offset, x.span.end.offset);
      const at = caret!.indexOf("^");
      expect(excerpt!.slice(at, at + name.length)).toBe(name);
    }
    expect(total).toBeLessThan(5000 * 1000);
  });

  it("whole numbers a plan cannot hold exactly (beyond 2^53 − 1) are range errors at check, not invalid plans at compile", () => {
    const steps = (v: string) => `${base}curriculum c { teacher: m  student: m  env: texthouse()  steps: ${v} }\n`;
    for (const text of [steps("1e300"), steps("2e16"), curriculum("seed: 1e20"), curriculum("checkpoint_every: 1e300 steps"), curriculum("staleness: 1e17 steps"), curriculum("batch: 1e300 tasks"), curriculum("max_turns: 1e20 turns")]) {
      const { r, codes } = check(text);
      expect(codes, text).toEqual(["TC4001"]);
      expect(r.diagnostics[0]!.message, text).toMatch(/2\^53 − 1/);
      expect(r.plans).toEqual([]);
    }
    const ok = check(steps(String(Number.MAX_SAFE_INTEGER)));
    expect(ok.codes).toEqual([]);
    expect(ok.r.plans[0]!.plan.clock.steps).toBe(Number.MAX_SAFE_INTEGER);
  });
});
