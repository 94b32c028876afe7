import { describe, expect, it } from "vitest";
import { parse, type SyntaxErrorInfo } from "../../grammar/index.js";
import { MAX_NESTING } from "../../grammar/nesting.js";
import { decodeSource, hexBytes } from "../../grammar/source-chars.js";
import { fastParse } from "../../grammar/fast.js";
import { syntaxMessage } from "../../compiler/modules.js";
import { declNamed, sexpr, textOf } from "./helpers.js";

const brief = (e: SyntaxErrorInfo) =>
  `${e.code} ${e.span.start.line}:${e.span.start.column}` +
  (e.found !== undefined ? ` found ${e.found}` : "") +
  (e.expected !== undefined ? ` expected ${e.expected}` : "") +
  (e.char !== undefined ? ` char ${e.char}` : "") +
  (e.bytes !== undefined ? ` bytes ${hexBytes(e.bytes)}` : "");

describe("lexical errors", () => {
  it("reports each invalid character with its position (TC1003)", () => {
    const { ast, errors } = parse("let a = 1 §\nlet b = 2 @@", "lex.tcod");
    expect(errors.map(brief)).toEqual(["TC1003 1:11 char §", "TC1003 2:11 char @", "TC1003 2:12 char @"]);
    expect(ast.decls.map((d) => ("name" in d ? d.name : ""))).toEqual(["a", "b"]);
  });

  it("reports an unterminated string once and keeps its text (TC1002)", () => {
    const { ast, errors } = parse('model m { path: "abc\n  serve: worker("u") }', "s.tcod");
    expect(errors.map(brief)).toEqual(["TC1002 1:17"]);
    expect(errors[0]!.span.end.column).toBe(21);
    const m = declNamed(ast.decls, "model", "m");
    expect(m.fields.map((f) => `${f.name}=${sexpr(f.value)}`)).toEqual(['path="abc"', 'serve=worker("u")']);
  });

  it("reports an unterminated block comment and nothing after it (TC1005)", () => {
    const { ast, errors } = parse("let a = 1\ncurriculum c {\n  /* steps: 3\n}\nlet b = 2", "c.tcod");
    expect(errors.map(brief)).toEqual(["TC1005 3:3"]);
    expect(ast.decls.map((d) => ("name" in d ? d.name : ""))).toEqual(["a", "c"]);
  });

  it("reports bytes that are not UTF-8 (read as U+FFFD) wherever they are: string, comment, doc comment, code (TC1008)", () => {
    // As readFileSync(p, "utf8") decodes a Latin-1 file: each 0xE9 becomes U+FFFD.
    const text = Buffer.from('/// doc \xe9\nlet a = "caf\xe9" // \xe9\nlet b\xe9 = 2 /* \xe9 */\n', "latin1").toString("utf8");
    const { errors } = parse(text, "u.tcod");
    expect(errors.map(brief)).toEqual(["TC1008 1:9", "TC1008 2:13", "TC1008 2:19", "TC1008 3:6", "TC1008 3:15"]);
    // Well-formed UTF-8 outside ASCII is fine inside strings and comments.
    expect(parse('let a = "café" // é\n', "ok.tcod").errors).toEqual([]);
  });

  it("a text decoded from a file's bytes names each bad byte sequence where it stands, and takes a U+FFFD the file holds (EF BF BD) as a character: in a string or comment accepted, in code TC1003 (were: every U+FFFD TC1008, the bytes unnamed)", () => {
    const bytes = Buffer.concat([
      Buffer.from('let a = "caf\uFFFD" // \uFFFD ok\nlet b = "caf'), Buffer.from([0xe9]), Buffer.from('" // '),
      Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from(" \u{1F600}\nlet c\uFFFD = 1\n"),
    ]);
    const source = decodeSource(bytes);
    expect(source.text).toBe(bytes.toString("utf8"));
    expect(source.badBytes).toEqual([{ offset: 35, bytes: [0xe9] }, { offset: 41, bytes: [0xf0, 0x9f, 0x98] }]);
    const { errors } = parse(source.text, "u.tcod", source.badBytes);
    expect(errors.map(brief)).toEqual(["TC1008 2:13 bytes 0xE9", "TC1008 2:19 bytes 0xF0 0x9F 0x98", "TC1003 3:6 char \uFFFD"]);
    expect(errors.slice(0, 2).map((e) => syntaxMessage(e).message)).toEqual(["Not valid UTF-8: the byte 0xE9 here.", "Not valid UTF-8: the bytes 0xF0 0x9F 0x98 here."]);
    // Valid bytes with a U+FFFD in a string, a comment and a doc comment: no error, by either parser.
    const ok = decodeSource(Buffer.from('/// \uFFFD\nlet a = "\uFFFD" // \uFFFD\n'));
    expect(ok.badBytes).toEqual([]);
    expect(parse(ok.text, "ok.tcod", ok.badBytes).errors).toEqual([]);
    expect(fastParse(ok.text, "ok.tcod", ok.badBytes)).toBeDefined();
    // A bad byte makes the fast parser defer to the Chevrotain one, which reports it.
    expect(fastParse(source.text, "u.tcod", source.badBytes)).toBeUndefined();
    expect(fastParse('let a = "\uFFFD"\n', "b.tcod", [{ offset: 9, bytes: [0xff] }])).toBeUndefined();
  });

  it("a text not decoded from bytes (an editor's buffer, a --set value) refuses every U+FFFD, unnamed, as before", () => {
    const { errors } = parse('let z = "\uFFFD" // \uFFFD\nlet y\uFFFD = 1\n', "lsp.tcod");
    expect(errors.map(brief)).toEqual(["TC1008 1:10", "TC1008 1:16", "TC1008 2:6"]);
    expect(syntaxMessage(errors[0]!).message).toBe("Not valid UTF-8: U+FFFD here, the character that bytes which are not UTF-8 are read as.");
  });

  it("reports a NUL (U+0000) wherever it is: line, block and doc comment, string, code (TC1003; was: accepted inside a comment or string)", () => {
    const text = '/// doc \u0000\nlet a = "x\u0000y" // c\u0000\nlet b = 2 /* \u0000 */ \u0000\n';
    const { errors } = parse(text, "n.tcod");
    expect(errors.map(brief)).toEqual(["TC1003 1:9 char \u0000", "TC1003 2:11 char \u0000", "TC1003 2:19 char \u0000", "TC1003 3:14 char \u0000", "TC1003 3:19 char \u0000"]);
    // Reported once each, by the lexer, with the position of the NUL itself.
    expect(errors.map((e) => [e.kind, e.span.start.offset, e.span.end.offset])).toEqual([...text].flatMap((c, i) => (c === "\u0000" ? [["lexer", i, i + 1]] : [])));
  });

  it("reports every control character but whitespace wherever it is: line, block and doc comment, string, code (TC1003; were: accepted inside a comment or string)", () => {
    const text = '/// doc \u0001\nlet a = "x\u0007y" // c\u001b[2J\nlet b = 2 /* \u007f */ \u0008\n// C1: \u0085 \u009b\n';
    const { errors } = parse(text, "c.tcod");
    expect(errors.map(brief)).toEqual([
      "TC1003 1:9 char \u0001", "TC1003 2:11 char \u0007", "TC1003 2:19 char \u001b", "TC1003 3:14 char \u007f", "TC1003 3:19 char \u0008",
      "TC1003 4:8 char \u0085", "TC1003 4:10 char \u009b",
    ]);
    // Once each, by the lexer, at the character itself.
    expect(errors.map((e) => [e.kind, e.span.start.offset, e.span.end.offset])).toEqual(
      [...text].flatMap((c, i) => (/[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/.test(c) ? [["lexer", i, i + 1]] : [])));
    // Each of U+0001–U+0008, U+000E–U+001F and U+007F–U+009F, in a comment and in a string.
    for (let c = 1; c < 0xa0; c++) {
      if ((c >= 9 && c <= 13) || (c >= 0x20 && c < 0x7f)) continue;
      const ch = String.fromCharCode(c);
      expect(parse(`let a = 1 // ${ch}\n`, "c.tcod").errors.map(brief), `U+${c.toString(16)}`).toEqual([`TC1003 1:14 char ${ch}`]);
      expect(parse(`let a = "${ch}"\n`, "c.tcod").errors.map(brief), `U+${c.toString(16)}`).toEqual([`TC1003 1:10 char ${ch}`]);
    }
    // The whitespace of the language stays allowed everywhere: tab, line feed, carriage return,
    // vertical tab and form feed (a page break in a comment), and the byte-order mark.
    expect(parse('\uFEFF// a\tb \f c \v d\r\nlet a = "\t\f\v" /* \f\n\v */\n', "ws.tcod").errors).toEqual([]);
  });

  it("reports the bidi controls of Trojan Source wherever they are: comment, doc comment, string, code (TC1010; were: accepted inside a comment or string, TC1003 in code)", () => {
    // A RIGHT-TO-LEFT OVERRIDE, isolates and a POP DIRECTIONAL FORMATTING; an editor shows the line reordered.
    const text = 'let admin = false /*\u202e } \u2066if admin\u2069 \u2066 begin */\n/// \u202a\u202c\nlet s = "\u2067x\u2069" \u202d\n';
    const { errors } = parse(text, "b.tcod");
    const at = [...text].flatMap((c, i) => (/[\u202a-\u202e\u2066-\u2069]/.test(c) ? [i] : []));
    expect(at.length).toBe(9);
    expect(errors.map((e) => [e.code, e.kind, e.span.start.offset, e.span.end.offset, e.char])).toEqual(at.map((i) => ["TC1010", "lexer", i, i + 1, text[i]]));
    // Zero-width and other invisible characters that reorder nothing stay allowed in comments and strings.
    expect(parse('let a = "\u200b\u200d\u00ad" // \u200b \u200e \u2060\n', "z.tcod").errors).toEqual([]);
    // Right-to-left text itself is fine.
    expect(parse('let a = "\u05e9\u05dc\u05d5\u05dd" // \u0645\u0631\u062d\u0628\u0627\n', "rtl.tcod").errors).toEqual([]);
  });

  it("reports a UTF-16 or UTF-32 file once, at 1:1, with its encoding and nothing else (TC1009; was: one TC1003 per NUL and parse errors)", () => {
    const program = 'import { opd } from "std/loss"\nmodel m { path: "x" }\n';
    const utf16le = Buffer.from("\uFEFF" + program, "utf16le");
    const utf16be = Buffer.from(utf16le).swap16();
    const utf32 = (le: boolean) => {
      const b = Buffer.alloc(4 * (program.length + 1));
      ["\uFEFF", ...program].forEach((c, i) => (le ? b.writeUInt32LE(c.codePointAt(0)!, 4 * i) : b.writeUInt32BE(c.codePointAt(0)!, 4 * i)));
      return b;
    };
    const cases: [Buffer, string][] = [
      [utf16le, "UTF-16 (little-endian, with a byte-order mark)"], [utf16be, "UTF-16 (big-endian, with a byte-order mark)"],
      [utf16le.subarray(2), "UTF-16 (little-endian)"], [utf16be.subarray(2), "UTF-16 (big-endian)"],
      [utf32(true), "UTF-32 (little-endian, with a byte-order mark)"], [utf32(false), "UTF-32 (big-endian, with a byte-order mark)"],
      [utf32(true).subarray(4), "UTF-32 (little-endian)"], [utf32(false).subarray(4), "UTF-32 (big-endian)"],
    ];
    for (const [bytes, encoding] of cases) {
      // As readFileSync(p, "utf8") (the CLI) or an editor that guessed UTF-8 gives it.
      const { ast, errors } = parse(bytes.toString("utf8"), "w.tcod");
      expect(errors.map((e) => [e.kind, e.code, e.span.start.line, e.span.start.column, e.encoding]), encoding).toEqual([["lexer", "TC1009", 1, 1, encoding]]);
      expect(ast.decls).toEqual([]);
    }
    // A UTF-8 byte-order mark is fine.
    expect(parse("\uFEFF" + program, "bom.tcod").errors).toEqual([]);
  });

  it("reports invalid escapes (TC1006)", () => {
    const { errors } = parse(String.raw`let a = "x\qy\\ok\d"`, "e.tcod");
    expect(errors.map(brief)).toEqual([String.raw`TC1006 1:11 char \q`, String.raw`TC1006 1:18 char \d`]);
  });
});

describe("syntax errors and recovery", () => {
  it("reports three separate errors and keeps every other declaration", () => {
    const src = [
      'import { opd } from "std/loss"',
      "let a = 1 +",                      // 1: dangling operator
      "let b = 2",
      "model m { path: \"p\" serve: }",   // 2: missing value
      "fn f(x: number) = x * 2",
      "curriculum c {",
      "  steps: 250",
      "  horizon: f2b(every: k max: 3)",  // 3: missing comma
      "}",
      "sweep s product { a: [1, 2] }",
    ].join("\n");
    const { ast, errors } = parse(src, "three.tcod");
    expect(errors.map(brief)).toEqual([
      "TC1004 2:11 expected an expression after '+'",
      "TC1001 4:28 found '}' expected an expression",
      "TC1004 8:24 expected ','",
    ]);
    expect(ast.decls.map((d) => `${d.kind}${"name" in d ? ` ${d.name}` : ""}`)).toEqual([
      "import", "let a", "let b", "model m", "fn f", "curriculum c", "sweep s",
    ]);
    expect(sexpr(declNamed(ast.decls, "let", "a").value)).toBe("(+ 1 <error>)");
    expect(sexpr(declNamed(ast.decls, "fn", "f").body)).toBe("(* x 2)");
    const m = declNamed(ast.decls, "model", "m");
    expect(m.fields.map((f) => `${f.name}=${sexpr(f.value)}`)).toEqual(['path="p"', "serve=<error>"]);
    expect(declNamed(ast.decls, "curriculum", "c").fields.map((f) => `${f.name}=${sexpr(f.value)}`))
      .toEqual(["steps=250", "horizon=f2b(every: k, max: 3)"]);
  });

  it("says a '}' is missing before the next declaration, and keeps both (TC1004)", () => {
    const src = "curriculum a {\n  steps: 1\n\ncurriculum b = a with { steps: 2 }\n";
    const { ast, errors } = parse(src, "brace.tcod");
    expect(errors.map(brief)).toEqual(["TC1004 2:11 expected '}'"]);
    expect(errors[0]!.span.start.offset).toBe(errors[0]!.span.end.offset);
    expect(ast.decls.map((d) => ("name" in d ? d.name : ""))).toEqual(["a", "b"]);
  });

  it("does not let a dangling operator swallow the next field", () => {
    const src = "curriculum c {\n  batch: 16 tasks ×\n  horizon: 3 turns\n}";
    const { ast, errors } = parse(src, "dangle.tcod");
    expect(errors.map(brief)).toEqual(["TC1004 2:19 expected an expression after '×'"]);
    expect(textOf(src, errors[0]!.span)).toBe("×");
    const c = declNamed(ast.decls, "curriculum", "c");
    expect(c.fields.map((f) => `${f.name}=${sexpr(f.value)}`)).toEqual(["batch=(* 16tasks <error>)", "horizon=3turns"]);
  });

  it("pairs operands with their operators when one operand is missing", () => {
    const { ast, errors } = parse("let a = 1 + + 2", "pair.tcod");
    expect(errors.map(brief)).toEqual(["TC1004 1:11 expected an expression after '+'"]);
    expect(sexpr(declNamed(ast.decls, "let", "a").value)).toBe("(+ (+ 1 <error>) 2)");
  });

  it("skips junk between declarations with one error", () => {
    const { ast, errors } = parse("let a = 1\n) ) 42 \"x\"\nlet b = 2", "junk.tcod");
    expect(errors.map(brief)).toEqual(["TC1001 2:1 found ')' expected a declaration (import, let, fn, model, curriculum or sweep)"]);
    expect(ast.decls.map((d) => ("name" in d ? d.name : ""))).toEqual(["a", "b"]);
  });

  it("uses short, human expectations", () => {
    const cases: [string, string][] = [
      ["let = 1", "TC1004 1:4 expected a name"],
      ["model { }", "TC1004 1:6 expected a name"],
      ["curriculum c { : 1 }", "TC1001 1:16 found ':' expected '}'"],
      ["sweep s grid { }", "TC1001 1:9 found 'grid' expected 'product' or 'zip'"],
      ["fn f() : number", "TC1001 1:16 found end of file expected '=' or '{'"],
      ["let x = f(a: )", "TC1001 1:14 found ')' expected an expression"],
      ["let x = a.", "TC1004 1:11 expected a member name"],
      ["curriculum c {\n steps: 1\n", "TC1004 2:10 expected '}'"],
      ["let x = f(every: k max: 3)", "TC1004 1:19 expected ','"],
      ["let x = [1 2]", "TC1004 1:11 expected ','"],
      ["curriculum c { h: f(a: 1\n steps: 2 }", "TC1004 1:25 expected ')'"],
      ["import { a } \"std/x\"", "TC1004 1:13 expected 'from'"],
      ["return 1", "TC1001 1:1 found 'return' expected a declaration (import, let, fn, model, curriculum or sweep)"],
    ];
    for (const [src, expected] of cases) {
      const { errors } = parse(src, "short.tcod");
      expect(errors.map(brief)[0], src).toBe(expected);
      for (const e of errors) expect((e.expected ?? "").length).toBeLessThan(90);
    }
  });

  it("stops at pathological nesting with TC1007 instead of overflowing the stack", () => {
    const nested = (open: string, close: string, n: number) => `let x = ${open.repeat(n)}1${close.repeat(n)}`;
    expect(parse(nested("(", ")", MAX_NESTING), "ok.tcod").errors).toEqual([]);
    expect(parse(nested("f(", ")", MAX_NESTING), "ok.tcod").errors).toEqual([]);
    for (const [open, close] of [["(", ")"], ["[", "]"], ["f(", ")"], ["{a: ", "}"], ["- ", ""], ["not ", ""], ["if c then 1 else ", ""]] as const) {
      for (const n of [MAX_NESTING + 1, 5000]) {
        const src = `let a = 1\n${nested(open, close, n)}\nlet b = 2`;
        const { ast, errors } = parse(src, "deep.tcod");
        expect(errors.map((e) => e.code), `${open} × ${n}`).toEqual(["TC1007"]);
        expect(errors[0]!.limit).toBe(MAX_NESTING);
        expect(errors[0]!.span.start.line).toBe(2);
        expect(ast.decls.map((d) => ("name" in d ? d.name : ""))).toEqual(["a", "x"]);
      }
    }
    // Many ifs one after another are not nesting.
    const fields = Array.from({ length: 3 * MAX_NESTING }, (_, i) => `  f${i}: if c then ${i} else 0`).join("\n");
    expect(parse(`curriculum c {\n${fields}\n}`, "ifs.tcod").errors).toEqual([]);
    expect(parse(`let l = [${Array.from({ length: 100 }, () => "if c then (1) else 0").join(", ")}]`, "ifs.tcod").errors).toEqual([]);
  });

  it("never throws on degenerate input", () => {
    for (const src of ["", " ", "\n\n", "{", "}", "let", "\"", "/*", "×", "let x = ((((((((", "if then else"]) {
      const { ast, errors } = parse(src, "d.tcod");
      expect(Array.isArray(ast.decls)).toBe(true);
      if (src.trim() !== "") expect(errors.length, JSON.stringify(src)).toBeGreaterThan(0);
    }
  });
});

describe("catalogue agreement", () => {
  it("states the nesting limit that the guard enforces", async () => {
    // The grammar does not import the compiler; the test may, to keep the two in step.
    const { catalogue } = await import("../../compiler/diagnostics/catalogue.js");
    expect(catalogue.TC1007.message).toContain(`${MAX_NESTING} levels`);
    for (const code of ["TC1001", "TC1002", "TC1003", "TC1004", "TC1005", "TC1006", "TC1007", "TC1008", "TC1009", "TC1010"] as const) {
      expect(catalogue[code].name.length).toBeGreaterThan(0);
    }
  });
});
