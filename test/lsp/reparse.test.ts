/**
 * lsp/reparse.ts: after any edit of any example, stdlib module or fixture, re-parsing the touched
 * declarations gives exactly the full parse (declarations, spans, doc comments), or declines (then
 * the server parses the file); chains of edits, each re-parsed from the last, do not drift. An edit
 * of numbers (with or without comments) is patched into the old declarations without parsing.
 */
import fc from "fast-check";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LetDecl } from "../../grammar/ast.js";
import { parse } from "../../grammar/index.js";
import { reparse, ReparseMemo } from "../../lsp/reparse.js";

const ROOT = join(import.meta.dirname, "../..");
const walk = (d: string): string[] => readdirSync(d).sort().flatMap((n) => {
  const p = join(d, n);
  return statSync(p).isDirectory() ? (n === "node_modules" ? [] : walk(p)) : n.endsWith(".tcod") ? [p] : [];
});
const texts = ["examples", "stdlib", "test/fixtures"].flatMap((d) => walk(join(ROOT, d))).map((f) => readFileSync(f, "utf8"))
  .filter((t) => !t.includes("\r") && parse(t, "f.tcod").errors.length === 0);

const SNIPPETS = ["\nlet zz = 3 steps\n", "1", " ", "\n", "x", "/// doc\n", "// c\n", "}", "(", "+ 2", "let", "\n\n", "turns", "fn g() = 1\n", "/* c */", " /* c\n */ ", "/", "*", "\t"];
const edit = fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), del: fc.nat(12), ins: fc.constantFrom(...SNIPPETS, "") });
const apply = (t: string, e: { at: number; del: number; ins: string }) => {
  const at = Math.floor(e.at * t.length);
  return t.slice(0, at) + e.ins + t.slice(at + e.del);
};

