/**
 * Binary operators are parsed as one flat chain and built into a tree by precedence (grammar/parser.ts
 * `binaryExpression`). Before, the grammar had one rule per precedence level, and Chevrotain's error
 * recovery depended on those rules: which tokens re-sync stops at, which rule keeps a partial result,
 * when a missing token is inserted. The parser reproduces that; these cases pin its diagnostics and
 * trees, each recorded from the grammar of one rule per level (chosen where a naive flat chain differed:
 * a second comparison or `..` in one group, an operator after one without its operand, a failure
 * inside an operand, a missing token before an operator the group no longer accepts).
 */
import { describe, expect, it } from "vitest";
import type { Expr } from "../../grammar/ast.js";
import { parse, parseExpression, type SyntaxErrorInfo } from "../../grammar/index.js";

/** Like helpers.ts `sexpr`, with numbers as written and errors with their offset (spans matter here). */
function tree(e: Expr): string {
  switch (e.kind) {
    case "binary": return `(${e.op} ${tree(e.left)} ${tree(e.right)})`;
    case "unary": return `(${e.op} ${tree(e.operand)})`;
    case "name": return e.name;
    case "number": return e.text;
    case "string": return JSON.stringify(e.value);
    case "bool": return String(e.value);
    case "call": return `${tree(e.callee)}(${e.args.map((a) => (a.name ? `${a.name}: ` : "") + tree(a.value)).join(", ")})`;
    case "member": return `${tree(e.object)}.${e.property}`;
    case "list": return `[${e.items.map(tree).join(", ")}]`;
    case "record": return `{${e.fields.map((f) => `${f.name}: ${tree(f.value)}`).join(", ")}}`;
    case "if": return `(if ${tree(e.cond)} ${tree(e.then)} ${tree(e.else)})`;
    case "error": return `error@${e.span.start.offset}`;
  }
}
const errorsOf = (errors: SyntaxErrorInfo[]) =>
  errors.map((e) => `${e.code}@${e.span.start.offset} ${e.expected ?? ""}${e.found ? ` (found ${e.found})` : ""}`);

const expressions = [
  { text: "a == ( >= h( .. b", errors: ["TC1001@7 an expression (found '>=')", "TC1004@12 ')'"], tree: "(== a (.. error@5() b))" },
  { text: "[ >= { / ( >= (b", errors: ["TC1004@1 ']'", "TC1004@6 '}'", "TC1001@11 an expression (found '>=')", "TC1004@16 ')'"], tree: "(>= [] (/ {} error@9(b)))" },
  { text: "a < b < c", errors: ["TC1001@6 end of input (found '<')"], tree: "(< a b)" },
  { text: "a .. b .. c", errors: ["TC1001@7 end of input (found '..')"], tree: "(.. a b)" },
  { text: "a .. b < c .. d", errors: [], tree: "(< (.. a b) (.. c d))" },
  { text: "a < b .. c < d", errors: ["TC1001@11 end of input (found '<')"], tree: "(< a (.. b c))" },
  { text: "1 + 2 * 3 - 4 / 5 .. 6 + 7 < 8 and not x or y == -z", errors: [], tree: "(or (and (< (.. (- (+ 1 (* 2 3)) (/ 4 5)) (+ 6 7)) 8) (not x)) (== y (- z)))" },
  { text: "a * (] + b", errors: ["TC1001@5 an expression (found ']')"], tree: "(+ (* a error@4) b)" },
  { text: "a + f(x ] * b < c", errors: ["TC1001@8 ')' (found ']')"], tree: "(< (+ a (* f(x) b)) c)" },
];

const files = [
  {
    text: "curriculum c {\n  horizon: f(x) : ( and f(x >= f(x == a. == (\n  steps: 10\n}\n",
    errors: ["TC1001@31 '}' (found ':')", "TC1004@40 ':'", "TC1001@56 a member name (found '==')", "TC1001@68 ')' (found ':')"],
    tree: "horizon=f(x); f=(== (>= x f((== x error@53))) steps)",
  },
  {
    text: "model m { a: f(x * ] : -a == [ >= a. }\nlet q = if f(x * ] : -a == [ >= a. then 1 else 2\n",
    errors: ["TC1004@17 an expression after '*'", "TC1001@19 ')' (found ']')", "TC1001@31 ']' (found '>=')", "TC1001@35 ':' (found '.')", "TC1004@54 an expression after '*'", "TC1001@56 ')' (found ']')", "TC1001@68 ']' (found '>=')", "TC1004@78 'then'"],
    tree: "a=(== (- f((* x error@18)) a) []); a=error@35; (if (== (- f((* x error@55)) a) [].then) 1 2)",
  },
  {
    text: "curriculum c {\n  temperature: 0.5 +\n* feedback.kl\n  steps: 30\n}\n",
    errors: ["TC1004@34 an expression after '+'", "TC1001@36 '}' (found '*')", "TC1001@46 ':' (found '.')", "TC1004@49 ':'", "TC1001@57 '}' (found ':')"],
    tree: "temperature=(+ 0.5 error@35); feedback=error@46; kl=steps",
  },
  { text: "curriculum c {\n  batch: 16 tasks ×\n  horizon: 3 turns\n}\n", errors: ["TC1004@33 an expression after '×'"], tree: "batch=(* 16 tasks error@34); horizon=3 turns" },
  {
    text: "let x = a. < 1  -a / ( != (c) >= }\nlet y = 2\n",
    errors: ["TC1004@10 a member name", "TC1001@23 an expression (found '!=')", "TC1001@30 a declaration (import, let, fn, model, curriculum or sweep) (found '>=')"],
    tree: "(< error@8 (- 1 (/ a error@21(c)))); 2",
  },
];

describe("operator chains: diagnostics and trees as with one rule per precedence level", () => {
  it.each(expressions)("$text", ({ text, errors, tree: expected }) => {
    const r = parseExpression(text, "x");
    expect(errorsOf(r.errors)).toEqual(errors);
    expect(tree(r.expr)).toBe(expected);
  });

  it.each(files)("$text", ({ text, errors, tree: expected }) => {
    const r = parse(text, "x");
    expect(errorsOf(r.errors)).toEqual(errors);
    const values = r.ast.decls.flatMap((d) =>
      d.kind === "let" ? [tree(d.value)] : d.kind === "curriculum" || d.kind === "model" ? d.fields.map((f) => `${f.name}=${tree(f.value)}`) : []);
    expect(values.join("; ")).toBe(expected);
  });

  it("builds a chain of 100,000 terms without deep recursion", () => {
    const r = parseExpression(Array.from({ length: 100_000 }, (_, i) => (i % 3 === 0 ? "a" : i % 3 === 1 ? "2 steps" : "b")).join(" + "), "x");
    expect(r.errors).toEqual([]);
    let depth = 0;
    for (let e: Expr = r.expr; e.kind === "binary"; e = e.left) depth++;
    expect(depth).toBe(99_999);
  });
});
