/**
 * The one table of field ranges (plan/ranges.ts) and its three users agree: for every entry, the
 * compiler accepts a value just inside each bound and refuses one just outside (TC4001) — as a
 * constant and, for fields that may be schedules, as a schedule that reaches it at the last step —
 * and a plan .json holding the value just outside does not load (TC7001, naming the JSON path).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { parsePlan, PlanError, type Plan, type PlanNode } from "../../plan/schema.js";
import { PLAN_RANGES, planRangeIssues, prefixRange, type NumRange } from "../../plan/ranges.js";

const dir = mkdtempSync(join(tmpdir(), "tcod-ranges-"));
writeFileSync(join(dir, "package.json"), "{}");
let n = 0;
function compile(fields: string) {
  const file = join(dir, `f${n++}.tcod`);
  writeFileSync(file, `import { texthouse } from "std/envs"
import { opd, gkd } from "std/loss"
model m { path: "loglinear"  serve: embedded() }
curriculum c { teacher: m  student: m  env: texthouse()  steps: 20  max_turns: 10 turns
  ${fields}
}
`);
  const r = compileFile(file);
  return { r, codes: r.diagnostics.filter((d) => d.severity === "error").map((d) => d.code), text: r.diagnostics.map((d) => d.message).join("\n") };
}

const node = <K extends PlanNode["kind"]>(p: Plan, kind: K) => p.graph.nodes.find((x) => x.kind === kind) as Extract<PlanNode, { kind: K }>;
const MAX_TURNS = 10;

interface Case {
  range: NumRange;
  /** The curriculum fields holding `x` (a number as tcod writes it). */
  fields: (x: string) => string;
  /** The same field's text for a schedule from `a` (step 1) to `b` (step 20), where it may be one. */
  schedule?: (a: string, b: string) => string;
  /** Sets the field of a plan to `v`; `path` is its JSON path. */
  set: (p: Plan, v: number) => void;
  path: RegExp;
}

const pw = (a: string, b: string, unit = "") => `piecewise(at: [1 step, 20 steps], values: [${a}${unit}, ${b}${unit}])`;
const adam = (k: string) => (x: string) => `optimizer: adam(lr: 0.01, ${k}: ${x})`;
const cases: Record<string, Case> = {
  lr: {
    range: PLAN_RANGES.lr, fields: (x) => `optimizer: adam(lr: ${x})`, schedule: (a, b) => `optimizer: adam(lr: ${pw(a, b)})`,
    set: (p, v) => { node(p, "Update").params.optimizer.lr = v; }, path: /\.params\.optimizer\.lr$/,
  },
  temperature: {
    range: PLAN_RANGES.temperature, fields: (x) => `temperature: ${x}`, schedule: (a, b) => `temperature: ${pw(a, b)}`,
    set: (p, v) => { node(p, "Rollout").params.temperature = v; }, path: /\.params\.temperature$/,
  },
  "eval temperature": {
    range: PLAN_RANGES.temperature, fields: (x) => `eval: evaluate(env: texthouse(split: "valid_seen"), temperature: ${x})`,
    set: (p, v) => { node(p, "Evaluate").params.temperature = v; }, path: /\.params\.temperature$/,
  },
  teacherTemperature: {
    range: PLAN_RANGES.teacherTemperature, fields: (x) => `teacher_temperature: ${x}`,
    set: (p, v) => { node(p, "TeacherScore").params.temperature = v; }, path: /\.params\.temperature$/,
  },
  blendWeight: {
    range: PLAN_RANGES.blendWeight, fields: (x) => `loss: opd(aggregate: "progressive", blend: ${x})`, schedule: (a, b) => `loss: opd(aggregate: "progressive", blend: ${pw(a, b)})`,
    set: (p, v) => { node(p, "Advantage").params.aggregate = { kind: "progressive", weight: v }; }, path: /\.params\.aggregate\.weight$/,
  },
  gkdBeta: {
    range: PLAN_RANGES.gkdBeta, fields: (x) => `loss: gkd(beta: ${x})`, schedule: (a, b) => `loss: gkd(beta: ${pw(a, b)})`,
    set: (p, v) => { (node(p, "Advantage").params.terms[0] as { beta: number }).beta = v; }, path: /\.params\.terms\[0\]\.beta$/,
  },
  horizon: {
    range: PLAN_RANGES.horizon, fields: (x) => `horizon: ${x} turns`, schedule: (a, b) => `horizon: ${pw(a, b, " turns")}`,
    set: (p, v) => { node(p, "EpisodePlanner").params.horizon = v; }, path: /\.params\.horizon$/,
  },
  prefix: {
    range: prefixRange(MAX_TURNS), fields: (x) => `prefix: ${x} turns`, schedule: (a, b) => `prefix: ${pw(a, b, " turns")}`,
    set: (p, v) => { node(p, "EpisodePlanner").params.prefix = v; }, path: /\.params\.prefix$/,
  },
  opdClip: {
    range: PLAN_RANGES.opdClip, fields: (x) => `loss: opd(clip: ${x})`,
    set: (p, v) => { (node(p, "Advantage").params.terms[0] as { clip?: number }).clip = v; }, path: /\.params\.terms\[0\]\.clip$/,
  },
  clip: { range: PLAN_RANGES.clip, fields: adam("clip"), set: (p, v) => { node(p, "Update").params.clip = v; }, path: /\.params\.clip$/ },
  adamBeta: {
    range: PLAN_RANGES.adamBeta, fields: (x) => `optimizer: adam(lr: 0.01, betas: [0.9, ${x}])`,
    set: (p, v) => { node(p, "Update").params.optimizer.betas[1] = v; }, path: /\.params\.optimizer\.betas\[1\]$/,
  },
  gradClip: { range: PLAN_RANGES.gradClip, fields: adam("grad_clip"), set: (p, v) => { node(p, "Update").params.optimizer.gradClip = v; }, path: /\.params\.optimizer\.gradClip$/ },
  eps: { range: PLAN_RANGES.eps, fields: adam("eps"), set: (p, v) => { node(p, "Update").params.optimizer.eps = v; }, path: /\.params\.optimizer\.eps$/ },
  weightDecay: { range: PLAN_RANGES.weightDecay, fields: adam("weight_decay"), set: (p, v) => { node(p, "Update").params.optimizer.weightDecay = v; }, path: /\.params\.optimizer\.weightDecay$/ },
};

