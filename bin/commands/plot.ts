import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { compileFile, safeFileName } from "../../compiler/index.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";
import { planSchedules, scheduleValues, stepGrid } from "../../plan/schedules.js";
import { sparkline } from "../../runtime/report/sparkline.js";
import { lineChart } from "../../runtime/report/svg-chart.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { UsageError } from "../../plan/errors.js";
import { ensureOutDir } from "../out-path.js";
import { naturals } from "./explain.js";
import { collect, printDiagnostics } from "../report-diagnostics.js";
import { jsonMode, result } from "../json-output.js";

export function register(program: Command): void {
  program.command("plot")
    .description("Plot every schedule of each curriculum over its steps: terminal sparklines, and SVG with --out.")
    .argument("<file>", ".tcod file")
    .option("-o, --out <dir>", "also write DIR/NAME.schedules.svg")
    .option("--set <target=value>", "override (repeatable)", collect, [])
    .option(...MAX_POINTS_FLAG)
    .option("--expert-length <turns>", "expert length for episode-level schedules (b2f prefix)", "10")
    .action((file: string, o: { out?: string; set: string[]; expertLength: string; maxPoints?: string }) => {
      const lengths = naturals("--expert-length", o.expertLength, "10");
      if (lengths.length !== 1) throw new UsageError(`--expert-length ${o.expertLength}: plot takes one expert length`, { hint: "e.g. --expert-length 10; tcod explain takes several." });
      if (o.out) ensureOutDir(o.out);
      const r = compileFile(file, { overrides: o.set, ...parseMaxPoints(o.maxPoints) });
      printDiagnostics(r, false);
      if (!r.ok) { process.exitCode = EXIT_USER; return; }
      const L = lengths[0]!;
      const say = (t: string) => { if (!jsonMode()) process.stdout.write(t); };
      const plotted: { name: string; steps: number; schedules: Record<string, unknown>[]; svg?: string }[] = [];
      for (const { plan } of r.plans) {
        const grid = stepGrid(plan.clock.steps);
        say(`${plan.name} (${plan.clock.steps} steps)\n`);
        const entry: (typeof plotted)[number] = { name: plan.name, steps: plan.clock.steps, schedules: [] };
        plotted.push(entry);
        const charts: string[] = [];
        for (const s of planSchedules(plan)) {
          const ys = scheduleValues(plan, s, grid, s.level === "episode" ? L : undefined);
          const label = `${s.name}${s.level === "episode" ? ` (L=${L})` : ""}`;
          const lo = Math.min(...ys);
          const hi = Math.max(...ys);
          entry.schedules.push({ name: s.name, unit: s.unit, level: s.level, ...(s.level === "episode" ? { expertLength: L } : {}), first: ys[0], last: ys[ys.length - 1], min: lo, max: hi });
          say(`  ${label.padEnd(22)} ${sparkline(ys, 48)}  ${fmt(ys[0]!)} → ${fmt(ys[ys.length - 1]!)}  [${fmt(lo)}, ${fmt(hi)}]${s.unit ? " " + s.unit : ""}\n`);
          charts.push(lineChart([{ name: label, xs: grid, ys, step: true }], { title: `${plan.name}: ${label}`, xLabel: "step", yLabel: s.unit || "value", height: 200 }));
        }
        if (o.out) {
          mkdirSync(o.out, { recursive: true });
          const path = join(o.out, `${safeFileName(plan.name)}.schedules.svg`);
          writeFileSync(path, stack(charts));
          entry.svg = path;
          say(`  → ${path}\n`);
        }
      }
      result({ plans: plotted });
      process.exitCode = EXIT_OK;
    });
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

/** Stacks several SVG charts vertically into one SVG document. */
function stack(charts: string[]): string {
  const H = 200;
  const W = 640;
  const body = charts.map((c, i) => `<g transform="translate(0 ${i * H})">${c.replace(/^<svg[^>]*>/, "").replace(/<\/svg>$/, "")}</g>`).join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${Math.max(1, charts.length) * H}" viewBox="0 0 ${W} ${Math.max(1, charts.length) * H}" font-family="sans-serif" font-size="11">\n${body}\n</svg>\n`;
}
