/**
 * `tcod fmt`: on every example, stdlib module and fixture, and on generated programs, formatting is
 * idempotent, keeps every comment, and gives a file with the same AST; the layout rules on small
 * cases; files with syntax errors are refused with their parse errors.
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tcodCorpus, tcodFiles } from "../helpers/corpus.js";
import { parse } from "../../grammar/index.js";
import { lexTcod } from "../../grammar/lexer.js";
import { format, sameDecls } from "../../formatter/index.js";



/** Every comment of a text, verbatim up to trailing spaces, in order. */
const commentsOf = (text: string) => {
  const l = lexTcod(text);
  return [...l.comments, ...l.docs].sort((a, b) => a.startOffset - b.startOffset).map((c) => c.image.replace(/[ \t]+$/gm, ""));
};

function fmt(text: string): string {
  const r = format(text, "t.tcod");
  if (!r.ok) throw new Error(`syntax errors: ${JSON.stringify(r.errors.map((e) => e.code))}\n${text}`);
  return r.text;
}

/** The properties every formatted file has. */
function checkFormatting(text: string, name: string): void {
  const out = fmt(text);
  expect(fmt(out), `${name}: idempotent`).toBe(out);
  expect(sameDecls(parse(text, "t.tcod").ast.decls, parse(out, "t.tcod").ast.decls), `${name}: same AST`).toBe(true);
  expect(commentsOf(out), `${name}: comments kept`).toEqual(commentsOf(text));
  expect(out === "" || (out.endsWith("\n") && !out.endsWith("\n\n")), `${name}: one final newline`).toBe(true);
  expect(out.split("\n").filter((l) => / $/.test(l)), `${name}: no trailing spaces`).toEqual([]);
}

describe("tcod fmt on the repository's files", () => {
  const files = tcodCorpus();

  it("formats every example, stdlib module and fixture idempotently, with the same AST and comments", () => {
    let formatted = 0;
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      const errors = parse(text, f).errors;
      if (errors.length > 0) {
        // Refused, with exactly the parse errors.
        const r = format(text, f);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.errors).toEqual(errors);
        continue;
      }
      // The limit fixtures nest past any stack on purpose: refused (TC2022 from `tcod fmt`), never a crash.
      const r = format(text, f);
      if (!r.ok && r.tooDeep && f.includes("/test/fixtures/limits/")) continue;
      checkFormatting(text, f);
      formatted++;
    }
    expect(formatted).toBeGreaterThan(40);
  });
});

