/**
 * `tcod explain` and `tcod plot` on a feedback-paced curriculum: without a trace they print what is
 * known and stop with TC7012 (exit 1); with a synthetic trace they show what the schedule would have
 * done on it; a broken trace is TC7013 with its line, and so is one without a training row to replay.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const EX = "examples/texthouse/paced-f2b.tcod";
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8" });
const dir = mkdtempSync(join(tmpdir(), "tcod-fbcli-"));
// KL 0.1 on every step: kl_settled(below: 0.6) holds from the first observation, so (patience 1)
// the stage advances after every finished step; the clock min(1 + floor(t/1), 20) is the upper bound
// (one turn ahead of 1 + stage, so the stage decides: H(t) = t up to 20).
const trace = join(dir, "trace.jsonl");
writeFileSync(trace, Array.from({ length: 40 }, (_, i) => JSON.stringify({ step: i + 1, kl: 0.1 })).join("\n") + "\n");

describe("explain/plot --trace", () => {
  it("explain without a trace: the rule, its level and origin, then TC7012", () => {
    const r = tcod("explain", EX, "texthouse_paced_f2b.horizon");
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("level:  feedback");
    expect(r.stdout).toContain("stage(ema(feedback.kl, 0.5, 0) < 0.6, 1, 19)");
    expect(r.stderr).toMatch(/error TC7012: texthouse_paced_f2b\.horizon is feedback-level/);
    expect(r.stderr).toContain("hint: Give a metrics trace");
  });

  it("explain --trace: the values on the trace and every stage advance", () => {
    const r = tcod("explain", EX, "texthouse_paced_f2b.horizon", "--trace", trace, "--at", "1,2,3,4,5,10", "--json");
    expect(r.status, r.stderr).toBe(0);
    const e = JSON.parse(r.stdout.trim().split("\n").pop()!) as { table: { label?: string; values: { value: number }[] }[]; stages: { advances: { step: number; observed: number }[] }[] };
    // stage: observations from step 1 on; advances after observing steps 1, 2, 3, …; in force from 2, 3, 4, …
    expect(e.table[0]!.values.map((v) => v.value)).toEqual([1, 2, 3, 4, 5, 10]);
    expect(e.table.find((t) => t.label === "stage#1")!.values.map((v) => v.value)).toEqual([0, 1, 2, 3, 4, 9]);
    expect(e.stages[0]!.advances.slice(0, 3)).toMatchObject([{ step: 2, observed: 1 }, { step: 3, observed: 2 }, { step: 4, observed: 3 }]);
  });

  it("plot: TC7012 without a trace (the clock-only schedules still plotted); with one, the horizon and the stage", () => {
    const a = tcod("plot", EX);
    expect(a.status).toBe(1);
    expect(a.stdout).toMatch(/horizon\s+feedback-level: needs a metrics trace/);
    expect(a.stdout).toMatch(/lr\s+/);
    expect(a.stderr).toContain("TC7012");
    const b = tcod("plot", EX, "--trace", trace, "--out", join(dir, "svg"));
    expect(b.status, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/horizon .* 1 → 20/);
    expect(b.stdout).toMatch(/stage#1 .* 0 → 19/);
    expect(readFileSync(join(dir, "svg", "texthouse_paced_f2b.schedules.svg"), "utf8")).toContain("stage#1 (on the trace)");
  });

  it("a broken trace is TC7013 naming its line; a missing one TC7009", () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, '{"step": 1, "kl": 0.1}\n{"step": 2, "kl": "high"}\n');
    const r = tcod("explain", EX, "texthouse_paced_f2b.horizon", "--trace", bad);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bad\.jsonl:2:1 error TC7013: line 2: `kl` is "high"/);
    expect(tcod("plot", EX, "--trace", join(dir, "nope.jsonl")).stderr).toContain("TC7009");
  });

  it("a trace without a training row (empty, evaluation rows only) is TC7013 for explain and plot alike (was: plot replayed it silently as all zeros)", () => {
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    const evals = join(dir, "evals");
    mkdirSync(evals, { recursive: true });
    writeFileSync(join(evals, "metrics.jsonl"), '{"kind": "eval", "name": "valid", "step": 0, "successRate": 0}\n');
    for (const [t, file, why] of [[empty, empty, "it is empty"], [evals, join(evals, "metrics.jsonl"), "it holds only evaluation rows, or a row cut short"]] as const) {
      for (const cmd of [["explain", EX, "texthouse_paced_f2b.horizon"], ["plot", EX]]) {
        const r = tcod(...cmd, "--trace", t);
        expect(r.status, r.stderr).toBe(1);
        expect(r.stderr).toContain(`${file} error TC7013: --trace ${t}: the trace has no training row to replay (${why})`);
        expect(r.stderr).toContain("hint: A trace replays the steps a run trained");
        expect(r.stdout).toBe("");
      }
    }
  });

  it("--trace RUN/metrics.jsonl that is a folder: TC7009 saying it is a folder (was: \"the folder has no metrics.jsonl\")", () => {
    const run = join(dir, "run-with-folder");
    mkdirSync(join(run, "metrics.jsonl"), { recursive: true });
    for (const cmd of [["explain", EX, "texthouse_paced_f2b.horizon"], ["plot", EX]]) {
      const r = tcod(...cmd, "--trace", join(run, "metrics.jsonl"));
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`error TC7009: --trace ${join(run, "metrics.jsonl")}: a folder, not a metrics file (and no run folder: it holds no metrics.jsonl)`);
      // The run folder itself: its metrics.jsonl named, and said to be a folder.
      expect(tcod(...cmd, "--trace", run).stderr).toContain(`error TC7009: --trace ${run}: cannot read ${join(run, "metrics.jsonl")}: it is a folder, not a file`);
      const none = join(dir, "no-metrics");
      mkdirSync(none, { recursive: true });
      expect(tcod(...cmd, "--trace", none).stderr).toContain(`error TC7009: --trace ${none}: a folder with no metrics.jsonl in it`);
    }
  });

  it("a trace of a live run (its last line cut short) reads up to that line, with a note, as `tcod metrics` does", () => {
    const live = join(dir, "live");
    mkdirSync(live, { recursive: true });
    const whole = readFileSync(trace, "utf8").split("\n").slice(0, 3).join("\n") + "\n";
    writeFileSync(join(live, "metrics.jsonl"), whole + '{"step": 4, "kl": {"mea');
    for (const cmd of [["explain", EX, "texthouse_paced_f2b.horizon", "--trace", live, "--at", "1,4"], ["plot", EX, "--trace", live]]) {
      const r = tcod(...cmd);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/metrics\.jsonl:4: note: the last line is not a whole row yet/);
    }
  });

  it("a null or non-finite KL is TC7013, never read as 0 (it would advance a stage)", () => {
    for (const [kl, msg] of [["null", "`kl` is null"], ['{"mean": null, "perTurn": "x"}', "`kl.perTurn` is \"x\", not a list"], ['{"mean": null}', "`kl.mean` is null"], ["1e400", "`kl` is a number too large for a double, not a finite number"]] as const) {
      const bad = join(dir, "kl.jsonl");
      writeFileSync(bad, `{"step": 1, "kl": ${kl}}\n`);
      const r = tcod("explain", EX, "texthouse_paced_f2b.horizon", "--trace", bad);
      expect(r.status, kl).toBe(1);
      expect(r.stderr).toContain(`kl.jsonl:1:1 error TC7013: line 1: ${msg}`);
      expect(r.stderr).toContain("hint:");
    }
  });
});
