/**
 * The differential check of the fast parser (grammar/fast.ts) against the Chevrotain parser
 * (grammar/parser.ts, `parseRecovering`): on every input, either the fast path gives up (and
 * `parse` falls back to Chevrotain) or its AST is the Chevrotain AST exactly — the same JSON, so the
 * same nodes, keys in the same order, spans and doc comments. The fast path must give up on every
 * input Chevrotain reports an error for (it never silently accepts a broken file), and must not give
 * up on any valid file of the repository (or the speed-up would be lost without a word).
 *
 * Inputs (fixed seeds; about 15 s): every .tcod file of the repository, and CRLF, CR and BOM
 * variants of 40 of them; valid corner cases; the fuzz generator's programs (test/fuzz/generator.ts
 * `programArb`, mostly valid); byte mutations of the examples (`mutate`); token mutations of the
 * corpus (a token deleted, duplicated, or one inserted before another); operator chains in the
 * recovery contexts; expressions through `parseExpression`. bench/parser-differential.ts (without
 * OLD_PARSER) runs many more of the same kinds.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastParse, fastParseExpression } from "../../grammar/fast.js";
import { parseExpressionRecovering, parseRecovering } from "../../grammar/index.js";
import { lexTcod } from "../../grammar/lexer.js";
import { exampleTexts, exprArb, mutate, programArb } from "../fuzz/generator.js";
import { tcodCorpus } from "../helpers/corpus.js";
import { rng } from "../helpers/prng.js";
import { CONTEXTS, OPERANDS, OPERATORS, VOCAB } from "./recovery-inputs.js";

type Outcome = "same" | "fallback" | "fallback on valid input";

/** Compares the two parsers on `text`; throws on a difference or on a broken input the fast path took. */
function compare(text: string): Outcome {
  const slow = parseRecovering(text, "t.tcod");
  const fast = fastParse(text, "t.tcod");
  if (fast === undefined) return slow.errors.length === 0 ? "fallback on valid input" : "fallback";
  if (slow.errors.length > 0) {
    throw new Error(`the fast path accepted input with syntax errors (${slow.errors.map((e) => e.code).join(", ")}):\n${text}`);
  }
  const a = JSON.stringify(fast);
  const b = JSON.stringify(slow.ast.decls);
  if (a !== b) throw new Error(`ASTs differ on:\n${text}\nfast: ${a.slice(0, 2000)}\nslow: ${b.slice(0, 2000)}`);
  return "same";
}

function compareExpression(text: string): Outcome {
  const slow = parseExpressionRecovering(text, "<set>");
  const fast = fastParseExpression(text, "<set>");
  if (fast === undefined) return slow.errors.length === 0 ? "fallback on valid input" : "fallback";
  if (slow.errors.length > 0) throw new Error(`the fast path accepted an expression with syntax errors:\n${text}`);
  expect(JSON.stringify(fast), text).toBe(JSON.stringify(slow.expr));
  return "same";
}

const corpus = tcodCorpus().map((f) => [f, readFileSync(f, "utf8")] as const);
const random = rng(20261201);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

function tally(outcomes: Outcome[]): Record<Outcome, number> {
  const counts = { same: 0, fallback: 0, "fallback on valid input": 0 };
  for (const o of outcomes) counts[o]++;
  if (process.env.TCOD_TALLY) console.log(counts);
  return counts;
}

