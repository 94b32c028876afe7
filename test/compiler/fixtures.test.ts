/**
 * Baseline fixtures: test/fixtures/<group>/<case>/input.tcod (+ optional args.json {overrides, curriculum})
 * compiles to the expected plan(s) (plan.json, or plans.json for several) or diagnostics (diagnostics.txt),
 * byte for byte. `npm run test:update` rewrites the expectations; review the diff like code.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render } from "../../compiler/index.js";
import { CODES_WITHOUT_FIXTURE, fixtureExamples } from "../../compiler/docs.js";
import { catalogue, type Code } from "../../compiler/diagnostics/catalogue.js";
import { parsePlan, stringifyPlan } from "../../plan/schema.js";

const ROOT = join(import.meta.dirname, "..", "fixtures");
const UPDATE = process.env.UPDATE_BASELINES === "1";

function cases(): string[] {
  const out: string[] = [];
  for (const group of readdirSync(ROOT).sort()) {
    const g = join(ROOT, group);
    if (!statSync(g).isDirectory()) continue;
    for (const c of readdirSync(g).sort()) if (existsSync(join(g, c, "input.tcod"))) out.push(join(group, c));
  }
  return out;
}

function actual(dir: string): Record<string, string> {
  const argsPath = join(dir, "args.json");
  const args = existsSync(argsPath) ? (JSON.parse(readFileSync(argsPath, "utf8")) as { overrides?: string[]; curriculum?: string }) : {};
  const r = compileFile(join(dir, "input.tcod"), args);
  if (r.diagnostics.length) {
    return { "diagnostics.txt": r.diagnostics.map((d) => render(d, (f) => r.sources.get(f))).join("\n\n") + "\n" };
  }
  for (const p of r.plans) parsePlan(p.plan);
  if (r.plans.length === 1) return { "plan.json": stringifyPlan(r.plans[0]!.plan) };
  return { "plans.json": r.plans.map((p) => stringifyPlan(p.plan)).join("") };
}

describe("every diagnostic code has a fixture", () => {
  it("each catalogue code is produced by at least one fixture (its first is the example in docs/diagnostics.md)", () => {
    const examples = fixtureExamples(ROOT);
    const missing = (Object.keys(catalogue) as Code[]).filter((c) => !examples.has(c) && !CODES_WITHOUT_FIXTURE.includes(c));
    expect(missing).toEqual([]);
  });
});

describe("compiler fixtures", () => {
  for (const c of cases()) {
    it(c, () => {
      const dir = join(ROOT, c);
      const got = actual(dir);
      const kinds = ["diagnostics.txt", "plan.json", "plans.json"];
      if (UPDATE) {
        for (const k of kinds) if (!(k in got) && existsSync(join(dir, k))) rmSync(join(dir, k));
        for (const [k, v] of Object.entries(got)) writeFileSync(join(dir, k), v);
        return;
      }
      const expectedFiles = kinds.filter((k) => existsSync(join(dir, k)));
      expect(expectedFiles, `${c}: expected one of ${kinds.join(", ")} (run npm run test:update)`).toEqual(Object.keys(got));
      for (const [k, v] of Object.entries(got)) expect(v).toBe(readFileSync(join(dir, k), "utf8"));
    });
  }
});
