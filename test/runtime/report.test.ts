/**
 * Opens a generated report.html in headless Chromium (playwright-core) and checks that the plots
 * exist and carry data points. Skipped only when Chromium is absent and CI is not set.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { chromium } from "playwright-core";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics } from "../../runtime/metrics.js";
import { writeReport } from "../../runtime/report/index.js";
import { CounterEnv, ScriptedStudent, ScriptedTeacher } from "./doubles.js";
import { testPlan } from "./plans.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && !process.env.CI) {
  console.warn(`report.test: skipped — ${CHROMIUM} is missing (apt-get install -y chromium); in CI this test runs and fails instead`);
}

describe.skipIf(!available && !process.env.CI)("report.html in headless Chromium", () => {
  it("has the success, KL-per-turn and schedule plots, each with data points", async () => {
    const runDir = mkdtempSync(join(tmpdir(), "tcod-report-"));
    const plan = testPlan({ horizon: "f2b", k: 2, steps: 6, evalEvery: 2, grpo: true, rolloutsPerTask: 2 });
    const student = new ScriptedStudent();
    await runPlan(plan, {
      runDir, models: async () => ({ student, teacher: new ScriptedTeacher(), tokenizer: student.tokenizer }),
      envFactory: () => new CounterEnv(),
    });
    const path = writeReport(runDir, plan, readMetrics(join(runDir, "metrics.jsonl")), { status: "completed" });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      const requests: string[] = [];
      page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
      await page.goto(pathToFileURL(path).href);
      expect(await page.title()).toContain("test-run");
      // success: a train series with one point per step, an eval series at steps 0, 2, 4, 6
      expect(await page.locator('#success [data-series="train"] circle.pt').count()).toBe(6);
      const evalSteps = await page.locator('#success [data-series="eval valid"] circle.pt').evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-x"))));
      expect(evalSteps).toEqual([0, 2, 4, 6]);
      // KL per turn: one cell per (step, turn index) that had turns; horizon 1 at step 1 → one cell
      const cells = await page.locator("#kl-per-turn rect.cell").evaluateAll((els) => els.map((e) => [Number(e.getAttribute("data-x")), Number(e.getAttribute("data-turn")), Number(e.getAttribute("data-value"))]));
      expect(cells.filter(([x]) => x === 1)).toEqual([[1, 0, -0.25]]);
      expect(cells.length).toBeGreaterThan(6);
      // schedules: the horizon series is min(1 + floor(t/2), 8) at t = 1..6
      const horizon = await page.locator('#schedules [data-series="horizon"] circle.pt').evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-y"))));
      expect(horizon).toEqual([1, 2, 2, 3, 3, 4]);
      expect(await page.locator('#weights [data-series="κ (opd)"] circle.pt').count()).toBe(6);
      expect(await page.locator('#weights [data-series="ρ (grpo)"] circle.pt').count()).toBe(6);
      // rendered, visible, self-contained
      const box = await page.locator("#success svg").boundingBox();
      expect(box && box.width > 100 && box.height > 100).toBe(true);
      expect(errors).toEqual([]);
      expect(requests).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
