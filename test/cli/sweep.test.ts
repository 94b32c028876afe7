/**
 * `tcod run FILE --sweep`: every point in its own run folder under one sweep folder, resumable
 * (finished points skipped, an interrupted one resumed to the same metrics); `--dry-run` and
 * `--print-config`; what a run folder records (run.json, source/).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readMetrics } from "../../runtime/metrics.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");
const tcod = (args: string[], cwd = ROOT) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8" });
const metrics = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).map(({ time: _t, ...rest }) => rest);

const SOURCE = `import { f2b } from "std/tcod"
import { texthouse } from "std/envs"

model m { path: "x" }
let k = 2 steps

curriculum small {
  teacher: m
  student: m
  env:     texthouse()
  steps:   4
  batch:   2 tasks × 1 rollout
  horizon: f2b(every: k, max: 6 turns)
  checkpoint_every: 1 step
}
sweep grid product { k: [2 steps, 3 steps] }
`;

function project(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "tcod-sweep-"));
  writeFileSync(join(dir, "package.json"), "{}");
  writeFileSync(join(dir, "sweep.tcod"), SOURCE);
  return { dir, file: join(dir, "sweep.tcod") };
}

describe("tcod run --sweep", () => {
  it("--dry-run lists the points with what differs; --print-config prints a point's resolved curriculum", () => {
    const { file } = project();
    const dry = tcod(["run", file, "--dry-run"]);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("2 points");
    expect(dry.stdout).toMatch(/small@k=2steps\n\s+horizon: min\(1 \+ floor\(step \/ 2\)/);
    expect(dry.stdout).toMatch(/small@k=3steps\n\s+horizon: min\(1 \+ floor\(step \/ 3\)/);
    const json = JSON.parse(tcod(["run", file, "--dry-run", "--json"]).stdout) as { ok: boolean; points: { point: string; settings: string[] }[] };
    expect(json.ok).toBe(true);
    expect(json.points.map((p) => p.settings)).toEqual([["k=2 steps"], ["k=3 steps"]]);
    const cfg = tcod(["run", file, "--print-config", "--curriculum", "small@k=3steps", "--set", "small.steps=9"]);
    expect(cfg.status, cfg.stderr).toBe(0);
    expect(cfg.stdout).toMatch(/^\s+steps:\s+9 {2}\[steps\]\s+\/\/ --set steps=9/m);
    expect(cfg.stdout).toMatch(/^\s+staleness:\s+.*\/\/ default/m);
    expect(cfg.stdout).not.toContain("small@k=2steps");
  }, 300000);

  it("runs every point in its own folder; a second run skips them; an interrupted point is resumed to the same metrics", async () => {
    const { dir, file } = project();
    const out = join(dir, "sweep-out");
    // Interrupt one point first (Ctrl-C after its first step: it checkpoints and exits 130).
    const compiled = tcod(["compile", file, "--out", join(dir, "plans")]);
    expect(compiled.status, compiled.stderr).toBe(0);
    const point = join(out, "small@k=3steps");
    const code = await new Promise<number | null>((done) => {
      const p = spawn(process.execPath, [CLI, "run", join(dir, "plans", "small@k=3steps.plan.json"), "--out", point], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let text = "", sent = false;
      p.stdout.on("data", (b: Buffer) => { text += b.toString(); if (!sent && /step 1\/4/.test(text)) { sent = true; p.kill("SIGINT"); } });
      p.on("close", (c) => done(c));
    });
    expect(code).toBe(130);

    const first = tcod(["run", file, "--sweep", "--parallel", "2", "--out", out]);
    expect(first.status, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toMatch(/start \[\d\/2\] small@k=2steps/);
    expect(first.stdout).toMatch(/resume \[\d\/2\] small@k=3steps/);
    expect(first.stdout).toContain("2/2 points completed");
    const rec = JSON.parse(readFileSync(join(out, "sweep.json"), "utf8")) as { points: { name: string; status: string; settings: string[] }[] };
    expect(rec.points.map((p) => [p.name, p.status])).toEqual([["small@k=2steps", "completed"], ["small@k=3steps", "completed"]]);

    // The resumed point has exactly the metrics of an uninterrupted run of the same plan.
    const whole = join(dir, "whole");
    expect(tcod(["run", join(dir, "plans", "small@k=3steps.plan.json"), "--out", whole, "-q"]).status).toBe(0);
    expect(metrics(point)).toEqual(metrics(whole));

    // Every point's folder records how it was made.
    const run = JSON.parse(readFileSync(join(out, "small@k=2steps", "run.json"), "utf8")) as { tcod: string; settings: string[]; sweep: { point: string }; sources: { path: string; saved: boolean }[] };
    expect(run.tcod).toBe((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version);
    expect(run.settings).toEqual(["k=2 steps"]);
    expect(run.sweep.point).toBe("small@k=2steps");
    expect(run.sources.find((s) => s.path === "sweep.tcod")?.saved).toBe(true);
    expect(readFileSync(join(out, "small@k=2steps", "source", "sweep.tcod"), "utf8")).toBe(SOURCE);
    expect(existsSync(join(out, "small@k=2steps", "source", "std", "tcod.tcod"))).toBe(true);

    const again = tcod(["run", file, "--sweep", "--out", out]);
    expect(again.status).toBe(0);
    expect(again.stdout.match(/skip {2}small@/g)).toHaveLength(2);

    // The same folder for a sweep that now compiles to other plans: refused, nothing overwritten.
    const other = tcod(["run", file, "--sweep", "--out", out, "--set", "small.steps=5"]);
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/TC7009.*holds a run of a different plan/);
    expect(other.stderr).toContain("hint:");
  }, 300000);

  it("a single run records its settings, version and git commit; a file of several plans names them", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "tcod-run-")), "r");
    const r = tcod(["run", "test/fixtures/plans/texthouse-f2b-small.json", "--out", dir, "-q", "--set", "clock.steps=2"]);
    expect(r.status, r.stderr).toBe(0);
    const rec = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as { settings: string[]; git?: { commit: string } };
    expect(rec.settings).toEqual(["clock.steps=2"]);
    if (existsSync(join(ROOT, ".git"))) expect(rec.git?.commit).toMatch(/^[0-9a-f]{40}$/);
    const { file } = project();
    const many = tcod(["run", file]);
    expect(many.status).toBe(1);
    expect(many.stderr).toContain("compiles to 2 plans (small@k=2steps, small@k=3steps)");
    expect(many.stderr).toContain("--sweep");
  }, 300000);
});

describe("sweep limits and conflicts", () => {
  it("a sweep over the point limit is TC5006 naming its size; --max-points raises the limit; a bad --max-points is TC7009", () => {
    const { file } = project();
    for (const cmd of [["check"], ["compile", "-o", join(mkdtempSync(join(tmpdir(), "tcod-sweep-")), "o")], ["run", "--dry-run"]]) {
      const r = tcod([...cmd, file, "--max-points", "1"]);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain("error TC5006: The sweeps of this file expand to 2 points (grid: 2), more than the limit of 1.");
      const ok = tcod([...cmd, file, "--max-points", "2"]);
      expect(ok.status, ok.stderr).toBe(0);
    }
    const bad = tcod(["check", file, "--max-points", "lots"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/error TC7009: --max-points lots: expected a whole number/);
  });

  it("a million-point sweep is refused before any point is expanded", () => {
    const r = tcod(["run", "--dry-run", join(ROOT, "test/fixtures/sweeps/too-large/input.tcod")]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("expand to 1,000,000 points (grid: 100 × 100 × 100), more than the limit of 1,000");
  });

  it("--set on a swept variable is TC5007 naming it and its values, for --sweep too", () => {
    const { file } = project();
    const r = tcod(["run", "--sweep", file, "--set", "k=5 steps", "--out", join(mkdtempSync(join(tmpdir(), "tcod-sweep-")), "s")]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("error TC5007: `--set k=5 steps` would give every point of sweep 'grid' one value, but the sweep varies 'k' over [2 steps, 3 steps].");
    expect(r.stderr).toContain('--curriculum "small@k=2steps"');
    // Setting a field the sweep does not vary is fine.
    const ok = tcod(["run", "--dry-run", file, "--set", "steps=3"]);
    expect(ok.status, ok.stderr).toBe(0);
  });
});