/** Each finite bound of a range with a value just inside and just outside it. */
function edges(r: NumRange): { bound: string; inside: number; outside: number }[] {
  const out: { bound: string; inside: number; outside: number }[] = [];
  const d = (b: number) => 1e-6 * Math.max(1, Math.abs(b));
  out.push({ bound: `lo ${r.lo}`, inside: r.loOpen ? r.lo + d(r.lo) : r.lo, outside: r.loOpen ? r.lo : r.lo - d(r.lo) });
  // Bounds past 1e300 (opd clip's MAX_VALUE, the horizon's Infinity): a value beyond is not finite.
  if (r.hi < 1e300) out.push({ bound: `hi ${r.hi}`, inside: r.hiOpen ? r.hi - d(r.hi) : r.hi, outside: r.hiOpen ? r.hi : r.hi + d(r.hi) });
  return out;
}

describe("every range of the table is the compiler's and the plan loader's", () => {
  it("covers every entry of PLAN_RANGES", () => {
    const covered = new Set(Object.values(cases).map((c) => c.range));
    for (const [k, r] of Object.entries(PLAN_RANGES)) expect(covered.has(r), k).toBe(true);
  });

  for (const [name, c] of Object.entries(cases)) {
    for (const e of edges(c.range)) {
      it(`${name} (${c.range.stated}), ${e.bound}: ${e.inside} compiles and loads, ${e.outside} is TC4001 and TC7001`, () => {
        const ok = compile(c.fields(String(e.inside)));
        expect(ok.codes, ok.text).toEqual([]);
        const bad = compile(c.fields(String(e.outside)));
        expect(bad.codes, bad.text).toEqual(["TC4001"]);
        expect(bad.text).toContain(`${c.range.what} must be`);

        if (c.schedule) {
          const sOk = compile(c.schedule(String(e.inside), String(e.inside)));
          expect(sOk.codes, sOk.text).toEqual([]);
          const sBad = compile(c.schedule(String(e.inside), String(e.outside)));
          expect(sBad.codes, sBad.text).toEqual(["TC4001"]);
          expect(sBad.text).toMatch(/ at step \d+/);
        }

        // The plan of the value inside loads; with the value outside it does not, and says where.
        const plan = ok.r.plans[0]!.plan;
        expect(planRangeIssues(plan)).toEqual([]);
        const broken = structuredClone(plan);
        c.set(broken, e.outside);
        let err: unknown;
        try { parsePlan(JSON.parse(JSON.stringify(broken))); } catch (x) { err = x; }
        expect(err).toBeInstanceOf(PlanError);
        expect((err as PlanError).code).toBe("TC7001");
        expect((err as PlanError).issues.map((i) => i.path).some((p) => c.path.test(p)), (err as PlanError).message).toBe(true);
      });
    }
  }
});

describe("a plan .json constant out of range", () => {
  it("names the JSON path, the range and the value", () => {
    const plan = compile("optimizer: adam(lr: 0.01)").r.plans[0]!.plan;
    const i = plan.graph.nodes.findIndex((x) => x.kind === "Update");
    const broken = structuredClone(plan);
    node(broken, "Update").params.optimizer.lr = -0.5;
    node(broken, "TeacherScore").params.temperature = 0;
    expect(() => parsePlan(broken)).toThrow(PlanError);
    try { parsePlan(broken); } catch (x) {
      const e = x as PlanError;
      expect(e.issues).toContainEqual({ path: `$.graph.nodes[${i}].params.optimizer.lr`, message: "lr must be > 0, got -0.5", hint: "Choose a value > 0: the range the compiler checks in the source (plan/ranges.ts)." });
      expect(e.issues.map((j) => j.message)).toContain("teacher_temperature must be in (0, 4], got 0");
      expect(e.message).toContain(`at $.graph.nodes[${i}].params.optimizer.lr: lr must be > 0, got -0.5`);
    }
  });

  it("beyond a guard bound, the bound is named (lr 50: > 0 and ≤ 10)", () => {
    const plan = compile("optimizer: adam(lr: 0.01)").r.plans[0]!.plan;
    node(plan, "Update").params.optimizer.lr = 50;
    expect(planRangeIssues(plan).map((j) => j.message)).toEqual(["lr must be > 0 and ≤ 10, got 50"]);
  });
});
