/**
 * `--json` is one contract for every command: stdout holds only JSON lines, the last one the
 * command's result `{command, ok, exitCode, …}` — on success, on diagnostics and on user errors.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args, "--json"], { cwd: ROOT, encoding: "utf8" });

function lines(out: string): Record<string, unknown>[] {
  const ls = out.trim().split("\n");
  return ls.map((l) => JSON.parse(l) as Record<string, unknown>); // throws on any non-JSON line
}

describe("--json", () => {
  const tmp = mkdtempSync(join(tmpdir(), "tcod-json-"));
  const cases: [string, string[], Record<string, unknown>][] = [
    ["check ok", ["check", "examples/texthouse/opd.tcod"], { command: "check", ok: true, files: 1 }],
    ["check with errors", ["check", "test/fixtures/ranges/out-of-range/input.tcod"], { command: "check", ok: false, exitCode: 1 }],
    ["compile", ["compile", "examples/texthouse/opd.tcod", "--out", join(tmp, "plans")], { command: "compile", ok: true }],
    ["explain", ["explain", "examples/texthouse/tcod-f2b.tcod", "texthouse_tcod_f2b.horizon", "--at", "1,2"], { command: "explain", ok: true, target: "texthouse_tcod_f2b.horizon" }],
    ["explain of a missing field", ["explain", "examples/texthouse/tcod-f2b.tcod", "texthouse_tcod_f2b.nope"], { command: "explain", ok: false, exitCode: 1 }],
    ["plot", ["plot", "examples/texthouse/tcod-f2b.tcod"], { command: "plot", ok: true }],
    ["export", ["export", "trinity", "examples/alfworld/opd.tcod", "--out", join(tmp, "trinity")], { command: "export", ok: true }],
    ["import of a missing file", ["import", "trinity", join(tmp, "missing.yaml")], { command: "import", ok: false, exitCode: 1 }],
    ["metrics of a non-run folder", ["metrics", tmp], { command: "metrics", ok: false, exitCode: 1 }],
    ["fmt --check", ["fmt", "--check", "examples/texthouse/opd.tcod"], { command: "fmt", files: 1 }],
    ["run --dry-run", ["run", "examples/texthouse/opd.tcod", "--dry-run"], { command: "run", ok: true, dryRun: true }],
    ["run of a missing file", ["run", join(tmp, "nope.tcod")], { command: "run", ok: false, exitCode: 1 }],
  ];
  it.each(cases)("%s: JSON lines only, ending in the result", (_name, args, expected) => {
    const r = tcod(...args);
    const ls = lines(r.stdout);
    const last = ls[ls.length - 1]!;
    expect(last).toMatchObject(expected);
    expect(last.exitCode).toBe(r.status);
    if (last.ok === false && last.error) expect((last.error as { code: string }).code).toMatch(/^TC\d{4}$/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);

  it("compile's result names the plans it wrote; explain's carries the values; a run's the status and folder", () => {
    const c = lines(tcod("compile", "examples/texthouse/opd.tcod", "--out", join(tmp, "p2")).stdout).pop() as { plans: { name: string; plan: string }[] };
    expect(c.plans.map((p) => p.name)).toEqual(["texthouse_opd"]);
    const e = lines(tcod("explain", "examples/texthouse/tcod-f2b.tcod", "texthouse_tcod_f2b.horizon", "--at", "1,20").stdout).pop() as { table: { values: { step: number; value: number }[] }[] };
    expect(e.table[0]!.values.map((v) => v.step)).toEqual([1, 20]);
    const dir = join(tmp, "run");
    const r = tcod("run", "test/fixtures/plans/texthouse-f2b-small.json", "--out", dir, "--set", "clock.steps=2");
    expect(r.status, r.stderr).toBe(0);
    expect(lines(r.stdout)).toHaveLength(1);
    expect(lines(r.stdout)[0]).toMatchObject({ command: "run", ok: true, status: "completed", steps: 2, runDir: dir });
    writeFileSync(join(tmp, "x.tcod"), "let x = \n");
    const bad = lines(tcod("compile", join(tmp, "x.tcod")).stdout);
    expect(bad[0]).toHaveProperty("code");
    expect(bad[bad.length - 1]).toMatchObject({ command: "compile", ok: false });
  }, 180_000);
});
