/** The CLI as a user runs it: exit codes, rendered and JSON diagnostics, files written, no stack traces. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8" });
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at .+:\d+:\d+/);

describe("tcod CLI", () => {
  it("check: exit 0 on every example", () => {
    const r = tcod("check", "examples/texthouse/tcod-f2b.tcod", "examples/alfworld/tcod-b2f.tcod");
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("ok: 2 file(s)");
  });

  it("check: a broken file gets every error with code, position, caret and hint; exit 1; no stack trace", () => {
    const r = tcod("check", "test/fixtures/names/did-you-mean/input.tcod");
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain("test/fixtures/names/did-you-mean/input.tcod:2:15 error TC1103:");
    expect(r.stderr).toMatch(/\n\s+\| +\^+/);
    expect(r.stderr).toContain("hint:");
    expect(r.stderr).toContain("Did you mean 'temperature'?");
    expect(r.stderr).toMatch(/7 error\(s\)/);
  });

  it("check --set checks the file as `tcod run --set` would compile it: the override's own errors point into it", () => {
    const f = "examples/texthouse/gpu/sft-teacher.tcod";
    const ok = tcod("check", f, "--set", "train_steps=800 steps", "--set", 'texthouse_sft_teacher.eval=evaluate(env: texthouse(split: "valid_seen"), every: 50 steps, from: 350 steps)');
    expect(ok.status, ok.stderr).toBe(0);
    const bad = tcod("check", f, "--set", 'texthouse_sft_teacher.eval=evaluate(env: texthouse(split: "valid_seen"), every: 50 steps, from: -1 steps)');
    expect(bad.status).toBe(1);
    noStack(bad.stderr);
    expect(bad.stderr).toContain("<--set 1>:1:");
    expect(bad.stderr).toContain("error TC4001: from must be an integer ≥ 0 steps, got -1.");
    const target = tcod("check", f, "--set", "nope=1");
    expect(target.status).toBe(1);
    expect(target.stderr).toContain("error TC5002: Override target 'nope'");
    expect(tcod("check", f, "--curriculum", "texthouse_sft_teacher").status).toBe(0);
  });

  it("check --json prints one JSON object per diagnostic", () => {
    const r = tcod("check", "--json", "test/fixtures/ranges/out-of-range/input.tcod");
    expect(r.status).toBe(1);
    const all = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { code: string; line: number; column: number; hint: string });
    expect(all[all.length - 1]).toMatchObject({ command: "check", ok: false, exitCode: 1, errors: 5 });
    const lines = all.slice(0, -1);
    expect(lines.length).toBe(5);
    for (const l of lines) {
      expect(l.code).toMatch(/^TC\d{4}$/);
      expect(l.line).toBeGreaterThan(0);
      expect(l.column).toBeGreaterThan(0);
      expect(l.hint).toBeTruthy();
    }
  });

  it("check: a missing file is a user error, not a crash", () => {
    const r = tcod("check", "nope/missing.tcod");
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain("TC1101");
  });

  it("explain prints the official ALFWorld f2b horizons 1, 2, 3, 30, 30", () => {
    const r = tcod("explain", "examples/alfworld/tcod-f2b.tcod", "alfworld_tcod_f2b.horizon", "--at", "0,6,12,174,175");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/turns\s+1\s+2\s+3\s+30\s+30/);
    expect(r.stdout).toContain("level:  step");
    expect(r.stdout).toContain("examples/alfworld/tcod-f2b.tcod:25:12");
    const j = JSON.parse(tcod("explain", "--json", "examples/alfworld/tcod-f2b.tcod", "alfworld_tcod_f2b.horizon", "--at", "0,6,12,174,175").stdout) as { table: { values: { value: number }[] }[] };
    expect(j.table[0]!.values.map((v) => v.value)).toEqual([1, 2, 3, 30, 30]);
  });

  it("explain: a field left unset shows the default that applies", () => {
    const r = tcod("explain", "examples/texthouse/opd.tcod", "texthouse_opd.prefix");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("texthouse_opd.prefix = 0 turns (no expert prefix)");
    expect(r.stdout).toContain("not set in the curriculum");
  });

  it("explain: an unknown field is a clear user error", () => {
    const r = tcod("explain", "examples/alfworld/tcod-f2b.tcod", "alfworld_tcod_f2b.horizn");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("has no field 'horizn'");
    noStack(r.stderr);
  });

  it("compile writes DIR/NAME.plan.json; --set is typed and checked like source", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-cli-"));
    const r = tcod("compile", "examples/alfworld/tcod-f2b.tcod", "--out", out, "--set", "alfworld_tcod_f2b.steps=500");
    expect(r.status).toBe(0);
    const plan = JSON.parse(readFileSync(join(out, "alfworld_tcod_f2b.plan.json"), "utf8")) as { schema: string; clock: { steps: number } };
    expect(plan.schema).toBe("tcod.plan/2");
    expect(plan.clock.steps).toBe(500);
    // A bare field name sets that field of every curriculum of the file.
    expect(tcod("compile", "examples/alfworld/tcod-f2b.tcod", "--out", out, "--set", "steps=12").status).toBe(0);
    expect((JSON.parse(readFileSync(join(out, "alfworld_tcod_f2b.plan.json"), "utf8")) as { clock: { steps: number } }).clock.steps).toBe(12);
    const nothing = tcod("compile", "examples/alfworld/tcod-f2b.tcod", "--out", out, "--set", "stepz=12");
    expect(nothing.status).toBe(1);
    expect(nothing.stderr).toContain("TC5002");
    const bad = tcod("compile", "examples/alfworld/tcod-f2b.tcod", "--out", out, "--set", "alfworld_tcod_f2b.horizon=3 steps");
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("TC2001");
    const unknown = tcod("compile", "examples/alfworld/tcod-f2b.tcod", "--out", out, "--set", "alfworld_tcod_f2b.stpes=3");
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("TC2004");
    expect(unknown.stderr).toContain("Did you mean 'steps'?");
  });

  it("compile expands sweeps into one plan per point", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-cli-"));
    const r = tcod("compile", "test/fixtures/sweeps/product/input.tcod", "--out", out);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(4);
    expect(existsSync(join(out, "c@k=8steps,c.steps=60.plan.json"))).toBe(true);
  });

  it("plot prints sparklines and writes an SVG with one series per schedule", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-cli-"));
    const r = tcod("plot", "examples/texthouse/atod.tcod", "--out", out);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/loss\.0\.opd\.coef\s+[▁-█]+/);
    const svg = readFileSync(join(out, "texthouse_atod.schedules.svg"), "utf8");
    expect(svg.match(/<polyline class="series"/g)!.length).toBeGreaterThanOrEqual(3);
  });

  it("TypeScript extensions: signatures map to tcod types and the code is bundled beside the plan", async () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-cli-"));
    const r = tcod("compile", "test/fixtures-ts/ext.tcod", "--out", out);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const plan = JSON.parse(readFileSync(join(out, "with_ext.plan.json"), "utf8")) as { extensions: { bundle: string; functions: Record<string, { level: string }> }; exprs: Record<string, { level: string }> };
    expect(plan.extensions.functions["test/fixtures-ts/weights.ts#lateKl"]!.level).toBe("turn");
    expect(plan.exprs["turn_weights"]!.level).toBe("turn");
    expect(plan.exprs["temperature"]!.level).toBe("step");
    const mod = (await import(pathToFileURL(join(out, plan.extensions.bundle)).href)) as { functions: Record<string, (...a: number[]) => number> };
    // lateKl({index: 2, kl: 1, entropy: 0, tokens: 5, turns: 4}) = (1 + 2/4) × (1 + 1) = 3
    expect(mod.functions["test/fixtures-ts/weights.ts#lateKl"]!(2, 1, 0, 5, 4)).toBe(3);
    expect(mod.functions["test/fixtures-ts/weights.ts#squash"]!(1, 0.5)).toBeCloseTo(1 / 3, 12);
  });

  it("TypeScript extensions: an unmappable signature and a missing export are diagnostics on the import", () => {
    const r = tcod("check", "test/fixtures-ts/bad-ext.tcod");
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain("TC6001");
    expect(r.stderr).toContain("(name: string) => string");
    expect(r.stderr).toContain("TC6002");
  });

  it("an override that does not parse is a user error with the override shown", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-"));
    writeFileSync(join(dir, "x.txt"), "");
    const r = tcod("compile", "examples/texthouse/opd.tcod", "--out", dir, "--set", "texthouse_opd.steps=(1 +");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("TC5001");
    noStack(r.stderr);
  });
});

/**
 * `tcod plot` and `tcod explain --graph` take a compiled plan .json as `tcod run` and `tcod export`
 * do, through the same loader (bin/plan-json.ts): a bad one is TC7001 with each problem's path and
 * hint, never a .tcod parse error of JSON. `tcod explain PLAN.json CURR.FIELD` is TC7009 naming why
 * (a field is explained from its source, which a plan does not keep) and the source to give instead.
 */