describe("the layout", () => {
  const cases: [string, string, string][] = [
    ["fields one per line, one space after ':'", "model m { path: \"x\"  serve:   embedded() }", "model m {\n  path: \"x\"\n  serve: embedded()\n}\n"],
    ["empty bodies", "curriculum b = a with {}", "curriculum b = a with {}\n"],
    ["only the parentheses precedence needs", "let x = ((1 + 2)) * (3 * 4) - (5 - 6) / ((-7))", "let x = (1 + 2) * (3 * 4) - (5 - 6) / -7\n"],
    ["left-associative chains keep their grouping", "let x = a - (b - c) + (d + e)", "let x = a - (b - c) + (d + e)\n"],
    ["comparisons and ranges do not chain", "let x = (a < b) == c\nlet y = (0 .. 1) .. 2", "let x = (a < b) == c\nlet y = (0 .. 1) .. 2\n"],
    ["if inside an operator is parenthesized", "let x = 1 + (if a then b else c)\nlet y = if a then b else c + 1", "let x = 1 + (if a then b else c)\nlet y = if a then b else c + 1\n"],
    ["unary operators", "let x = not (a and b)\nlet y = - (1 + 2)\nlet z = -(-x)", "let x = not (a and b)\nlet y = -(1 + 2)\nlet z = --x\n"],
    ["numbers and units as written, one space before a unit word, none before %", "let a = 16tasks × 1  rollout\nlet b = 50 %\nlet c = 1e-6", "let a = 16 tasks × 1 rollout\nlet b = 50%\nlet c = 1e-6\n"],
    ["strings keep their escapes", 'let s = "a\\"b\\n"', 'let s = "a\\"b\\n"\n'],
    ["types", "fn f(a : list< turns >, b: tasks*rollouts) : per_turn<number> = a", "fn f(a: list<turns>, b: tasks*rollouts): per_turn<number> = a\n"],
    ["a block body without lets is an expression body", "fn f() { return 1 }", "fn f() = 1\n"],
    ["block bodies", "fn f(x: number) {\n let y = x * 2\n\n\n return y + 1 }", "fn f(x: number) {\n  let y = x * 2\n\n  return y + 1\n}\n"],
    ["imports", "import {a,b as c,} from \"std/x\"", "import { a, b as c } from \"std/x\"\n"],
    ["records inline and broken", "let r = {a: 1, b: 2}", "let r = { a: 1, b: 2 }\n"],
    ["sweeps", "sweep s zip { k: [1,2]  c.steps: [3, 4,] }", "sweep s zip {\n  k: [1, 2]\n  c.steps: [3, 4]\n}\n"],
    ["blank lines between declarations: at most one, kept", "let a = 1\n\n\n\nlet b = 2\nlet c = 3\n", "let a = 1\n\nlet b = 2\nlet c = 3\n"],
    ["comments stay where they are", "// head\n\n/// doc\nlet a = 1 // trailing\nmodel m {\n  // inside\n  path: \"p\"   /* after */\n  // last\n}\n", "// head\n\n/// doc\nlet a = 1  // trailing\nmodel m {\n  // inside\n  path: \"p\"  /* after */\n  // last\n}\n"],
    ["a comment between a number and its unit moves out of the literal, once", "let k = 2 /* a */ steps\ncurriculum c { steps: 5 /* b */ steps }", "let k = 2 steps\n/* a */\ncurriculum c {\n  steps: 5 steps\n  /* b */\n}\n"],
    ["a comment inside a type moves out of it, once", "let k: list< /* a */ turns> = 1\nfn f(x: tasks /* b */ × rollouts) = x", "let k: list<turns> = 1\n/* a */\nfn f(\n  x: tasks×rollouts,\n  /* b */\n) =\n  x\n"],
    ["a line comment inside arguments breaks them", "let x = f(a, // why\n b)", "let x = f(\n  a, // why\n  b,\n)\n"],
    [
      "long calls break one argument per line with a trailing comma",
      "curriculum c { eval: evaluate(every: 20 steps, env: texthouse(split: \"valid_seen\", agent: listed_format()), tasks: 32 tasks, temperature: 1.0) }",
      "curriculum c {\n  eval: evaluate(\n    every: 20 steps,\n    env: texthouse(split: \"valid_seen\", agent: listed_format()),\n    tasks: 32 tasks,\n    temperature: 1.0,\n  )\n}\n",
    ],
    [
      "a long function body breaks after '='",
      "export fn f2b(start: turns = 1 turn, every: steps, max: turns, by: turns = 1 turn) : turns = min(start + floor(step / every) * by, max)",
      "export fn f2b(start: turns = 1 turn, every: steps, max: turns, by: turns = 1 turn): turns =\n  min(start + floor(step / every) * by, max)\n",
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      expect(fmt(input)).toBe(expected);
      checkFormatting(input, name);
    });
  }

  it("refuses a file with syntax errors, returning the parse errors", () => {
    const text = "let x = (1 +\ncurriculum c { steps: }";
    const r = format(text, "bad.tcod");
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toEqual(parse(text, "bad.tcod").errors);
      expect(r.errors.map((e) => e.code)).toContain("TC1004");
    }
  });
});

// ---- generated programs ----------------------------------------------------------------------------

const names = fc.constantFrom("x", "y", "step", "total_steps", "foo_1", "lr", "from");
const sp = fc.constantFrom(" ", "", "  ");
/** A gap between two tokens: spaces, or a comment there. */
const gap = fc.constantFrom(" ", " /* g */ ", " // g\n");
const nl = fc.constantFrom("\n", "\n\n", "\n\n\n", " // note\n", "\n/* block */\n", "\n/// doc\n");

/** An expression as text, and whether it binds loosely (so operands need parentheses around it). */
interface E { text: string; loose: boolean }
const wrap = (e: E, force: boolean, coin: boolean): string => (force || coin ? `(${e.text})` : e.text);

