/**
 * The inputs of test/grammar/recovery-baseline.test.ts: short broken programs where error recovery
 * decides the result (operator chains with stray brackets, missing operands and repeated comparisons
 * in six contexts; token edits of small well-formed programs; token soup), from a seeded PRNG, and a
 * compact rendering of what `parse` gives for them (every span as `start-end` offsets).
 */
import type { ParseResult } from "../../grammar/index.js";
import { lexTcod } from "../../grammar/lexer.js";
import { rng } from "../helpers/prng.js";

/** Tokens for token soup and insertions (shared with bench/parser-differential.ts). */
export const VOCAB = [
  "import", "{", "}", "from", '"std/tcod"', "let", "fn", "model", "curriculum", "sweep", "product", "zip", "with", "=", ":", ",",
  "(", ")", "[", "]", "x", "steps", "1", "2.5", "turns", "+", "-", "*", "×", "/", "..", "<", ">=", "==", "!=", "if", "then", "else",
  "and", "or", "not", "true", "%", ".", "return", "export", "as", "\n", "//c\n", "/* b */", "/// d\n", '"s', "@", "step", "f(",
];
/** Operator chains with stray brackets, missing operands and repeated comparisons, and six places for them. */
export const OPERANDS = ["a", "1 step", "f(x)", "x.y", "(b", "c)", "[1, 2", "-", "not", "", "{ p: 1 }", "2 turns", "g(a: 1 b: 2)"];
export const OPERATORS = ["+", "-", "*", "/", "..", "<", "<=", "==", "and", "or", "", "(", ")", ",", "]"];
export const CONTEXTS = [
  (e: string) => `let v = ${e}\nlet w = 1\n`,
  (e: string) => `curriculum c {\n  steps: ${e}\n  horizon: 3 turns\n}\n`,
  (e: string) => `let v = f(a, ${e}, b)\n`,
  (e: string) => `let v = [${e}, 2]\nfn g() = 1\n`,
  (e: string) => `fn f(x: turns) : turns = ${e}\nmodel m { path: "x" }\n`,
  (e: string) => `fn f(x: turns = ${e}) { let y = ${e}\n return y }\n`,
];
const PROGRAMS = [
  `import { f2b, b2f as back } from "std/tcod"\n/// Doc.\nexport let k: steps = 6 steps\n`,
  `fn h(x: turns, y: list<turns> = [1 turn]) : turns { let z = x + 1 turn\n return min(z, 30 turns) }\n`,
  `model m { path: "x", serve: embedded(lr: 1e-3) }\ncurriculum c { teacher: m\n student: m\n horizon: if step < 10 then 2 turns else 3 turns }\n`,
  `curriculum d = c with { steps: 2 * k, loss: opd(coef: 0.5).scaled }\nsweep s product { k: [1, 2], d.steps: [10, 20] }\n`,
  `let r = { p: -x, q: not a and b or c, s: 1..10, t: "a\\nb" }\nlet u: tasks×rollouts = 4 tasks * 2 rollouts\n`,
];

export function recoveryInputs(seed = 20261201): string[] {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const out: string[] = [];
  for (let i = 0; i < 150; i++) {
    const parts = [pick(OPERANDS)];
    for (let j = Math.floor(random() * 6); j >= 0; j--) parts.push(pick(OPERATORS), pick(OPERANDS));
    out.push(CONTEXTS[i % CONTEXTS.length]!(parts.join(" ")));
  }
  for (let i = 0; i < 150; i++) {
    const text = PROGRAMS[i % PROGRAMS.length]!;
    const tokens = lexTcod(text).tokens;
    let s = text;
    const edits = Array.from({ length: 1 + Math.floor(random() * 2) }, () => tokens[Math.floor(random() * tokens.length)]!)
      .sort((a, b) => b.startOffset - a.startOffset);
    for (const t of edits) {
      const a = t.startOffset;
      const b = a + t.image.length;
      const kind = Math.floor(random() * 3);
      s = kind === 0 ? s.slice(0, a) + s.slice(b) : kind === 1 ? s.slice(0, b) + " " + s.slice(a) : s.slice(0, a) + pick(VOCAB) + " " + s.slice(a);
    }
    out.push(s);
  }
  for (let i = 0; i < 100; i++) out.push(Array.from({ length: 1 + Math.floor(random() * 25) }, () => pick(VOCAB)).join(" "));
  return out;
}

/** `parse`'s result as one line of JSON, spans as `start-end`. */
export function renderParse(result: ParseResult): string {
  return JSON.stringify({ decls: result.ast.decls, errors: result.errors }, (key, value: unknown) => {
    if (value !== null && typeof value === "object" && "start" in value && "end" in value && "file" in value) {
      const span = value as { start: { offset: number }; end: { offset: number } };
      return `${span.start.offset}-${span.end.offset}`;
    }
    return value;
  });
}
