/**
 * A plan's extension bundle is a file name beside the plan: a plan JSON naming an absolute path or a
 * path with folders is refused at load (exit 1, a plan error naming the field), and nothing is
 * written or imported there.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePlan } from "../../plan/schema.js";

const ROOT = join(import.meta.dirname, "../..");
const small = JSON.parse(readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json"), "utf8")) as Record<string, unknown>;
const withBundle = (bundle: string) => ({ ...small, extensions: { bundle, functions: {} } });

describe("extension bundle path", () => {
  it("accepts the name the compiler writes", () => {
    expect(() => parsePlan(withBundle("texthouse_f2b@k=2steps.plan.bundle.mjs"))).not.toThrow();
  });

  for (const bad of ["/tmp/evil.plan.bundle.mjs", "../evil.plan.bundle.mjs", "sub/evil.plan.bundle.mjs", "..\\evil.plan.bundle.mjs", "evil.mjs", "..",
    "evil\u0000.plan.bundle.mjs", "evil.plan.bundle.mjs\u0000.json", "EVIL.PLAN.BUNDLE.MJS", "evil.Plan.Bundle.mjs", ".plan.bundle.mjs", "", "a/../evil.plan.bundle.mjs"]) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      expect(() => parsePlan(withBundle(bad))).toThrow(/extensions\.bundle/);
    });
  }

  it("tcod run of a plan whose bundle points elsewhere exits 1 and writes nothing there", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-bundle-"));
    const target = join(dir, "elsewhere", "pwned.plan.bundle.mjs");
    const planFile = join(dir, "plan.json");
    writeFileSync(planFile, JSON.stringify(withBundle(target)));
    writeFileSync(join(dir, "pwned.plan.bundle.mjs"), "export const functions = {};\n");
    const r = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", planFile, "--out", join(dir, "run"), "--quiet"], { cwd: dir, encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("extensions.bundle");
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(existsSync(target)).toBe(false);
  });

  it.each(["../../evil.plan.bundle.mjs", "/tmp/evil.plan.bundle.mjs", "evil\u0000.plan.bundle.mjs", "EVIL.PLAN.BUNDLE.MJS"])("tcod run --resume of a run folder whose plan.json names the bundle %j: TC7014 naming the file and field; nothing written", (bad) => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-bundle-"));
    const run = join(dir, "a", "run");
    mkdirSync(run, { recursive: true });
    writeFileSync(join(run, "plan.json"), JSON.stringify(withBundle(bad)));
    writeFileSync(join(run, "metrics.jsonl"), "");
    const before = readdirSync(run).sort();
    const r = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", run, "--quiet"], { cwd: dir, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr.startsWith(`${join(run, "plan.json")} error TC7014: `), r.stderr).toBe(true);
    expect(r.stderr).toContain("(at $.extensions.bundle)");
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(readdirSync(run).sort()).toEqual(before);
    expect(readdirSync(join(dir, "a"))).toEqual(["run"]);
    expect(readdirSync(dir)).toEqual(["a"]);
  });
});
