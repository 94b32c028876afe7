/**
 * `tcod compare`: seed grouping and the aggregated figures against hand-computed numbers, the CLI's
 * files and errors, and the page in headless Chromium (playwright-core) like report.html.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { chromium } from "playwright-core";
import type { MetricsRow, TrainRowMetrics } from "../../runtime/metrics.js";
import { configDifferences, configOf, cumulativeTime, groupRuns, lateKlPerTurn, meanCurve, methodOf, spread, summarize, type RunData } from "../../runtime/report/compare.js";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8" });

function trainRow(step: number, kl: number, perTurn: number[], time = 1): TrainRowMetrics {
  return {
    kind: "train", step, policyStep: step - 1, policyVersion: step, episodes: 4, successRate: 0, meanReward: 0,
    horizon: step, prefix: 0, expertLength: 0, studentTurns: step, turns: 4 * step, invalidActions: 0, admissibleRate: 1,
    noExperience: 0, droppedFailed: 0, droppedStale: 0, kl: { mean: kl, perTurn }, tokens: { prompt: 100 * step, response: 10 },
    coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null, lr: 0.1, loss: kl, gradNorm: 1, updates: 1, time: { rollout: time },
  };
}
const evalRow = (step: number, name: string, success: number, time: number): MetricsRow =>
  ({ kind: "eval", name, step, successRate: success, meanReward: success, meanTurns: 5, episodes: 8, time: { eval: time } }) as MetricsRow;

/** Two steps, evals at 0 and 2 (valid: a0 then a2; hard: 0 then b). */
function run(name: string, seed: number, sweep: Record<string, string> | undefined, a0: number, a2: number, b: number): RunData {
  return {
    dir: `${name}-${seed}`, plan: { name, clock: { seed } as RunData["plan"]["clock"], ...(sweep ? { sweep } : {}) },
    rows: [evalRow(0, "valid", a0, 2), evalRow(0, "hard", 0, 1), trainRow(1, 2, [1, 3], 3), trainRow(2, 1, [0.5, 1.5, 2.5], 4),
      evalRow(2, "valid", a2, 2), evalRow(2, "hard", b, 1)],
  };
}

