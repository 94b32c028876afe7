/**
 * `tcod run FILE --sweep`: every point in its own run folder under one sweep folder, resumable
 * (finished points skipped, an interrupted one resumed to the same metrics); `--dry-run` and
 * `--print-config`; what a run folder records (run.json, source/, the point's stderr.log).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
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

  it("--dry-run shows the run folder, seed and logging the flags give (was: --out without --sweep silently ignored); --out for several points without --sweep is refused, as the run would be", () => {
    const { dir, file } = project();
    const out = join(dir, "r");
    const one = tcod(["run", file, "--dry-run", "--curriculum", "small@k=2steps", "--out", out, "--seed", "-3", "--no-tensorboard"]);
    expect(one.status, one.stderr).toBe(0);
    expect(one.stdout.split("\n").slice(0, 2)).toEqual([`${file}: 1 point → ${out}`, "  the run: seed -3 (--seed), no TensorBoard event files (--no-tensorboard)"]);
    const json = JSON.parse(tcod(["run", file, "--dry-run", "--curriculum", "small@k=2steps", "--out", out, "--wandb", "p", "--json"]).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ ok: true, dryRun: true, out, wandb: "p" });
    const sweep = tcod(["run", file, "--dry-run", "--sweep", "--parallel", "2", "--out", out]);
    expect(sweep.stdout.split("\n").slice(0, 2)).toEqual([`${file}: 2 points → ${out}`, "  the run: 2 points at a time (--parallel)"]);
    const many = tcod(["run", file, "--dry-run", "--out", out]);
    expect(many.status).toBe(1);
    expect(many.stderr).toContain(`tcod run error TC7009: --out ${out}: a run folder holds one run, and ${file} compiles to 2 plans`);
    expect(many.stderr).toContain("hint: Add --sweep");
    expect(existsSync(out)).toBe(false);
  });

  it("--print-config refuses the flags of a run it does not make (was: --out, --seed, --sweep, --dry-run, --no-tensorboard, --wandb silently ignored)", () => {
    const { file } = project();
    for (const [flags, flag] of [[["--out", "x"], "--out"], [["--seed", "3"], "--seed"], [["--sweep"], "--sweep"], [["--dry-run"], "--dry-run"], [["--no-tensorboard"], "--no-tensorboard"], [["--wandb", "p"], "--wandb"]] as const) {
      const r = tcod(["run", file, "--print-config", ...flags]);
      expect(r.status, flag).toBe(1);
      expect(r.stderr).toContain(`tcod run error TC7009: ${flag} has no effect with --print-config`);
      expect(r.stderr).toContain(`hint: --print-config prints the resolved curriculum and runs nothing`);
    }
  });

  it("passes --no-tensorboard on to every point, and --quiet keeps only the summary (were: silently ignored by a sweep)", () => {
    const { dir, file } = project();
    const out = join(dir, "quiet");
    const r = tcod(["run", file, "--sweep", "--out", out, "--no-tensorboard", "--quiet"]);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).not.toMatch(/^start /m);
    expect(r.stdout).toContain("2/2 points completed");
    for (const p of ["small@k=2steps", "small@k=3steps"]) {
      expect(existsSync(join(out, p, "metrics.jsonl"))).toBe(true);
      expect(readdirSync(join(out, p)).filter((f) => f.startsWith("events.out.tfevents."))).toEqual([]);
    }
  }, 300000);

  it("a point whose folder holds another plan's run refuses the sweep before any plan is written (was: the points before it written into plans/)", () => {
    const { dir, file } = project();
    const out = join(dir, "s");
    mkdirSync(join(out, "small@k=3steps"), { recursive: true });
    writeFileSync(join(out, "small@k=3steps", "plan.json"), "{}\n");
    const r = tcod(["run", file, "--sweep", "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`TC7009: ${join(out, "small@k=3steps")} holds a run of a different plan than sweep point small@k=3steps compiles to now`);
    expect(existsSync(join(out, "plans"))).toBe(false);
    expect(existsSync(join(out, "sweep.json"))).toBe(false);
  });

  it("a refused sweep leaves its --out folder as it was: the folder's mtime unchanged (was: made and probed before the points were checked)", () => {
    const { dir, file } = project();
    const out = join(dir, "kept");
    mkdirSync(join(out, "small@k=3steps"), { recursive: true });
    writeFileSync(join(out, "small@k=3steps", "plan.json"), "{}\n");
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(out, past, past);
    const before = statSync(out).mtimeMs;
    const r = tcod(["run", file, "--sweep", "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("holds a run of a different plan");
    expect(readdirSync(out)).toEqual(["small@k=3steps"]);
    expect(statSync(out).mtimeMs).toBe(before);
  });

  it("--wandb without the wandb package is refused once, before any point starts, with TC7011 and a hint; no folder is made (was: every point failed)", () => {
    const { dir, file } = project();
    const out = join(dir, "wb");
    const r = spawnSync(process.execPath, [CLI, "run", file, "--sweep", "--out", out, "--wandb", "p"], { cwd: ROOT, encoding: "utf8", env: { ...process.env, TCOD_PYTHON: "/nonexistent/python" } });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("tcod run error TC7011: --wandb: W&B logging did not start (cannot run /nonexistent/python)\n" +
      "  hint: Install the wandb package for /nonexistent/python (pip install wandb), or point TCOD_PYTHON at a Python that has it; WANDB_MODE=offline logs without an account.\n");
    expect(r.stdout).not.toMatch(/^start /m);
    expect(existsSync(out)).toBe(false);
  });

  it("--wandb with a Python that has wandb: checked once, then every point logs to the project (a stand-in for wandb_sink.py's Python)", () => {
    const { dir, file } = project();
    const out = join(dir, "wb-ok"), lines = join(dir, "sink-lines.jsonl"), fake = join(dir, "fake-python");
    // Answers as wandb_sink.py does ("loaded", then "ready" on init) and keeps every line it is sent.
    writeFileSync(fake, `#!${process.execPath}\nconsole.log("loaded");\nrequire("readline").createInterface({ input: process.stdin }).on("line", (l) => {\n` +
      `  require("fs").appendFileSync(${JSON.stringify(lines)}, l + "\\n");\n  if (JSON.parse(l).init) console.log("ready");\n});\n`, { mode: 0o755 });
    const r = spawnSync(process.execPath, [CLI, "run", file, "--sweep", "--out", out, "--wandb", "p", "--no-tensorboard"], { cwd: ROOT, encoding: "utf8", env: { ...process.env, TCOD_PYTHON: fake } });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain("2/2 points completed");
    const sent = readFileSync(lines, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { init?: { project: string; name: string } });
    expect(sent.filter((m) => m.init).map((m) => [m.init!.project, m.init!.name]).sort()).toEqual([["p", "small@k=2steps"], ["p", "small@k=3steps"]]);
    for (const p of ["small@k=2steps", "small@k=3steps"]) expect(readFileSync(join(out, p, "wandb-id"), "utf8")).toMatch(/^[0-9a-f]{12}\n$/);
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

describe("a sweep point's stderr", () => {
  it("is kept in the point's stderr.log, one header per attempt; the summary names a completed point's warnings and notes; a failed point's stderr is shown", () => {
    const { dir, file } = project();
    writeFileSync(file, SOURCE.replace("k: [2 steps, 3 steps]", "k: [2 steps, 3 steps, 4 steps]"));
    const out = join(dir, "out");
    expect(tcod(["compile", file, "--out", join(dir, "plans")]).status).toBe(0);
    // small@k=2steps restarts (rows but no checkpoint: a note) with a run.json that is not JSON (a warning);
    // small@k=4steps has rows but no plan.json, so it fails; small@k=3steps runs quietly.
    const warned = join(out, "small@k=2steps"), failing = join(out, "small@k=4steps");
    mkdirSync(warned, { recursive: true });
    mkdirSync(failing, { recursive: true });
    writeFileSync(join(warned, "plan.json"), readFileSync(join(dir, "plans", "small@k=2steps.plan.json")));
    writeFileSync(join(warned, "metrics.jsonl"), "x\n");
    writeFileSync(join(warned, "run.json"), "not json");
    writeFileSync(join(failing, "metrics.jsonl"), "\n");

    const r = tcod(["run", file, "--sweep", "--out", out]);
    expect(r.status).toBe(1);
    const log = readFileSync(join(warned, "stderr.log"), "utf8");
    expect(log).toMatch(/^--- \S+ restart small@k=2steps ---\n/);
    expect(log).toContain("tcod run: note: ");
    expect(log).toContain("before-restart-1");
    expect(log).toMatch(/tcod run: warning: .*run\.json is not JSON/);
    expect(log).toMatch(/--- \S+ completed, exit 0, [\d.]+ s ---\n$/);
    const named = `1 warning and 1 note in ${join(warned, "stderr.log")}`;
    expect(r.stdout).toContain(`completed   small@k=2steps (`);
    expect(r.stdout).toContain(`  small@k=2steps: ${named}\n`);
    // The quiet point has a log of its header and footer alone, and no line in the summary.
    expect(readFileSync(join(out, "small@k=3steps", "stderr.log"), "utf8").split("\n").filter((l) => l && !l.startsWith("--- "))).toEqual([]);
    expect(r.stdout).not.toMatch(/small@k=3steps: /);
    // The failed point's stderr is shown (and kept); the summary does not name it again.
    expect(r.stdout).toMatch(/failed {6}small@k=4steps \([\d.]+ s\)\n {6}.*error TC7014: cannot resume: .*plan\.json is missing/);
    expect(r.stdout).not.toMatch(/small@k=4steps: /);
    expect(readFileSync(join(failing, "stderr.log"), "utf8")).toContain("error TC7014");

    // Run again: the completed points are skipped and still named; the failed one runs again, appending a second attempt.
    const again = tcod(["run", file, "--sweep", "--out", out, "--json"]);
    expect(again.status).toBe(1);
    const res = JSON.parse(again.stdout) as { points: { name: string; stderrLog?: { path: string; warnings: number; notes: number } }[] };
    expect(res.points.find((p) => p.name === "small@k=2steps")?.stderrLog).toEqual({ path: join(warned, "stderr.log"), warnings: 1, notes: 1 });
    expect(res.points.find((p) => p.name === "small@k=3steps")?.stderrLog).toEqual({ path: join(out, "small@k=3steps", "stderr.log"), warnings: 0, notes: 0 });
    expect(readFileSync(join(failing, "stderr.log"), "utf8").match(/^--- \S+ restart small@k=4steps ---$/gm)).toHaveLength(2);
    expect(readFileSync(join(warned, "stderr.log"), "utf8")).toBe(log);
    const text = tcod(["run", file, "--sweep", "--out", out]);
    expect(text.stdout).toContain(`  small@k=2steps: ${named}\n`);
  }, 300000);

  it("a folder in the place of a point's stderr.log is TC7009 naming it, before any point starts", () => {
    const { dir, file } = project();
    const out = join(dir, "out");
    mkdirSync(join(out, "small@k=3steps", "stderr.log"), { recursive: true });
    const r = tcod(["run", file, "--sweep", "--out", out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`error TC7009: ${join(out, "small@k=3steps", "stderr.log")} cannot be written (it is a folder, not a file)`);
    expect(r.stderr).toContain("hint: Move");
    expect(existsSync(join(out, "small@k=2steps", "metrics.jsonl"))).toBe(false);
  });
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
