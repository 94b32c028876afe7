/**
 * What report.html shows a person beyond the training curves: the update's loss, gradient norm and
 * learning rate; the KL plots saying what they measure (k1) and the estimator the loss uses; the
 * horizon visible under the student-turns line; the resolved curriculum of a .tcod run; sample
 * episodes turn by turn with each turn's KL. Opened in headless Chromium.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { chromium } from "playwright-core";

const ROOT = resolve(import.meta.dirname, "../..");
const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);

const SOURCE = `import { opd } from "std/loss"
import { f2b } from "std/tcod"
import { texthouse } from "std/envs"

model m { path: "x" }

curriculum panels {
  teacher:   m
  student:   m
  env:       texthouse()
  steps:     3
  batch:     2 tasks × 1 rollout
  horizon:   f2b(every: 1 step, max: 4 turns)
  loss:      opd(estimator: "full")
  optimizer: adam(lr: 0.05, eps: 1e-6)
}
`;

describe.skipIf(!available && !process.env.CI)("report.html panels", () => {
  it("plots loss, grad norm and lr; names the estimator; shows the horizon and the resolved curriculum", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-panels-"));
    writeFileSync(join(dir, "package.json"), "{}");
    writeFileSync(join(dir, "panels.tcod"), SOURCE);
    const run = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", join(dir, "panels.tcod"), "--out", join(dir, "run"), "-q"], { cwd: ROOT, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(readFileSync(join(dir, "run", "config.txt"), "utf8")).toMatch(/loss:\s+1 × opd/);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(join(dir, "run", "report.html")).href);
      for (const id of ["loss", "grad-norm", "lr"]) expect(await page.locator(`#${id} circle.pt`).count(), id).toBe(3);
      const lrs = await page.locator("#lr circle.pt").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-y"))));
      expect(lrs).toEqual([0.05, 0.05, 0.05]);
      const klCaption = await page.locator("#kl-per-turn figcaption").textContent();
      expect(klCaption).toContain("k1 estimate");
      expect(klCaption).toContain("the loss uses the exact full-vocabulary KL");
      // The horizon (1, 2, 3 turns) equals the student turns here: it is drawn wide beneath them.
      const width = await page.locator('#schedules [data-series="horizon"] polyline').getAttribute("stroke-width");
      expect(Number(width)).toBeGreaterThan(Number(await page.locator('#schedules [data-series="student turns"] polyline').getAttribute("stroke-width")));
      const config = await page.locator("#config pre").textContent();
      expect(config).toContain("curriculum panels {");
      expect(config).toMatch(/horizon:\s+min\(1 \+ floor\(step \/ 1\) \* 1, 4\)/);
      expect(config).toMatch(/staleness:.*\/\/ default/);
      // Sample episodes: 2 per step (3 steps, all sampled) in episodes.jsonl; the report shows steps 1 and 3.
      const samples = readFileSync(join(dir, "run", "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { step: number; turns: { observation: string; kl: number }[] });
      expect(samples.map((s) => s.step)).toEqual([1, 1, 2, 2, 3, 3]);
      const episodes = page.locator("#episodes details.episode");
      expect(await episodes.count()).toBe(4);
      expect(await episodes.locator("summary").allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^step 1 · episode 0/), expect.stringMatching(/^step 3 · episode/)]));
      const first = samples[0]!.turns[0]!;
      const firstRow = episodes.first().locator("tbody tr").first();
      expect(await firstRow.locator("td").nth(1).textContent()).toBe(first.observation);
      expect(Number.parseFloat((await firstRow.locator("td.kl").textContent())!)).toBeCloseTo(first.kl, 3);
      expect(await episodes.first().locator("tbody tr").count()).toBe(samples[0]!.turns.length);
    } finally {
      await browser.close();
    }
  }, 180000);
});
