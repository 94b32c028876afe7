/**
 * `tcod run` end to end through the built CLI (dist/tcod.js): a plain run, Ctrl-C (SIGINT →
 * checkpoint, exit 130) and `--resume`, a SIGKILL at an arbitrary point and `--resume` from the last
 * periodic checkpoint, and bad input (a plan failing schema validation) → exit 1 with the JSON path.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readMetrics } from "../../runtime/metrics.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");
const PLAN = join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json");
const tmp = () => mkdtempSync(join(tmpdir(), "tcod-cli-"));
const metrics = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).map(({ time: _t, ...rest }) => rest);

/** Runs the CLI; `until(stdout)` true → send `signal` once. */
function tcod(args: string[], kill?: { until: (out: string) => boolean; signal: NodeJS.Signals }): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "", sent = false;
    p.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      if (kill && !sent && kill.until(out)) { sent = true; p.kill(kill.signal); }
    });
    p.stderr.on("data", (b: Buffer) => { err += b.toString(); });
    p.on("close", (code, signal) => done({ code, signal, out, err }));
  });
}

beforeAll(() => {
  if (!existsSync(join(ROOT, "dist/tcod.js"))) spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
});

describe("tcod run (CLI)", () => {
  let fullDir = "";
  it("runs a plan to completion, prints where the report is", async () => {
    fullDir = tmp();
    const r = await tcod(["run", PLAN, "--out", fullDir]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("step 6/6");
    expect(r.out).toContain(`report: ${join(fullDir, "report.html")}`);
    expect(existsSync(join(fullDir, "report.html"))).toBe(true);
    expect(metrics(fullDir).filter((m) => m.kind === "train")).toHaveLength(6);
  });

  it("Ctrl-C checkpoints and exits 130; --resume finishes with the same metrics", async () => {
    const dir = tmp();
    const r = await tcod(["run", PLAN, "--out", dir], { until: (o) => o.includes("step 2/6"), signal: "SIGINT" });
    expect(r.code).toBe(130);
    expect(r.out).toMatch(/interrupted after step \d; resume with --resume/);
    const again = await tcod(["run", "--resume", dir, "--quiet"]);
    expect(again.code).toBe(0);
    expect(metrics(dir)).toEqual(metrics(fullDir));
  });

  it("SIGTERM and SIGHUP (schedulers, a closed terminal) checkpoint like Ctrl-C: exit 143/129; --resume finishes", async () => {
    for (const [signal, code] of [["SIGTERM", 143], ["SIGHUP", 129]] as const) {
      const dir = tmp();
      const r = await tcod(["run", PLAN, "--out", dir], { until: (o) => o.includes("step 2/6"), signal });
      expect(r.code).toBe(code);
      expect(r.out).toMatch(/interrupted after step \d; resume with --resume/);
      const state = JSON.parse(readFileSync(join(dir, "checkpoint", "state.json"), "utf8")) as { learnerStep: number };
      expect(state.learnerStep).toBeGreaterThanOrEqual(2);
      const again = await tcod(["run", "--resume", dir, "--quiet"]);
      expect(again.code).toBe(0);
      expect(metrics(dir)).toEqual(metrics(fullDir));
    }
  });

  it("SIGKILL mid-run: --resume continues from the last checkpoint and ends identical", async () => {
    const dir = tmp();
    const r = await tcod(["run", PLAN, "--out", dir], { until: (o) => o.includes("step 3/6"), signal: "SIGKILL" });
    expect(r.signal).toBe("SIGKILL");
    const again = await tcod(["run", "--resume", dir, "--quiet"]);
    // The killed run could not remove its run.lock; the resume takes it over and says so, nothing else.
    expect(again.err).toMatch(/^tcod run: note: \S+run\.lock was left by pid \d+ \(started [^)]+\), which has ended; taking the run folder over\n$/);
    expect(again.code).toBe(0);
    expect(metrics(dir)).toEqual(metrics(fullDir));
  });

  it("a plan failing schema validation: exit 1, the JSON path named, no stack trace", async () => {
    const bad = JSON.parse(readFileSync(PLAN, "utf8"));
    bad.clock.steps = 0;
    delete bad.resources.envs.train.pool;
    const file = join(tmp(), "bad.json");
    writeFileSync(file, JSON.stringify(bad));
    const r = await tcod(["run", file, "--out", tmp()]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("at $.clock.steps");
    expect(r.err).toContain("at $.resources.envs.train.pool");
    expect(r.err).not.toMatch(/\n\s+at .*\.(m?js|ts):\d+/);
  });

  it("refuses to overwrite a run folder, and --set on a plan JSON names unknown paths", async () => {
    const r = await tcod(["run", PLAN, "--out", fullDir]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`--resume ${fullDir}`);
    const s = await tcod(["run", PLAN, "--out", tmp(), "--set", "clock.stepz=3"]);
    expect(s.code).toBe(1);
    expect(s.err).toContain("the plan has no field clock.stepz");
  });
});