describe("tcod compare: figures", () => {
  it("groups seeds: a sweep axis that sets a seed is dropped from the method name, others stay", () => {
    expect(methodOf({ name: "opd@run_seed=2", clock: { seed: 2 } as never, sweep: { run_seed: "2" } })).toBe("opd");
    expect(methodOf({ name: "c@c.seed=3,k=4steps", clock: { seed: 3 } as never, sweep: { "c.seed": "3", k: "4steps" } })).toBe("c@k=4steps");
    expect(methodOf({ name: "c@k=4steps", clock: { seed: 1 } as never, sweep: { k: "4steps" } })).toBe("c@k=4steps");
    expect(methodOf({ name: "plain", clock: { seed: 1 } as never })).toBe("plain");
  });

  it("runs of one name are seeds of one method only where their plans agree apart from seeds and serving URLs", () => {
    // Two sweep points of a study: their plans differ in the seeds (clock, node params, the sweep axis) and in the port each point served on.
    const plan = (seed: number, port: number, teacher: string) => ({
      name: `opd@run_seed=${seed}`, sweep: { run_seed: String(seed) }, clock: { seed, steps: 2 }, sources: [{ path: "a.tcod", sha256: String(seed) }],
      resources: { models: { teacher: { path: teacher, backend: { kind: "worker", url: `http://127.0.0.1:${port}` } } } },
      graph: { nodes: [{ id: "tasks", params: { seed, tasks: 8 } }] },
    });
    const at = (dir: string, p: ReturnType<typeof plan>): RunData => ({ dir: `/runs/${dir}/`, plan: p as unknown as RunData["plan"], rows: [] });
    expect(configOf(plan(1, 8301, "t"))).toBe(configOf(plan(2, 8302, "t")));
    expect(configOf(plan(1, 8301, "t"))).not.toBe(configOf(plan(1, 8301, "u")));
    const runs = [at("a", plan(1, 8301, "t")), at("b", plan(2, 8302, "t")), at("c", plan(1, 8303, "u")), at("d", plan(2, 8304, "u")), at("e", plan(3, 8305, "u"))];
    expect(configDifferences(runs)).toEqual(["resources.models.teacher.path"]);
    expect(configDifferences(runs.slice(0, 2))).toEqual([]);
    // One configuration keeps the method's name; several are named for their run folders (two, then +N).
    expect([...groupRuns(runs.slice(0, 2))].map(([m, rs]) => [m, rs.length])).toEqual([["opd", 2]]);
    expect([...groupRuns(runs)].map(([m, rs]) => [m, rs.map((r) => r.dir)])).toEqual([
      ["opd (a, b)", ["/runs/a/", "/runs/b/"]],
      ["opd (c, d, +1)", ["/runs/c/", "/runs/d/", "/runs/e/"]],
    ]);
  });

  it("mean, sample std, min, max, n (hand-computed)", () => {
    const s = spread([0.2, 0.4, 0.9]);
    expect(s.mean).toBeCloseTo(0.5, 12);
    // Σ(x − 0.5)² = 0.09 + 0.01 + 0.16 = 0.26; / 2 = 0.13
    expect(s.std).toBeCloseTo(Math.sqrt(0.13), 12);
    expect([s.min, s.max, s.n]).toEqual([0.2, 0.9, 3]);
    expect(spread([0.7]).std).toBe(0);
  });

  it("cumulative wall time, final/best/time-to-level per eval set, late per-turn KL, mean curves", () => {
    const r1 = run("m@run_seed=1", 1, { run_seed: "1" }, 0.25, 0.75, 0.5);
    const r2 = run("m@run_seed=2", 2, { run_seed: "2" }, 0.5, 0.25, 0);
    expect(cumulativeTime(r1.rows)).toEqual([2, 3, 6, 10, 12, 13]);
    const s = summarize("m", [r1, r2], 0.5);
    expect(s.seeds).toEqual([1, 2]);
    expect(s.steps).toBe(2);
    expect(s.wallTime.mean).toBe(13);
    expect(s.finalKl.mean).toBe(1);
    const v = s.evals.valid!;
    expect(v.final.mean).toBeCloseTo(0.5, 12);                 // (0.75 + 0.25) / 2
    expect(v.final.std).toBeCloseTo(Math.sqrt(0.125), 12);     // ((0.25² + 0.25²) / 1)
    expect(v.best.mean).toBeCloseTo(0.625, 12);                // (0.75 + 0.5) / 2
    // seed 1 reaches 0.5 at step 2 (wall 12), seed 2 already at step 0 (wall 2)
    expect(v.toLevel).toMatchObject({ level: 0.5, reached: 2 });
    expect(v.toLevel.wallTime!.mean).toBe(7);
    expect(v.toLevel.step!.mean).toBe(1);
    expect(s.evals.hard!.toLevel.reached).toBe(1);
    expect(s.evals.hard!.final.mean).toBe(0.25);
    // last quarter of 2 steps = step 2 only
    expect(lateKlPerTurn(r1.rows)).toEqual([[0, 0.5], [1, 1.5], [2, 2.5]]);
    expect(meanCurve([[[0, 1], [1, 3]], [[0, 3], [2, 5]]])).toEqual([{ x: 0, mean: 2, min: 1, max: 3 }]);
  });
});

