import { describe, expect, it } from "vitest";
import { parseExpression } from "../../grammar/index.js";
import { parseExpr, sexpr } from "./helpers.js";

describe("parseExpression: the grammar's expression rule as an entry point", () => {
  it.each([
    "1 + 2 * 3", "a .. b < c", "if a then b else c + 1", "f(x, y: 2 steps).z", "[1, 2, 3]", "{ a: 1, b: \"x\" }",
    "16 tasks × 8 rollouts", "-f(x).y", "not a and b",
  ])("%s parses as it does inside a declaration", (src) => {
    const { expr, errors } = parseExpression(src, "value");
    expect(errors).toEqual([]);
    expect(sexpr(expr)).toBe(sexpr(parseExpr(src).value));
  });

  it("gives spans as offsets into the text it was given (a blanked prefix keeps the columns)", () => {
    const { expr, errors } = parseExpression("          3 turns", "setting");
    expect(errors).toEqual([]);
    expect(expr.span.start).toEqual({ offset: 10, line: 1, column: 11 });
    expect(expr.span.end.offset).toBe(17);
  });

  it("refuses what follows the expression (TC1001 at the first extra token)", () => {
    const { errors } = parseExpression("3 turns )", "setting");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "TC1001", found: "')'", expected: "end of input" });
    expect(errors[0]!.span.start.offset).toBe(8);
  });

  it("reports a missing closer at the end (TC1004) and still returns an expression", () => {
    const { expr, errors } = parseExpression("f(1", "setting");
    expect(errors.map((e) => e.code)).toEqual(["TC1004"]);
    expect(expr.kind).toBe("call");
  });

  it("returns an error expression for empty input, with a syntax error", () => {
    const { expr, errors } = parseExpression("", "setting");
    expect(expr.kind).toBe("error");
    expect(errors.length).toBeGreaterThan(0);
  });

  it("leaves the parser usable for whole files afterwards (the singleton is reset per parse)", () => {
    parseExpression("1 + ", "setting");
    expect(parseExpression("2 * 3", "setting").errors).toEqual([]);
  });
});