describe("re-parsing the declarations an edit touched", () => {
  it(`equals the full parse after random edit chains on ${texts.length} files`, () => {
    let used = 0;
    fc.assert(fc.property(fc.constantFrom(...texts), fc.array(edit, { minLength: 1, maxLength: 5 }), (text, edits) => {
      let prev = { text, result: parse(text, "f.tcod") };
      for (const e of edits) {
        const next = apply(prev.text, e);
        const full = parse(next, "f.tcod");
        const inc = reparse(prev, next, "f.tcod")?.result;
        if (inc) {
          used++;
          expect(JSON.stringify(inc)).toBe(JSON.stringify(full));
        }
        prev = { text: next, result: inc ?? full };
      }
    }), { numRuns: 400 });
    expect(used).toBeGreaterThan(20); // most random edits break the syntax: then the file is parsed
  });

  it("is used for a new declaration at the end, in the middle, and for an edited number", () => {
    for (const text of texts) {
      const prev = { text, result: parse(text, "f.tcod") };
      const mid = prev.result.ast.decls[Math.floor(prev.result.ast.decls.length / 2)];
      const lineStart = mid ? text.lastIndexOf("\n", mid.span.start.offset - 1) + 1 : 0;
      const digit = text.search(/ [1-9]\d* (steps|turns)\b/);
      const variants = [
        `${text}\nlet lsp_probe = 3 steps\n`,
        text.slice(0, lineStart) + "let lsp_probe = 3 steps\n" + text.slice(lineStart),
        ...(digit >= 0 ? [text.slice(0, digit + 1) + "7" + text.slice(digit + 1)] : []),
        // Comments and whitespace only: the same tokens, positions moved (on the edit's line and after it).
        text.replace(/(\n(curriculum|let|fn|model) [^\n]*)/, "$1 /* a comment */"),
        text.replace(/(\n(curriculum|let|fn|model) [^\n]*)/, "$1 /* a comment\n over lines */\n\n"),
        text.replace(/\n(?=(export )?(curriculum|let|fn|model) )/, "\n// between a doc comment and its declaration\n"),
        text.replace(/\n/, "\n\t\n"),
      ];
      for (const next of variants) {
        const inc = reparse(prev, next, "f.tcod")?.result;
        const full = parse(next, "f.tcod");
        expect(inc === undefined && full.errors.length === 0 && prev.result.ast.decls.length > 0, "declined a clean edit").toBe(false);
        if (inc) expect(JSON.stringify(inc)).toBe(JSON.stringify(full));
      }
    }
  });

  it("patches changed numbers into the declarations without parsing, as the full parse has them", () => {
    const NUMBERS = ["7", "12345", "0.5", "1e-3", "3.25", "2E+4", "10"];
    let patched = 0;
    fc.assert(fc.property(fc.constantFrom(...texts), fc.array(fc.record({ pick: fc.nat(), to: fc.constantFrom(...NUMBERS), comment: fc.boolean() }), { minLength: 1, maxLength: 4 }), (text, edits) => {
      let prev = { text, result: parse(text, "f.tcod") };
      for (const e of edits) {
        // A number literal outside comments and strings (a token of the lexer), replaced by another; sometimes with a comment beside it.
        const lits = [...prev.text.matchAll(/\/\/[^\n]*|\/\*[^]*?\*\/|"(?:[^"\\\n]|\\.)*"|(?<![\w.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])/g)].filter((m) => /^\d/.test(m[0]));
        if (lits.length === 0) return;
        const m = lits[e.pick % lits.length]!;
        const next = prev.text.slice(0, m.index) + e.to + (e.comment ? " /* was " + m[0] + " */" : "") + prev.text.slice(m.index + m[0].length);
        const full = parse(next, "f.tcod");
        const r = reparse(prev, next, "f.tcod");
        if (full.errors.length === 0 && m[0] !== e.to) expect(r?.way, `${m[0]} → ${e.to}`).toBe("numbers");
        if (r) expect(JSON.stringify(r.result)).toBe(JSON.stringify(full));
        if (r?.way === "numbers") patched++;
        prev = { text: next, result: r?.result ?? full };
      }
    }), { numRuns: 300 });
    expect(patched).toBeGreaterThan(100);
  });

  it("patches a number inside an operator chain 30,000 terms deep (the copy does not recurse)", () => {
    // A flat chain parses into a left-leaning tree as deep as the chain is long; a recursive copy of
    // it overflowed the stack now and then, depending on how much of the code V8 had optimised.
    const terms = Array.from({ length: 30000 }, (_, k) => `${k + 1}`).join(" + ");
    const text = `let x = ${terms}\n`;
    const next = text.replace(" 1500 +", " 1501 +");
    const r = reparse({ text, result: parse(text, "f.tcod") }, next, "f.tcod");
    expect(r?.way).toBe("numbers");
    const inc = r?.result;
    const full = parse(next, "f.tcod");
    expect(full.errors).toEqual([]);
    let a: unknown = (inc!.ast.decls[0] as LetDecl).value, b: unknown = (full.ast.decls[0] as LetDecl).value, depth = 0;
    // Walk the left spine side by side (JSON.stringify of the whole tree would recurse as deep).
    for (; a && typeof a === "object" && "left" in (a as object); depth++) {
      const x = a as { op: string; right: unknown; span: unknown; left: unknown }, y = b as typeof x;
      expect([x.op, x.right, x.span]).toEqual([y.op, y.right, y.span]);
      a = x.left; b = y.left;
    }
    expect(depth).toBeGreaterThan(29000);
    expect(a).toEqual(b);
  });

  it("keeps what it reuses in the caller's memo: bounded over many distinct edits, shared by nothing else", () => {
    // (Was module-level: every document of every workspace shared one list of texts.)
    const text = readFileSync(join(ROOT, "examples/texthouse/tcod-f2b.tcod"), "utf8");
    const memo = new ReparseMemo();
    const other = new ReparseMemo();
    let prev = { text, result: parse(text, "f.tcod") };
    const at = text.indexOf("\n", text.indexOf("curriculum "));
    const ways = new Set<string>();
    for (let k = 1; k <= 500; k++) {
      // A comment typed, then a new value: every text distinct, each re-parsed from the last.
      const next = text.slice(0, at) + ` // ${"x".repeat(k)}` + text.slice(at) + `\nlet v${k} = ${k} steps\n`;
      const r = reparse(prev, next, "f.tcod", memo);
      expect(r, `edit ${k}`).toBeDefined();
      ways.add(r!.way);
      prev = { text: next, result: r!.result };
      expect(memo.size).toBeLessThanOrEqual(6);
    }
    expect(ways.has("region")).toBe(true);
    expect(memo.size).toBeGreaterThan(0);
    expect(other.size).toBe(0);
  });
});
