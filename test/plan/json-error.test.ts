/**
 * plan/json-error.ts: every JSON parse error a reader reports has a line and a column, whichever form
 * V8's message takes — "at position N" (Node 20), "(line L column C)" (Node 22+), or none ("Unexpected
 * end of JSON input", and Node 20's "Unexpected token 'x', "…" is not valid JSON"), for which the text
 * is scanned. The scan agrees with V8 wherever V8 gives a position.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonErrorOffset, jsonSyntaxError, lineColumn } from "../../plan/json-error.js";

/** What JSON.parse(text) threw (a test's text is never JSON). */
function thrown(text: string): unknown {
  try { JSON.parse(text); } catch (e) { return e; }
  throw new Error(`${JSON.stringify(text)} is JSON`);
}
const at = (text: string) => jsonSyntaxError(thrown(text), text);

describe("jsonSyntaxError: each form of V8's message", () => {
  it("`at position N`: the offset's line and column; the message without the place", () => {
    expect(at('{\n  "a" 1\n}')).toEqual({ message: "Expected ':' after property name", line: 2, column: 7 });
    expect(at('{"a":1} x')).toEqual({ message: "Unexpected non-whitespace character after JSON", line: 1, column: 9 });
  });

  it("`(line L column C)` (Node 22 and later): the line and column it states", () => {
    const e = new SyntaxError("Expected ',' or '}' after property value in JSON at position 12 (line 2 column 3)");
    expect(jsonSyntaxError(e, '{"a": 1,\n  "b" 2}')).toEqual({ message: "Expected ',' or '}' after property value", line: 2, column: 3 });
  });

  it("`Unexpected end of JSON input`: the end of a truncated file (was: no line or column)", () => {
    expect(at('{\n  "name": "x",\n  "clock": {"steps": 2')).toMatchObject({ message: "Expected ',' or '}' after property value", line: 3, column: 23 });
    expect(at('{\n  "a": [1, 2,\n  tru')).toEqual({ message: "Unexpected end of JSON input", line: 3, column: 6 });
    expect(at("")).toEqual({ message: "Unexpected end of JSON input", line: 1, column: 1 });
    expect(at("\n\n")).toEqual({ message: "Unexpected end of JSON input", line: 3, column: 1 });
  });

  it("no position (`Unexpected token 'x', \"…\" is not valid JSON`): found by scanning; the quoted excerpt, which can span lines, left out", () => {
    expect(at('{\n  "a":\n    }')).toEqual({ message: "Unexpected token '}'", line: 3, column: 5 });
    expect(at('[1,\n]')).toEqual({ message: "Unexpected token ']'", line: 2, column: 1 });
    // The same message written by hand (its form whatever the Node.js version running the test).
    const e = new SyntaxError('Unexpected token \'x\', ..."aaaa":\n  x}" is not valid JSON');
    expect(jsonSyntaxError(e, '{"aaaa":\n  x}')).toEqual({ message: "Unexpected token 'x'", line: 2, column: 3 });
  });

  it("an invisible token is named by its code point", () => {
    expect(at("\uFEFF{}")).toEqual({ message: "Unexpected token U+FEFF", line: 1, column: 1 });
    expect(jsonSyntaxError(new SyntaxError("Unexpected token '\n', \"{\"a\":\n  tru\n}\" is not valid JSON"), '{"a":\n  tru\n}'))
      .toEqual({ message: "Unexpected token U+000A", line: 2, column: 6 });
  });

  it("a line of a JSON-lines file: `start` places it (its line, and the column its trimmed text starts at)", () => {
    const line = '{"step": 1,, }';
    expect(jsonSyntaxError(thrown(line), line, { line: 7 })).toEqual({ message: "Expected double-quoted property name", line: 7, column: 12 });
    expect(jsonSyntaxError(thrown(line), line, { line: 7, column: 3 })).toMatchObject({ line: 7, column: 14 });
  });

  it("anything but a SyntaxError is not a JSON error", () => {
    expect(jsonSyntaxError(new Error("EACCES"), "")).toBeUndefined();
    expect(jsonSyntaxError("x", "")).toBeUndefined();
  });
});

describe("jsonErrorOffset: the scan agrees with JSON.parse", () => {
  const JSONISH = fc.stringMatching(/^[\s{}[\]",:0-9a-z.eE+\-\\u\u0001]{0,24}$/);
  it("a text is JSON exactly when the scan finds no error", () => {
    fc.assert(fc.property(fc.oneof(JSONISH, fc.json().map((j) => j.slice(0, Math.max(0, j.length - 1)))), (text) => {
      let ok = true;
      try { JSON.parse(text); } catch { ok = false; }
      expect(jsonErrorOffset(text) === undefined).toBe(ok);
    }), { numRuns: 3000 });
  });

  it("where V8 gives a position, the scan finds the same one", () => {
    fc.assert(fc.property(JSONISH, (text) => {
      let m: RegExpExecArray | null = null;
      try { JSON.parse(text); } catch (e) { m = /at position (\d+)/.exec((e as Error).message); }
      if (m) expect(jsonErrorOffset(text)).toBe(Number(m[1]));
    }), { numRuns: 3000 });
  });

  it("nesting costs no stack: 1,000,000 open brackets", () => {
    expect(jsonErrorOffset("[".repeat(1_000_000))).toBe(1_000_000);
  });

  it("lineColumn counts LF-ended lines", () => {
    expect(lineColumn("ab\ncd\r\nef", 8)).toEqual({ line: 3, column: 2 });
  });
});