describe("fast parser against Chevrotain", () => {
  it("builds the same AST for every .tcod file of the repository, never falling back on a valid one", () => {
    for (const [file, text] of corpus) {
      const outcome = compare(text);
      if (outcome === "fallback on valid input") throw new Error(`fast path gave up on the valid file ${file}`);
    }
  });

  it("agrees on valid corner cases: CRLF and CR line ends, BOM, keywords as names, units, numbers, escapes, comments", () => {
    for (const [file, text] of corpus.slice(0, 40)) {
      for (const variant of [text.replace(/\n/g, "\r\n"), text.replace(/\n/g, "\r"), `\uFEFF${text}`]) {
        if (compare(variant) === "fallback on valid input") throw new Error(`fast path gave up on a variant of ${file}`);
      }
    }
    const valid = [
      "let from = 1\nlet x = from + f(from: from, with: 2, model: 3).in.not", "let x = {model: 1, if: 2}\nlet y = x.model",
      "let a = 1e999 + 2.5e3 + 0.0 + 1e-6 + 1E+2 + 007 + 12345678901234567890 + 1.5e + 1.e3",
      "let a = 1..2\nlet b = 3 steps..4 turns\nlet c = 50 % + 5%", "let s = \"a\\nb\\t\\\"q\\\\ é × \u2028\"",
      "/** doc\n * two */\nexport let a = 1\n/// one\n/// two\nfn f(x: list<tasks×rollouts>, y: steps/turns = 2,) : per_turn<number> { let z = x\n return z }",
      "/**/ let a = 1 /***/ //// ruler\n/*/ x */ let b = -not - a", "let x = a < b and c .. d or e >= f and not g == h != i",
      "let x = if a then if b then 1 else 2 else if c then 3 else 4", "let x = f()(1)(a: 2,).b[0]", "let v = [1,]\nlet w = [ ]",
      "import { a, b as c, from, } from \"std/x\"\nsweep s zip { k: [1, 2], c.steps: [3, 4], }\ncurriculum d = c with { steps: 1, }",
      "let x = 6 steps\nlet y = 6 step: 3", "curriculum c { steps: 6\n turns: 3 }", "model m { a: 1 b: 2, c: 3 }",
      "let x = a × b * c / d - -e + (f)", "fn f() = { a: 1 }", "let x = 1 turns\n", "\uFEFFlet a\u000b=\u000c1",
    ];
    const outcomes = valid.map((text) => { const o = compare(text); expect(o, text).not.toBe("fallback on valid input"); return o; });
    // Four of them are errors on purpose (a number then a name, chained comparisons, indexing, a unit word before `:`).
    expect(outcomes.filter((o) => o === "same").length).toBe(valid.length - 4);
  });

  it("gives up on every input with a syntax or lexical error (it never accepts what Chevrotain rejects)", () => {
    const broken = [
      "let x = ", "let x = 1 +", "let = 1", "let x = (1", "let x = [1 2]", "let x = f(a: 1 b: 2)", "let x = a < b < c",
      "let x = 1 .. 2 .. 3", "let x = \"abc", "let x = \"a\\qb\"", "let x = 1 § 2", "/* open", "let x = 1 !", "curriculum c { a: 1 +\n b: 2 }",
      "import {} from \"x\"", "import { a } \"x\"", "fn f(a b) = 1", "fn f() 1", "model m { a 1 }", "sweep s { k: [1] }",
      "export sweep s product { k: [1] }", "let x = -", "let x = not", "curriculum c = { }", "let x = f(,)", "let x = [,]",
      "let x = if a then b", "let x = a.", "let x = a.(b)", `let x = ${"(".repeat(40)}1${")".repeat(40)}`,
      `let x = ${"-".repeat(40)}1`, "let x = 1\u00a0", "let x = 1 // \u0000", "let x = \"\u0000\"", "/* \u0000 */ let x = 1", "let x = 1 // \u001b", "let x = \"\u0007\"", "/// \u007f\nlet x = 1", "/* \u0085 */ let x = 1",
      "let x = 1 /* \u202e */", "let x = \"\u2066\"", "let x = 1 // \u2069", "let x = 1 \u202e", Buffer.from("\uFEFFlet x = 1", "utf16le").toString("utf8"),
      Buffer.from("let x = 1", "utf16le").toString("utf8"), "let x = 1 let", "}", "let x = {a: 1 b}", "let x: = 1", "let x: list<a = 1",
    ];
    for (const text of broken) {
      expect(parseRecovering(text, "t.tcod").errors.length, text).toBeGreaterThan(0);
      expect(fastParse(text, "t.tcod"), text).toBeUndefined();
      expect(compare(text)).toBe("fallback");
    }
  });

  it("agrees on the fuzz generator's programs (fixed seed)", () => {
    const programs = fc.sample(programArb, { numRuns: 1500, seed: 17 });
    const counts = tally(programs.map(compare));
    // Generated programs are mostly valid: most of them take the fast path.
    expect(counts.same).toBeGreaterThan(programs.length / 2);
    expect(counts["fallback on valid input"]).toBe(0);
  });

  it("agrees on byte and token mutations of the corpus (fixed seed)", () => {
    const examples = exampleTexts();
    const texts = corpus.map(([, t]) => t);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 500; i++) outcomes.push(compare(mutate(examples, random)));
    for (let i = 0; i < 500; i++) {
      const text = pick(texts);
      const tokens = lexTcod(text).tokens.map((t) => [t.startOffset, t.startOffset + t.image.length] as const);
      if (tokens.length === 0) continue;
      const [a, b] = pick(tokens);
      const edit = Math.floor(random() * 4);
      const mutated = edit === 0 ? text.slice(0, a) + text.slice(b)
        : edit === 1 ? text.slice(0, b) + " " + text.slice(a, b) + text.slice(b)
        : edit === 2 ? text.slice(0, a) + pick(VOCAB) + " " + text.slice(a)
        : text.slice(0, a) + "\n" + text.slice(a);
      outcomes.push(compare(mutated));
    }
    expect(tally(outcomes)["fallback on valid input"]).toBe(0);
  });

  it("agrees on operator chains in every recovery context, and on expressions alone", () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 600; i++) {
      const n = 1 + Math.floor(random() * 6);
      const parts: string[] = [pick(OPERANDS)];
      for (let j = 0; j < n; j++) parts.push(pick(OPERATORS), pick(OPERANDS));
      const context = pick(CONTEXTS);
      outcomes.push(compare(context(parts.join(" "))));
    }
    for (const e of fc.sample(exprArb, { numRuns: 600, seed: 5 })) outcomes.push(compareExpression(e));
    for (let i = 0; i < 200; i++) outcomes.push(compareExpression(Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(VOCAB)).join(" ")));
    expect(tally(outcomes)["fallback on valid input"]).toBe(0);
  });
});
