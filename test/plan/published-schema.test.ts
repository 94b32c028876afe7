/**
 * docs/plan.schema.json carries the rules the plan loader enforces that JSON Schema can state: the
 * plan name's rule, the bundle's file name, and the ranges of plan/ranges.ts. No JSON Schema validator
 * is a dependency, so each rule of the published file is read by hand and held against parsePlan on
 * hand-written bad plans: the schema refuses what the loader refuses, and takes what it takes.
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePlan, PlanError, planNameIssue } from "../../plan/schema.js";

const ROOT = join(import.meta.dirname, "../..");
interface S { type?: string; pattern?: string; properties?: Record<string, S>; items?: S; prefixItems?: S[]; oneOf?: S[]; anyOf?: S[]; const?: unknown; minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number }
const SCHEMA = JSON.parse(readFileSync(join(ROOT, "docs/plan.schema.json"), "utf8")) as S;
const PLAN = JSON.parse(readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json"), "utf8")) as Record<string, unknown>;

/** The problems parsePlan finds in the fixture plan after `edit` (none: it loads). */
function loaderIssues(edit: (p: any) => void): { path: string }[] {
  const p = structuredClone(PLAN);
  edit(p);
  try { parsePlan(p); return []; } catch (e) { if (e instanceof PlanError) return e.issues; throw e; }
}

/** Whether a number schema takes `v` (its bounds; the other keywords are not at issue here). */
const numberTakes = (s: S, v: number) =>
  (s.minimum === undefined || v >= s.minimum) && (s.exclusiveMinimum === undefined || v > s.exclusiveMinimum)
  && (s.maximum === undefined || v <= s.maximum) && (s.exclusiveMaximum === undefined || v < s.exclusiveMaximum);

const nodeParams = (kind: string): S => SCHEMA.properties!.graph!.properties!.nodes!.items!.oneOf!.find((n) => n.properties!.kind!.const === kind)!.properties!.params!;
const numberOf = (s: S): S => (s.anyOf ?? [s]).find((b) => b.type === "number")!;
const nodeIndex = (kind: string) => (PLAN as any).graph.nodes.findIndex((n: { kind: string }) => n.kind === kind) as number;

describe("the plan's name in docs/plan.schema.json", () => {
  const pattern = new RegExp(SCHEMA.properties!.name!.pattern!, "u");
  it.each(["", "   ", "a\u0001b", "x\ny", "tab\there", "del\u007f", "c1\u0085", "abc\u202Eexe", "\u2066x"])("%j: refused by the schema, as by the loader (was: the schema took any string)", (name) => {
    expect(pattern.test(name)).toBe(false);
    expect(loaderIssues((p) => { p.name = name; })).toEqual([expect.objectContaining({ path: "$.name" })]);
  });
  it.each(["texthouse_f2b", "small@k=2steps", 'c@nm="x/y"', " padded ", "学习", "-x"])("%j: taken by both", (name) => {
    expect(pattern.test(name)).toBe(true);
    expect(loaderIssues((p) => { p.name = name; })).toEqual([]);
  });
  it("agrees with planNameIssue on any string", () => {
    const chars = fc.constantFrom("a", " ", "\t", "\u00a0", "\u0001", "\u007f", "\u0085", "\u202a", "\u2069", "\u3000", "\ufeff", "é", "/");
    fc.assert(fc.property(fc.array(chars, { maxLength: 6 }).map((a) => a.join("")), (name) => {
      expect(pattern.test(name)).toBe(planNameIssue(name) === undefined);
    }), { numRuns: 2000 });
  });
});

describe("the bundle's file name in docs/plan.schema.json", () => {
  const pattern = new RegExp(SCHEMA.properties!.extensions!.properties!.bundle!.pattern!, "u");
  const withBundle = (bundle: string) => loaderIssues((p) => { p.extensions = { bundle, functions: {} }; });
  it.each(["../x.plan.bundle.mjs", "/tmp/x.plan.bundle.mjs", "a/b.plan.bundle.mjs", "a\u0000.plan.bundle.mjs", "..", ".x.plan.bundle.mjs", "X.PLAN.BUNDLE.MJS"])("%j: refused by both", (b) => {
    expect(pattern.test(b)).toBe(false);
    expect(withBundle(b)).toEqual([expect.objectContaining({ path: "$.extensions.bundle" })]);
  });
  it("the compiler's names: taken by both", () => {
    expect(pattern.test("small@k=2steps.plan.bundle.mjs")).toBe(true);
    expect(withBundle("small@k=2steps.plan.bundle.mjs")).toEqual([]);
  });
});

describe("the ranges of plan/ranges.ts in docs/plan.schema.json (was: none; a plan the schema took failed to load)", () => {
  it.each([
    ["Update", "optimizer.lr", 0, 1e-3],
    ["Update", "optimizer.lr", 11, 10],
    ["Update", "optimizer.eps", 0, 1e-8],
    ["Update", "optimizer.weightDecay", 1.5, 1],
    ["Update", "clip", -0.2, 0.2],
    ["Rollout", "temperature", 2.5, 2],
    ["Rollout", "temperature", -1, 0],
  ] as const)("%s %s = %d: refused by both; %d taken by both", (kind, field, bad, good) => {
    let s = nodeParams(kind);
    for (const k of field.split(".")) s = s.properties![k]!;
    const num = numberOf(s);
    expect(numberTakes(num, bad)).toBe(false);
    expect(numberTakes(num, good)).toBe(true);
    const set = (v: number) => (p: any) => {
      let o = p.graph.nodes[nodeIndex(kind)].params;
      const keys = field.split(".");
      for (const k of keys.slice(0, -1)) o = o[k];
      o[keys[keys.length - 1]!] = v;
    };
    expect(loaderIssues(set(bad))).toEqual([expect.objectContaining({ path: `$.graph.nodes[${nodeIndex(kind)}].params.${field}` })]);
    expect(loaderIssues(set(good))).toEqual([]);
  });

  it("Adam's betas: each in [0, 1)", () => {
    const betas = nodeParams("Update").properties!.optimizer!.properties!.betas!.prefixItems!;
    for (const b of betas) expect([numberTakes(b, 1), numberTakes(b, 0.999), numberTakes(b, -0.1)]).toEqual([false, true, false]);
    expect(loaderIssues((p) => { p.graph.nodes[nodeIndex("Update")].params.optimizer.betas = [0.9, 1]; }))
      .toEqual([expect.objectContaining({ path: `$.graph.nodes[${nodeIndex("Update")}].params.optimizer.betas[1]` })]);
  });

  it("a gkd term's beta and a progressive blend weight: in [0, 1], on the right branch only", () => {
    const terms = nodeParams("Advantage").properties!.terms!.items!.oneOf!;
    const gkd = numberOf(terms.find((t) => t.properties!.kind!.const === "gkd")!.properties!.beta!);
    expect([numberTakes(gkd, 1.5), numberTakes(gkd, 0.5)]).toEqual([false, true]);
    const sft = terms.find((t) => t.properties!.kind!.const === "sft")!.properties!.coef!;
    expect(numberTakes(numberOf(sft), 1.5)).toBe(true);
    const aggregate = nodeParams("Advantage").properties!.aggregate!;
    const progressive = (aggregate.oneOf ?? aggregate.anyOf)!.find((a) => a.properties!.kind!.const === "progressive")!;
    expect(numberTakes(numberOf(progressive.properties!.weight!), 1.01)).toBe(false);
  });
});