function writeRun(root: string, r: RunData): string {
  const dir = join(root, r.dir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plan.json"), JSON.stringify(r.plan));
  writeFileSync(join(dir, "metrics.jsonl"), r.rows.map((x) => JSON.stringify(x)).join("\n") + "\n");
  return dir;
}

describe("tcod compare: CLI", () => {
  it("writes the page and the JSON table; a folder that is not a run is a user error with a hint, no stack", () => {
    const root = mkdtempSync(join(tmpdir(), "tcod-compare-"));
    const dirs = [run("m@run_seed=1", 1, { run_seed: "1" }, 0.25, 0.75, 0.5), run("m@run_seed=2", 2, { run_seed: "2" }, 0.5, 0.25, 0), run("other", 1, undefined, 0, 1, 1)]
      .map((r) => writeRun(root, r));
    const out = join(root, "c.html"), json = join(root, "c.json");
    const ok = tcod("compare", ...dirs, "--out", out, "--json", json);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^m\s+runs 2 \(seed 1, 2\)/m);
    const table = JSON.parse(readFileSync(json, "utf8"));
    expect(table.methods.map((m: { method: string }) => m.method)).toEqual(["m", "other"]);
    expect(table.methods[0].evals.valid.final.mean).toBeCloseTo(0.5, 12);
    expect(existsSync(out)).toBe(true);
    const bad = tcod("compare", dirs[0]!, join(root, "nope"), "--out", out);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/nope error TC7009: no such folder/);
    expect(bad.stderr).toContain("hint:");
    expect(bad.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(tcod("compare", dirs[0]!, "--level", "2").status).toBe(1);
    // Two runs of one curriculum at one seed with another teacher (`tcod run --set`): two rows, and the CLI says why.
    const other = run("m@run_seed=1", 1, { run_seed: "1" }, 0, 0, 0);
    const t = (r: RunData, teacher: string): RunData => ({ ...r, dir: `${teacher}-run`, plan: { ...r.plan, resources: { models: { teacher: { path: teacher } } } } as RunData["plan"] });
    const two = [t(other, "x"), t(other, "y")].map((r) => writeRun(root, r));
    const split = tcod("compare", ...two, "--out", out, "--json", json);
    expect(split.status, split.stderr).toBe(0);
    expect(split.stdout).toContain("m: 2 configurations, not seeds of one (the plans differ in resources.models.teacher.path); each is its own row");
    expect(JSON.parse(readFileSync(json, "utf8")).methods.map((m: { method: string }) => m.method)).toEqual(["m (x-run)", "m (y-run)"]);
  });

  it("a folder named twice (again, with a slash, through a link, by its metrics.jsonl) is one run, with a note", () => {
    const root = mkdtempSync(join(tmpdir(), "tcod-compare-"));
    const a = writeRun(root, run("m@run_seed=1", 1, { run_seed: "1" }, 0.25, 0.75, 0.5));
    const b = writeRun(root, run("m@run_seed=2", 2, { run_seed: "2" }, 0.5, 0.25, 0));
    symlinkSync(a, join(root, "link"));
    const json = join(root, "c.json");
    const r = tcod("compare", a, b, a, `${a}/`, join(root, "link"), join(a, "metrics.jsonl"), "--out", join(root, "c.html"), "--json", json);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^m\s+runs 2 \(seed 1, 2\)/m);
    expect(JSON.parse(readFileSync(json, "utf8")).methods[0].seeds).toEqual([1, 2]);
    expect(r.stderr.match(/is the run folder .* again; it is counted once/g)).toHaveLength(4);
  });

  it("a run with an empty metrics.jsonl (or only the evaluation before step 1) is left out of the means, with a warning and a note on the page (was: a seed at steps 0)", () => {
    const root = mkdtempSync(join(tmpdir(), "tcod-compare-"));
    const a = writeRun(root, run("m@run_seed=1", 1, { run_seed: "1" }, 0.25, 0.75, 0.5));
    const b = writeRun(root, run("m@run_seed=2", 2, { run_seed: "2" }, 0.5, 0.25, 0));
    const empty = writeRun(root, { ...run("m@run_seed=3", 3, { run_seed: "3" }, 0, 0, 0), dir: "empty" });
    writeFileSync(join(empty, "metrics.jsonl"), "");
    const evalOnly = writeRun(root, { ...run("m@run_seed=4", 4, { run_seed: "4" }, 0, 0, 0), dir: "eval-only" });
    writeFileSync(join(evalOnly, "metrics.jsonl"), JSON.stringify(evalRow(0, "valid", 0, 1)) + "\n");
    const out = join(root, "c.html"), json = join(root, "c.json");
    const r = tcod("compare", a, empty, b, evalOnly, "--out", out, "--json", json);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^m\s+runs 2 \(seed 1, 2\)\s+steps 2 /m);
    expect(r.stderr).toContain(`tcod compare: warning: ${empty} is left out: its metrics.jsonl is empty`);
    expect(r.stderr).toContain(`tcod compare: warning: ${evalOnly} is left out: its metrics.jsonl holds no training step`);
    const table = JSON.parse(readFileSync(json, "utf8"));
    expect(table.methods[0]).toMatchObject({ seeds: [1, 2], steps: 2 });
    expect(table.methods[0].evals.valid.final.mean).toBeCloseTo(0.5, 12);
    expect(table.leftOut.map((l: { dir: string }) => l.dir)).toEqual([empty, evalOnly]);
    const page = readFileSync(out, "utf8");
    expect(page).toContain(`Left out: ${empty}: its metrics.jsonl is empty`);
    expect(page).toContain("2 runs, 1 methods");
    // Nothing left to compare: a coded error, no page.
    const none = tcod("compare", empty, "--out", join(root, "none.html"));
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/empty error TC7009: nothing to compare: the run has no training step/);
    expect(none.stderr).toContain("hint:");
    expect(existsSync(join(root, "none.html"))).toBe(false);
  });
});

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && !process.env.CI) console.warn(`compare.test: Chromium check skipped — ${CHROMIUM} is missing; in CI it runs`);

