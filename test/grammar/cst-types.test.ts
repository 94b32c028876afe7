import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cstTypesSource } from "../../grammar/cst-types-source.js";
import { lexTcod } from "../../grammar/lexer.js";
import { tcodParser } from "../../grammar/parser.js";

describe("grammar/cst.ts", () => {
  it("is the CST types of the current grammar (regenerate with `npm run docs`)", () => {
    expect(readFileSync(new URL("../../grammar/cst.ts", import.meta.url), "utf8")).toBe(cstTypesSource());
  });

  it("names every key a parse produces, for every rule (no child outside the generated types)", () => {
    const text = cstTypesSource();
    const keysOf = (rule: string) => {
      const T = rule[0]!.toUpperCase() + rule.slice(1);
      const body = new RegExp(`export type ${T}CstChildren = \\{([^}]*)\\}`).exec(text)?.[1] ?? "";
      return new Set([...body.matchAll(/^\s+(\w+)\?:/gm)].map((m) => m[1]!));
    };
    const src = `import { a as b } from "x"
export let k: list<turns> = [1 turn, 2 turns]
fn f(x: per_turn<number> = 1, y: tasks×rollouts) = if not x < 2 then -x else f(x: 1).y + a.b
fn g() { let z = 1 .. 2; return z * 3 / 4 - 5 % + 6 steps }
model m { path: "p" }
curriculum c { batch: 16 tasks × 8 rollouts, loss: { a: 1 } }
curriculum d = c with { steps: 3 }
sweep s product { c.steps: [1, 2] }`;
    tcodParser.load(lexTcod(src).tokens);
    const cst = tcodParser.sourceFile();
    expect(tcodParser.errors.map((e) => e.message)).toEqual([]);
    const seen = new Set<string>();
    const walk = (n: { name: string; children: Record<string, unknown[]> }) => {
      seen.add(n.name);
      const allowed = keysOf(n.name);
      for (const [k, v] of Object.entries(n.children)) {
        expect(allowed.has(k), `${n.name}.${k}`).toBe(true);
        for (const c of v) if (c && typeof c === "object" && "children" in c) walk(c as never);
      }
    };
    walk(cst as never);
    expect(seen.size).toBeGreaterThan(30);
  });
});
