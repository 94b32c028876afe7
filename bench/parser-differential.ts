/**
 * A differential check of the parser against another build of it: both parse the same inputs, and
 * every AST (spans included), every syntax error (code, message parts, span) and every
 * `parseExpression` result must be identical. Used when the parser's implementation changes and its
 * output must not: build the previous parser into a bundle from the commit before (it must export
 * `parse` and `parseExpression` of grammar/index.ts), then
 *
 *   npx esbuild bench/parser-differential.ts --bundle --platform=node --format=esm --outfile=dist/bench/parser-differential.mjs
 *   OLD_PARSER=/tmp/old/old.mjs SEED=1 N=2000 node dist/bench/parser-differential.mjs
 *
 * (Two folders deep, as the sources are: the corpus is found from the bundle's folder, `../..`.)
 *
 * Inputs (N scales the generated ones): every .tcod of the repository; token-level mutations of them
 * (a token deleted, duplicated, swapped or inserted, one to three times); byte-level mutations
 * (test/fuzz's `mutate`); the fuzz generator's programs (`programArb`); operator chains with stray
 * brackets, missing operands and repeated comparisons in six contexts; token soup; and expressions
 * (`exprArb`, mutated) through `parseExpression`. Prints the counts and the first differences, and
 * exits 1 if there is any.
 *
 * Without OLD_PARSER it compares this build's two parsers instead: `parse` (the fast parser of
 * grammar/fast.ts, falling back to Chevrotain) against `parseRecovering` (Chevrotain alone), and
 * counts how many inputs the fast path took; an input with syntax errors that the fast path took is
 * a difference too (test/grammar/fast-parser.test.ts runs a smaller set of these in CI).
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { fastParse, fastParseExpression } from "../grammar/fast.js";
import { parse, parseExpression, parseExpressionRecovering, parseRecovering } from "../grammar/index.js";
import { lexTcod } from "../grammar/lexer.js";
import { exampleTexts, exprArb, mutate, programArb } from "../test/fuzz/generator.js";
import { CONTEXTS, OPERANDS, OPERATORS, VOCAB } from "../test/grammar/recovery-inputs.js";
import { tcodCorpus } from "../test/helpers/corpus.js";
import { rng } from "../test/helpers/prng.js";

type Parser = { parse: typeof parse; parseExpression: typeof parseExpression };
const old: Parser = process.env.OLD_PARSER
  ? ((await import(process.env.OLD_PARSER)) as Parser)
  : { parse: parseRecovering, parseExpression: parseExpressionRecovering };
/** Inputs the fast path took (no OLD_PARSER), and those of them Chevrotain reports errors for (must be 0). */
let fastTook = 0;
let fastTookBroken = 0;
const SEED = Number(process.env.SEED ?? 1);
const N = Number(process.env.N ?? 1000);
const random = rng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

const corpus = tcodCorpus().map((f) => readFileSync(f, "utf8"));
const examples = exampleTexts();

/** A file with one to three token edits (delete, duplicate, swap with the next, insert from VOCAB). */
function tokenMutation(text: string): string {
  const tokens = lexTcod(text).tokens.map((t) => [t.startOffset, t.startOffset + t.image.length] as const);
  if (tokens.length === 0) return text;
  let s = text;
  // Edit from the end so earlier offsets stay valid.
  const edits = Array.from({ length: 1 + Math.floor(random() * 3) }, () => Math.floor(random() * tokens.length)).sort((a, b) => b - a);
  for (const i of edits) {
    const [a, b] = tokens[i]!;
    switch (Math.floor(random() * 4)) {
      case 0: s = s.slice(0, a) + s.slice(b); break;
      case 1: s = s.slice(0, b) + " " + s.slice(a, b) + s.slice(b); break;
      case 2: { const next = tokens[i + 1]; if (next) s = s.slice(0, a) + s.slice(next[0], next[1]) + s.slice(b, next[0]) + s.slice(a, b) + s.slice(next[1]); break; }
      default: s = s.slice(0, a) + pick(VOCAB) + " " + s.slice(a);
    }
  }
  return s;
}

function chain(): string {
  const n = 1 + Math.floor(random() * 7);
  const parts: string[] = [pick(OPERANDS)];
  for (let i = 0; i < n; i++) parts.push(pick(OPERATORS), pick(OPERANDS));
  return parts.join(" ");
}
const soup = () => Array.from({ length: Math.floor(random() * 50) }, () => pick(VOCAB)).join(" ");

const show = (p: Parser, text: string) => JSON.stringify(p.parse(text, "t.tcod"));
const showExpr = (p: Parser, text: string) => JSON.stringify(p.parseExpression(text, "<set>"));

const counts: Record<string, number> = {};
const differences: { kind: string; text: string }[] = [];
function check(kind: string, text: string, expression = false): void {
  counts[kind] = (counts[kind] ?? 0) + 1;
  const a = expression ? showExpr(old, text) : show(old, text);
  const b = expression ? showExpr({ parse, parseExpression }, text) : show({ parse, parseExpression }, text);
  if (a !== b) differences.push({ kind, text });
  if (!process.env.OLD_PARSER) {
    const took = expression ? fastParseExpression(text, "<set>") !== undefined : fastParse(text, "t.tcod") !== undefined;
    if (took) {
      fastTook++;
      if (JSON.parse(a).errors.length > 0) {
        fastTookBroken++;
        differences.push({ kind: `${kind} (fast path took a broken input)`, text });
      }
    }
  }
}

for (const t of corpus) check("corpus", t);
for (let i = 0; i < N; i++) check("token mutation", tokenMutation(pick(corpus)));
for (let i = 0; i < N; i++) check("byte mutation", mutate(examples, random));
for (const p of fc.sample(programArb, { numRuns: N, seed: SEED })) check("generated program", p);
for (let i = 0; i < N; i++) check("operator chain", pick(CONTEXTS)(chain()));
for (let i = 0; i < N; i++) check("token soup", soup());
for (const e of fc.sample(exprArb, { numRuns: Math.ceil(N / 2), seed: SEED })) {
  check("expression", e, true);
  check("expression, mutated", tokenMutation(e), true);
}

const total = Object.values(counts).reduce((a, b) => a + b, 0);
console.log(JSON.stringify({ seed: SEED, n: N, total, counts, ...(process.env.OLD_PARSER ? {} : { fastTook, fastTookBroken }), differences: differences.length }));
for (const d of differences.slice(0, 5)) console.log(`--- ${d.kind}\n${d.text}`);
process.exit(differences.length === 0 ? 0 : 1);