describe.skipIf(!available && !process.env.CI)("compare.html in headless Chromium", () => {
  it("overlays methods (mean points, min–max bands), with the summary table", async () => {
    const root = mkdtempSync(join(tmpdir(), "tcod-compare-ui-"));
    const dirs = [run("m@run_seed=1", 1, { run_seed: "1" }, 0.25, 0.75, 0.5), run("m@run_seed=2", 2, { run_seed: "2" }, 0.5, 0.25, 0), run("other", 1, undefined, 0, 1, 1)]
      .map((r) => writeRun(root, r));
    const out = join(root, "c.html");
    expect(tcod("compare", ...dirs, "--out", out, "--title", "study").status).toBe(0);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
    try {
      const page = await browser.newPage();
      const errors: string[] = [], requests: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
      await page.goto(pathToFileURL(out).href);
      expect(await page.title()).toBe("study");
      expect(await page.locator("#summary tr[data-method]").count()).toBe(2);
      const ys = await page.locator('#success-step-1 [data-series="m"] circle.pt').evaluateAll((els) => els.map((e) => [Number(e.getAttribute("data-x")), Number(e.getAttribute("data-y"))]));
      expect(ys).toEqual([[0, 0.375], [2, 0.5]]); // "valid" is eval set 1 (sorted: hard, valid)
      expect(await page.locator('#success-step-1 [data-series="m"] polygon.band').count()).toBe(1);
      expect(await page.locator('#success-step-1 [data-series="other"] polygon.band').count()).toBe(0);
      expect(await page.locator('#success-time-1 [data-series="m"] circle.pt').count()).toBe(2);
      expect(await page.locator('#kl-per-turn [data-series="m"] circle.pt').count()).toBe(3);
      expect(await page.locator('#horizon [data-series="other"] circle.pt').count()).toBe(2);
      const box = await page.locator("#success-step-1 svg").boundingBox();
      expect(box && box.width > 100 && box.height > 100).toBe(true);
      expect(errors).toEqual([]);
      expect(requests).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