const { expr } = fc.letrec<{ expr: E }>((tie) => ({
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom("3", "2.5 turns", "16tasks", "1e-3", "50%", "0", "1 step", "64 tokens").map((text) => ({ text, loose: false })),
    // A comment between a number and its unit is inside the literal's text: printed once, not kept there too.
    fc.constantFrom("2 /* c */ steps", "50 /* c */ %", "3 // c\n turns", "16/**/tasks").map((text) => ({ text, loose: false })),
    fc.constantFrom('"a"', '"s\\"q\\n"', "true", "false").map((text) => ({ text, loose: false })),
    names.map((text) => ({ text, loose: false })),
    fc.tuple(names, fc.constantFrom("start", "kl", "in", "model"), fc.constantFrom("", " /* g */ ")).map(([a, b, g]) => ({ text: `${a}${g}.${b}`, loose: false })),
    fc.tuple(names, fc.array(fc.tuple(fc.option(fc.constantFrom("every", "max", "from", "model"), { nil: undefined }), tie("expr") as fc.Arbitrary<E>), { maxLength: 4 }), sp, fc.boolean())
      .map(([f, args, s, trailing]) => ({ text: `${f}(${args.map(([n, e]) => (n ? `${n}:${s}${e.text}` : e.text)).join(`,${s}`)}${trailing && args.length ? "," : ""})`, loose: false })),
    fc.tuple(names, tie("expr") as fc.Arbitrary<E>, gap, gap).map(([f, e, g1, g2]) => ({ text: `${f}(${g1}${e.text}${g2})`, loose: false })),
    fc.array(tie("expr") as fc.Arbitrary<E>, { maxLength: 4 }).map((items) => ({ text: `[${items.map((i) => i.text).join(", ")}]`, loose: false })),
    fc.array(fc.tuple(fc.constantFrom("a", "b", "model"), tie("expr") as fc.Arbitrary<E>), { maxLength: 3 })
      .map((fs) => ({ text: `{${fs.map(([n, e]) => `${n}: ${e.text}`).join(", ")}}`, loose: false })),
    fc.tuple(tie("expr") as fc.Arbitrary<E>, fc.constantFrom("+", "-", "*", "×", "/", "and", "or", "<", "==", ".."), tie("expr") as fc.Arbitrary<E>, fc.boolean(), fc.boolean(), sp, gap)
      .map(([l, op, r, c1, c2, s, g]) => {
        const nonChaining = ["<", "==", ".."].includes(op);
        const text = `${wrap(l, l.loose && nonChaining, c1)}${s} ${op}${g}${wrap(r, r.loose && nonChaining, c2)}`;
        return { text, loose: true };
      }),
    fc.tuple(fc.constantFrom("-", "not "), tie("expr") as fc.Arbitrary<E>, fc.boolean()).map(([op, e, c]) => ({ text: `${op}${wrap(e, e.loose, c)}`, loose: false })),
    fc.tuple(tie("expr") as fc.Arbitrary<E>, tie("expr") as fc.Arbitrary<E>, tie("expr") as fc.Arbitrary<E>)
      .map(([a, b, c]) => ({ text: `(if ${a.text} then ${b.text} else ${c.text})`, loose: false })),
    fc.tuple(tie("expr") as fc.Arbitrary<E>, fc.constantFrom("", "/* c */ ")).map(([e, c]) => ({ text: `(${c}${e.text})`, loose: false })),
  ),
}));

const field = fc.tuple(fc.constantFrom("steps", "horizon", "loss", "model", "batch"), expr, fc.constantFrom("", ",", "  // why")).map(([n, e, t]) => `${n}: ${e.text}${t}`);
const decl = fc.oneof(
  fc.tuple(fc.boolean(), names, expr).map(([x, n, e]) => `${x ? "export " : ""}let ${n} = ${e.text}`),
  fc.tuple(names, fc.array(fc.tuple(names, fc.option(fc.constantFrom("steps", "list<turns>", "tasks×rollouts", "tasks /* g */ × rollouts", "list< /* g */ turns>", "steps // g\n/ turns"), { nil: undefined })), { maxLength: 3 }), expr, fc.array(fc.tuple(names, expr), { maxLength: 2 }))
    .map(([n, ps, body, lets]) => {
      const params = ps.map(([p, t]) => (t ? `${p}: ${t}` : p)).join(", ");
      return lets.length ? `fn ${n}(${params}) {\n${lets.map(([l, e]) => `  let ${l} = ${e.text}`).join("\n")}\n  return ${body.text}\n}` : `fn ${n}(${params}) = ${body.text}`;
    }),
  fc.tuple(fc.constantFrom("model", "curriculum"), names, fc.array(fc.tuple(field, nl), { maxLength: 5 }))
    .map(([k, n, fs]) => `${k} c_${n} {\n${fs.map(([f, s]) => `  ${f}${s}`).join("")}}`),
  fc.tuple(names, fc.array(fc.tuple(field, nl), { maxLength: 3 })).map(([n, fs]) => `curriculum d_${n} = base with {${fs.map(([f, s]) => `${f}${s}`).join("")}}`),
  fc.tuple(fc.constantFrom("std/tcod", "./x.tcod"), fc.array(names, { minLength: 1, maxLength: 3 })).map(([p, ns]) => `import { ${ns.join(", ")} } from "${p}"`),
);
const program = fc.array(fc.tuple(decl, nl), { maxLength: 6 }).map((ds) => ds.map(([d, s]) => d + s).join(""));

describe("tcod fmt on generated programs", () => {
  it("is idempotent, keeps the AST and every comment", () => {
    fc.assert(fc.property(program, (text) => {
      fc.pre(parse(text, "t.tcod").errors.length === 0);
      checkFormatting(text, "generated");
    }), { numRuns: 300 });
  });
});

describe("the repository's own .tcod files are canonical", () => {
  it("`tcod fmt --check examples stdlib` finds nothing to change", () => {
    const unformatted = [...tcodFiles(join(ROOT, "examples")), ...tcodFiles(join(ROOT, "stdlib"))]
      .filter((f) => { const r = format(readFileSync(f, "utf8"), f); return !r.ok || r.changed; })
      .map((f) => f.slice(ROOT.length + 1));
    expect(unformatted, "run: npx tcod fmt examples stdlib").toEqual([]);
  });
});