describe("plot and explain of a compiled plan .json", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-cli-planjson-"));
  const SRC = "examples/texthouse/atod.tcod";
  const plan = join(dir, "texthouse_atod.plan.json");
  const compiled = tcod("compile", SRC, "--out", dir);
  const userError = (r: ReturnType<typeof tcod>, code: string) => {
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(`error ${code}:`);
    expect(r.stderr).toContain("hint:");
    noStack(r.stderr);
    expect(r.stderr).not.toMatch(/error TC[1-6]\d{3}/);
  };

  it("plot PLAN.json draws what plot of its source draws; --out writes the same SVG", () => {
    expect(compiled.status, compiled.stderr).toBe(0);
    const fromSource = tcod("plot", SRC, "--out", join(dir, "a"));
    const fromPlan = tcod("plot", plan, "--out", join(dir, "b"));
    expect(fromPlan.status, fromPlan.stderr).toBe(0);
    expect(fromPlan.stdout.replaceAll(join(dir, "b"), "OUT")).toBe(fromSource.stdout.replaceAll(join(dir, "a"), "OUT"));
    expect(fromPlan.stdout).toMatch(/loss\.0\.opd\.coef\s+[▁-█]+/);
    expect(readFileSync(join(dir, "b", "texthouse_atod.schedules.svg"), "utf8")).toBe(readFileSync(join(dir, "a", "texthouse_atod.schedules.svg"), "utf8"));
  });

  it("plot PLAN.json --set sets a JSON path of the plan, as run does", () => {
    const r = tcod("plot", plan, "--set", "clock.steps=20");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("texthouse_atod (20 steps)");
  });

  it("plot PLAN.json --graph and explain PLAN.json NAME --graph: the source's graph", () => {
    expect(tcod("plot", plan, "--graph").stdout).toBe(tcod("plot", SRC, "--graph").stdout);
    const r = tcod("explain", plan, "texthouse_atod", "--graph");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(tcod("explain", SRC, "texthouse_atod", "--graph").stdout);
    const other = tcod("explain", plan, "texthouse_opd", "--graph");
    userError(other, "TC7009");
    expect(other.stderr).toContain("holds the plan 'texthouse_atod'");
    expect(other.stderr).toContain(`tcod explain ${plan} texthouse_atod --graph`);
  });

  it("explain PLAN.json CURR.FIELD: TC7009 saying a field is explained from its source, and naming that source", () => {
    const r = tcod("explain", plan, "texthouse_atod.horizon");
    userError(r, "TC7009");
    expect(r.stderr).toContain(`${plan} error TC7009: ${plan} is a compiled plan: explain reads a field from its .tcod source`);
    expect(r.stderr).toContain(`hint: Give the source the plan was compiled from (it lists ${SRC}): tcod explain ${SRC} texthouse_atod.horizon;`);
    expect(r.stderr).toContain("--graph");
    const j = tcod("explain", plan, "texthouse_atod.horizon", "--json");
    expect(j.status).toBe(1);
    expect(JSON.parse(j.stdout.trim().split("\n").at(-1)!)).toMatchObject({ command: "explain", ok: false, error: { code: "TC7009" } });
  });

  it("a plan .json that does not validate is TC7001 with its paths and hints; one that is not JSON is TC7009 at its line and column", () => {
    const bad = join(dir, "bad.plan.json");
    const p = JSON.parse(readFileSync(plan, "utf8")) as { clock: { steps: unknown } };
    p.clock.steps = "many";
    writeFileSync(bad, JSON.stringify(p, null, 2));
    for (const args of [["plot", bad], ["plot", bad, "--graph"], ["explain", bad, "texthouse_atod", "--graph"], ["explain", bad, "texthouse_atod.horizon"]]) {
      const r = tcod(...args);
      userError(r, "TC7001");
      expect(r.stderr).toContain(`${bad} error TC7001: Invalid input: expected number, received string (at $.clock.steps)`);
    }
    const notJson = join(dir, "broken.json");
    writeFileSync(notJson, '{\n  "schema": "tcod.plan/2",\n  oops\n}\n');
    for (const args of [["plot", notJson], ["explain", notJson, "x.horizon"], ["explain", notJson, "x", "--graph"]]) {
      const r = tcod(...args);
      userError(r, "TC7009");
      expect(r.stderr).toContain(`${notJson}:3:3 error TC7009: not valid JSON`);
    }
  });
});
