/**
 * The start-up shortcuts of the grammar change nothing: a parser built from the build-time tables
 * (grammar/precomputed.ts) decides exactly as Chevrotain's own analysis, and the lexer's start-char
 * hints agree with a lexer that tries every pattern at every character (`safeMode`).
 */
import { Lexer, type IToken, type TokenType } from "chevrotain";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tcodCorpus } from "../helpers/corpus.js";
import { allTokens, lexTcod } from "../../grammar/lexer.js";
import { computeGrammarTables, tcodParser, TcodParser } from "../../grammar/parser.js";
import { LineMap } from "../../grammar/spans.js";


const corpus = tcodCorpus();

const tables = computeGrammarTables();
const fromTables = new TcodParser(tables);

function parseWith(parser: TcodParser, text: string): string {
  const lexed = lexTcod(text);
  parser.load(lexed.tokens, new LineMap("t.tcod", text), lexed.docs);
  const decls = parser.sourceFile();
  const errors = parser.errors.map((e) => `${e.name}@${e.token.startOffset}:${e.message}`);
  return JSON.stringify({ decls, errors, insertions: parser.insertions.map((i) => i.expected.name), dangling: parser.danglingOperators.map((t) => t.startOffset), commas: parser.missingCommas.map((t) => t.startOffset) });
}

const tokenWords = [
  "import", "{", "}", "from", '"std/tcod"', "let", "fn", "model", "curriculum", "sweep", "product", "zip", "with", "=", ":", ",",
  "(", ")", "[", "]", "x", "steps", "1", "2.5", "turns", "+", "-", "*", "×", "/", "..", "<", ">=", "==", "if", "then", "else",
  "and", "or", "not", "true", "%", ".", "return", "export", "as", "\n", "//c\n", "/* b */", '"s', "@",
];
const soup = fc.array(fc.constantFrom(...tokenWords), { maxLength: 40 }).map((ws) => ws.join(" "));

describe("precomputed grammar tables", () => {
  it("cover every production of the grammar", () => {
    expect(Object.keys(tables.lookahead).length).toBeGreaterThan(40);
    expect(Object.keys(tables.follows).length).toBeGreaterThan(20);
  });

  it("give the same trees, errors and recoveries as Chevrotain's analysis on the corpus", () => {
    expect(corpus.length).toBeGreaterThan(50);
    for (const f of corpus) {
      const text = readFileSync(f, "utf8");
      expect(parseWith(fromTables, text), f).toBe(parseWith(tcodParser(), text));
    }
  });

  it("give the same results on token soup (error recovery paths)", () => {
    fc.assert(fc.property(soup, (text) => parseWith(fromTables, text) === parseWith(tcodParser(), text)), { numRuns: 400 });
  });
});

describe("lexer start-char hints", () => {
  const safe = new Lexer(allTokens as TokenType[], { positionTracking: "onlyOffset", safeMode: true });
  const show = (ts: IToken[]) => ts.map((t) => `${t.tokenType.name}:${t.image}@${t.startOffset}`).join(" ");
  const compare = (text: string) => {
    const a = lexTcod(text);
    const b = safe.tokenize(text);
    return show(a.tokens) === show(b.tokens) && show(a.docs) === show(b.groups["docs"] ?? []);
  };

  it("lex the corpus exactly as the unoptimised lexer", () => {
    for (const f of corpus) expect(compare(readFileSync(f, "utf8")), f).toBe(true);
  });

  it("lex any string exactly as the unoptimised lexer", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), compare), { numRuns: 500 });
    fc.assert(fc.property(soup, compare), { numRuns: 300 });
  });
});
