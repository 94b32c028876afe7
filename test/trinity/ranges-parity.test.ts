/**
 * The Trinity plugin's range table is plan/ranges.ts's, and its checks say what tcod's say: the
 * committed tcod_runtime/range_table.py (what the plugin's Python tests import) is the rendering of
 * PLAN_RANGES that every export ships; read back by Python, each entry equals the TypeScript one; and
 * on the same values, in_range, the out-of-range message (TC7001's) and the run-time TC7005 error
 * (formatted as `tcod run` prints it) are the TypeScript ones. test/trinity/test_ranges.py checks
 * where the plugin applies them.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ExprDef } from "../../plan/expr.js";
import { formatUserError, UserError } from "../../plan/errors.js";
import { inRange, outOfRangeMessage, PLAN_RANGES, prefixRange, type NumRange } from "../../plan/ranges.js";
import type { Plan } from "../../plan/schema.js";
import { CurriculumState } from "../../runtime/curriculum-state.js";
import { exportTrinity } from "../../targets/trinity/export.js";
import { readTemplates } from "../../targets/trinity/plugin/generate.js";
import { renderRangeTable } from "../../targets/trinity/plugin/range-table.js";
import { rng } from "../helpers/prng.js";
import { atodPlan } from "./plans.js";

const python = spawnSync("python3", ["--version"]).status === 0;
const run = python || process.env.CI ? it : it.skip;

const enc = (x: unknown): unknown =>
  typeof x === "number" ? (Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity" : x === -Infinity ? "-Infinity" : x)
    : Array.isArray(x) ? x.map(enc)
    : x && typeof x === "object" ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, enc(v)])) : x;
const dec = (x: unknown): unknown =>
  x === "NaN" ? NaN : x === "Infinity" ? Infinity : x === "-Infinity" ? -Infinity
    : Array.isArray(x) ? x.map(dec) : x && typeof x === "object" ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, dec(v)])) : x;

/** Runs `body` (Python, with `core`, `ranges`, `dec`, `enc` and the decoded input `data` in scope); returns its `out`. */
function py(body: string, data: unknown): unknown {
  const script = `
import json, math, sys
sys.path.insert(0, "targets/trinity/plugin")
from tcod_runtime import core, ranges
def dec(x):
    if x in ("NaN", "Infinity", "-Infinity"): return float(x.replace("Infinity", "inf"))
    if isinstance(x, list): return [dec(v) for v in x]
    if isinstance(x, dict): return {k: dec(v) for k, v in x.items()}
    return x
def enc(x):
    if isinstance(x, float) and not math.isfinite(x): return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, list): return [enc(v) for v in x]
    if isinstance(x, dict): return {k: enc(v) for k, v in x.items()}
    return x
data = dec(json.load(sys.stdin))
${body}
print(json.dumps(enc(out)))
`;
  const r = spawnSync("python3", ["-c", script], { input: JSON.stringify(enc(data)), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`python failed: ${r.stderr}`);
  return dec(JSON.parse(r.stdout));
}

/** A range's fields as both sides hold them (flags absent in TypeScript are false). */
const fields = (r: NumRange) => ({ what: r.what, lo: r.lo, hi: r.hi, loOpen: !!r.loOpen, hiOpen: !!r.hiOpen, integer: !!r.integer, stated: r.stated });

/** Values around each bound and far from it, NaN included. */
function probes(r: NumRange): number[] {
  const d = (b: number) => 1e-6 * Math.max(1, Math.abs(b));
  const v = [r.lo, r.lo - d(r.lo), r.lo + d(r.lo), -1e308, 1e308, 0.5, 3, 12, 2e9, NaN];
  if (Number.isFinite(r.hi)) v.push(r.hi, r.hi - d(r.hi), r.hi + d(r.hi));
  return v;
}

describe("the Trinity plugin's range table is plan/ranges.ts's", () => {
  it("the committed tcod_runtime/range_table.py is PLAN_RANGES rendered (npm run docs writes it)", () => {
    expect(readFileSync("targets/trinity/plugin/tcod_runtime/range_table.py", "utf8")).toBe(renderRangeTable());
  });

  it("an export ships the rendered table and the range checks", () => {
    const plugin = exportTrinity(atodPlan(), { target: "tcod-fork" }).plugin!;
    expect(plugin["tcod_runtime/range_table.py"]).toBe(renderRangeTable());
    expect(plugin["tcod_runtime/ranges.py"]).toBe(readTemplates()["tcod_runtime/ranges.py"]);
  });

  run("read by Python, every entry equals the TypeScript one; prefix_range equals prefixRange", () => {
    const got = py(`out = {"table": ranges.PLAN_RANGES, "prefix": [ranges.prefix_range(n) for n in range(1, 13)]}`, null) as {
      table: Record<string, Record<string, unknown>>; prefix: Record<string, unknown>[];
    };
    const strip = (o: Record<string, unknown>) => { const { statedAboveHi: _, ...rest } = o; return rest; };
    expect(Object.fromEntries(Object.entries(got.table).map(([k, v]) => [k, strip(v)])))
      .toEqual(Object.fromEntries(Object.entries(PLAN_RANGES).map(([k, r]) => [k, fields(r)])));
    expect(got.prefix.map(strip)).toEqual(Array.from({ length: 12 }, (_, i) => fields(prefixRange(i + 1))));
  });

  run("in_range and out_of_range_message give the TypeScript answers on values around every bound", () => {
    const ranges = [...Object.keys(PLAN_RANGES).map((k) => ({ key: k, r: (PLAN_RANGES as Record<string, NumRange>)[k]! })),
      ...[1, 2, 10, 30].map((n) => ({ key: `prefix:${n}`, r: prefixRange(n) }))];
    const cases = ranges.flatMap(({ key, r }) => probes(r).map((v) => ({ key, v, inside: inRange(v, r), message: outOfRangeMessage(r, v) })));
    const got = py(`
def rng_of(key):
    return ranges.prefix_range(int(key.split(":")[1])) if key.startswith("prefix:") else ranges.PLAN_RANGES[key]
out = [{"inside": ranges.in_range(c["v"], rng_of(c["key"])), "message": ranges.out_of_range_message(rng_of(c["key"]), c["v"])} for c in data]
`, cases) as { inside: boolean; message: string }[];
    got.forEach((g, i) => expect(g, `${cases[i]!.key} ${cases[i]!.v}`).toEqual({ inside: cases[i]!.inside, message: cases[i]!.message }));
  });

  run("js_number writes numbers as JavaScript's String does", () => {
    const r = rng(11);
    const values = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 1e-6, 123456789012345680000, 5e-324, Number.MAX_VALUE, NaN, Infinity, -Infinity];
    for (let i = 0; i < 300; i++) values.push((r() - 0.5) * 10 ** Math.floor(r() * 60 - 30));
    // Prefixed, so that "NaN" and "Infinity" come back as text.
    const got = py(`out = ["=" + ranges.js_number(v) for v in data]`, values) as string[];
    got.forEach((g, i) => expect(g, `${values[i]}`).toBe(`=${String(values[i])}`));
  });

  run("a schedule value out of its range is the same TC7005 error, message, position and hint, as tcod run's", () => {
    const c = (value: number) => ({ op: "const" as const, value });
    const exprs: Record<string, ExprDef> = {
      s: { level: "step", unit: "", tree: c(0), origin: "c.tcod:5:12" },
      f: { level: "feedback", unit: "", tree: c(0), origin: "c.tcod:8:3" },
      n: { level: "step", unit: "", tree: c(0) },
    };
    const plan = { clock: { steps: 20, seed: 1 }, exprs, graph: { nodes: [], edges: [] } } as unknown as Plan;
    const all: [string, NumRange][] = [...Object.entries(PLAN_RANGES as Record<string, NumRange>), ["prefix", prefixRange(10)]];
    const cases: { id: string; v: number; range: string; step: number; want: string }[] = [];
    for (const [key, r] of all) {
      for (const id of ["s", "f", "n"]) {
        for (const v of [r.lo - 1e-6 * Math.max(1, Math.abs(r.lo)), ...(Number.isFinite(r.hi) && r.hi < 1e300 ? [r.hi + 1e-6 * Math.max(1, r.hi)] : []), NaN, -Infinity]) {
          exprs[id]!.tree = c(v);
          let err: unknown;
          try { new CurriculumState(plan).atStep({ expr: id }, 7, r); } catch (e) { err = e; }
          expect(err, `${key} ${id} ${v}`).toBeInstanceOf(UserError);
          expect((err as UserError).code).toBe("TC7005");
          cases.push({ id, v, range: key, step: 7, want: formatUserError(err as UserError) });
        }
      }
    }
    const got = py(`
exprs = {"s": {"level": "step", "origin": "c.tcod:5:12"}, "f": {"level": "feedback", "origin": "c.tcod:8:3"}, "n": {"level": "step"}}
for e in exprs.values(): e["tree"] = {"op": "const", "value": 0}
out = []
for c in data:
    r = ranges.prefix_range(10) if c["range"] == "prefix" else ranges.PLAN_RANGES[c["range"]]
    try:
        core.checked({"expr": c["id"]}, c["v"], c["step"], exprs, r)
        out.append("no error")
    except ranges.TcodError as e:
        out.append(e.code + "|" + str(e))
`, cases) as string[];
    got.forEach((g, i) => expect(g, `${cases[i]!.range} ${cases[i]!.id} ${cases[i]!.v}`).toBe(`TC7005|${cases[i]!.want}`));
  });
});
