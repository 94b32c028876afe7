/**
 * `parse` builds the ASTs of top-level declarations while the file is parsed, in batches, and drops
 * their CSTs (so a large file's CST is never held whole): the result is exactly the AST built from
 * the whole CST, on the corpus, on documented declarations, and on token soup (error-recovery paths,
 * where a declaration is abandoned mid-way and built from the partial CST at the end).
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { tcodCorpus } from "../helpers/corpus.js";
import { parse } from "../../grammar/index.js";
import { astBuilder } from "../../grammar/cst-to-ast.js";
import { lexTcod } from "../../grammar/lexer.js";
import { firstTooDeep } from "../../grammar/nesting.js";
import { TcodParser } from "../../grammar/parser.js";
import { LineMap } from "../../grammar/spans.js";

const corpus = tcodCorpus();

/**
 * The AST from the whole CST of the file (a second parser, with no per-declaration hook), of the
 * tokens `parse` parses (up to a too-deep nest).
 */
const whole = new TcodParser();
function wholeCstDecls(text: string): string {
  const lexed = lexTcod(text);
  const tooDeep = firstTooDeep(lexed.tokens);
  whole.load(tooDeep === undefined ? lexed.tokens : lexed.tokens.slice(0, tooDeep));
  return JSON.stringify(astBuilder.build(whole.sourceFile(), new LineMap("t.tcod", text), lexed.docs));
}
const streamed = (text: string) => JSON.stringify(parse(text, "t.tcod").ast.decls);

const tokenWords = [
  "import", "{", "}", "from", '"std/tcod"', "let", "fn", "model", "curriculum", "sweep", "product", "zip", "with", "=", ":", ",",
  "(", ")", "[", "]", "x", "steps", "1", "turns", "+", "*", "/", "if", "then", "else", "return", "export", "\n", "/// doc\n", "/** d */", "@",
];

describe("declaration-at-a-time AST building", () => {
  it("gives the same declarations as the whole CST on the corpus", () => {
    expect(corpus.length).toBeGreaterThan(50);
    for (const f of corpus) {
      const text = readFileSync(f, "utf8");
      expect(streamed(text), f).toBe(wholeCstDecls(text));
    }
  });

  it("attaches each doc comment to its own declaration across many documented declarations", () => {
    const blocks = Array.from({ length: 300 }, (_, i) =>
      i % 3 === 0 ? `/// Doc ${i}\n/// line two\nlet a${i} = ${i} steps\n` : i % 3 === 1 ? `/** Block ${i} */\nfn f${i}(x: turns) : turns = x\n` : `let u${i} = 1\n\n`);
    const text = blocks.join("");
    expect(streamed(text)).toBe(wholeCstDecls(text));
    const decls = parse(text, "t.tcod").ast.decls as { name?: string; doc?: string }[];
    expect(decls.find((d) => d.name === "a297")?.doc).toBe("Doc 297\nline two");
    expect(decls.find((d) => d.name === "f298")?.doc).toBe("Block 298");
    expect(decls.find((d) => d.name === "u299")?.doc).toBeUndefined();
  });

  it("gives the same declarations as the whole CST on token soup", () => {
    const soup = fc.array(fc.constantFrom(...tokenWords), { maxLength: 50 }).map((ws) => ws.join(" "));
    fc.assert(fc.property(soup, (text) => streamed(text) === wholeCstDecls(text)), { numRuns: 500 });
  });

  it("gives the same declarations as the whole CST on token soup among more declarations than one batch", () => {
    // ASTs are built every 128 declarations: soup placed anywhere around a batch boundary.
    const lets = (n: number, from: number) => Array.from({ length: n }, (_, i) => `/// d${from + i}\nlet v${from + i} = ${i} steps\n`).join("");
    const text = fc.tuple(fc.integer({ min: 100, max: 140 }), fc.array(fc.constantFrom(...tokenWords), { maxLength: 40 }), fc.integer({ min: 0, max: 140 }))
      .map(([before, ws, after]) => lets(before, 0) + ws.join(" ") + "\n" + lets(after, 1000));
    fc.assert(fc.property(text, (t) => streamed(t) === wholeCstDecls(t)), { numRuns: 60 });
  });
});
