/**
 * Mutation fuzzing: take the valid sample, delete / duplicate / swap / replace random tokens (seeded),
 * and check the contract of `parse` on every mutant: it never throws, every error has a known code
 * and a span inside the file whose line/column agree with its offset, and every AST span does too.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, type SyntaxErrorInfo } from "../../grammar/index.js";
import type { Position, Span } from "../../grammar/ast.js";
import { lexTcod } from "../../grammar/lexer.js";
import { rng } from "../helpers/prng.js";

const sample = readFileSync(new URL("./samples/f2b.tcod", import.meta.url), "utf8");
const codes = new Set(["TC1001", "TC1002", "TC1003", "TC1004", "TC1005", "TC1006", "TC1007", "TC1008", "TC1009", "TC1010"]);


const pieces = lexTcod(sample).tokens.map((t) => t.image);
const junk = ["{", "}", "(", ")", "[", "]", ",", ":", "=", "×", "..", ".", "-", "not", "if", "else", "\"", "/*", "§", "%", "steps", "with", "export"];

function mutate(seed: number): string {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const tokens = [...pieces];
  const edits = 1 + Math.floor(random() * 4);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * tokens.length);
    switch (pick(["delete", "duplicate", "swap", "replace"] as const)) {
      case "delete": tokens.splice(at, 1); break;
      case "duplicate": tokens.splice(at, 0, tokens[at] ?? ""); break;
      case "swap": {
        const other = Math.floor(random() * tokens.length);
        [tokens[at], tokens[other]] = [tokens[other] ?? "", tokens[at] ?? ""];
        break;
      }
      case "replace": tokens[at] = pick(junk); break;
    }
  }
  // Join with spaces or newlines so the layout also varies (fields are newline-separated).
  return tokens.map((t) => t + (random() < 0.2 ? "\n" : " ")).join("");
}

/** Line and column of every offset of `text` (one more for the end), computed the naive way. */
function positionsOf(text: string): { line: number[]; column: number[] } {
  const line: number[] = [];
  const column: number[] = [];
  let l = 1;
  let c = 1;
  for (let i = 0; i <= text.length; i++) {
    line.push(l);
    column.push(c);
    const ch = text[i];
    if (ch === "\n" || (ch === "\r" && text[i + 1] !== "\n")) {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  return { line, column };
}

type Positions = ReturnType<typeof positionsOf>;

function checkPosition(text: string, at: Positions, p: Position): boolean {
  return p.offset >= 0 && p.offset <= text.length && at.line[p.offset] === p.line && at.column[p.offset] === p.column;
}

/** Plain checks first (vitest's expect is too slow for ~10^5 spans), an expect only on failure. */
function expectSpan(text: string, at: Positions, file: string, span: Span, where: string): void {
  const ok = span.file === file && checkPosition(text, at, span.start) && checkPosition(text, at, span.end)
    && span.end.offset >= span.start.offset;
  if (!ok) expect.fail(`${where}: bad span ${JSON.stringify(span)}`);
}

/** Every `span`/`*Span` object anywhere in the AST. */
function* spansIn(node: unknown, path = "ast"): Generator<[string, Span]> {
  if (Array.isArray(node)) {
    for (const [i, x] of node.entries()) yield* spansIn(x, `${path}[${i}]`);
  } else if (node !== null && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if ((k === "span" || k.endsWith("Span")) && v !== null && typeof v === "object") yield [`${path}.${k}`, v as Span];
      else if (k !== "text") yield* spansIn(v, `${path}.${k}`);
    }
  }
}

/** Character-level edits: reaches the lexer's error paths (quotes, comment openers, non-ASCII). */
function mutateChars(seed: number): string {
  const random = rng(seed);
  const alphabet = ['"', "\\", "/*", "*/", "//", "///", "\n", "\r\n", "\t", "×", "é", "😀", "§", "{", "}", "(", ")", "%", "..", "e", "1", "-", " ", "\u202e", "\u001b"];
  let text = sample;
  const edits = 1 + Math.floor(random() * 6);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (text.length + 1));
    if (random() < 0.4) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 3));
    else text = text.slice(0, at) + alphabet[Math.floor(random() * alphabet.length)]! + text.slice(at);
  }
  return text;
}

describe("mutation fuzzing of the sample", () => {
  it("the unmutated sample is clean (the mutants start from a valid program)", () => {
    expect(parse(sample, "f2b.tcod").errors).toEqual([]);
  });

  it.each([
    ["token", mutate],
    ["character", mutateChars],
  ] as const)("parses 400 %s-level mutants without throwing, with coded, in-file error and AST spans", (_, mutator) => {
    let withErrors = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const text = mutator(seed);
      const where = `seed ${seed}`;
      let result: ReturnType<typeof parse>;
      try {
        result = parse(text, "mutant.tcod");
      } catch (e) {
        throw new Error(`${where}: parse threw ${String(e)}\n${text}`);
      }
      if (result.errors.length > 0) withErrors++;
      const at = positionsOf(text);
      for (const e of result.errors as SyntaxErrorInfo[]) {
        expect(codes.has(e.code), `${where}: code ${e.code}`).toBe(true);
        expect(["lexer", "parser"]).toContain(e.kind);
        expectSpan(text, at, "mutant.tcod", e.span, `${where}: ${JSON.stringify(e)}`);
        if (e.code === "TC1001") expect(e.found && e.expected, where).toBeTruthy();
        if (e.code === "TC1004") expect(e.expected, where).toBeTruthy();
        if (e.code === "TC1003" || e.code === "TC1006" || e.code === "TC1010") expect(e.char, where).toBeTruthy();
        expect((e.expected ?? "").length, where).toBeLessThan(90);
      }
      let spans = 0;
      for (const [path, span] of spansIn(result.ast.decls)) {
        expectSpan(text, at, "mutant.tcod", span, `${where}: ${path}`);
        spans++;
      }
      expect(spans, where).toBeGreaterThan(0);
    }
    // Most mutants must actually be broken, or this test checks nothing.
    expect(withErrors).toBeGreaterThan(250);
  });
});
