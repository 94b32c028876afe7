import { mkdirSync } from "node:fs";
import { refuseUnused } from "../flag-rules.js";
import { join } from "node:path";
import type { Command } from "commander";
import { compileFile } from "../../compiler/index.js";
import { planFileNames } from "../plan-file-names.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";
import { needsTrace, planReplay, planSchedules, scheduleValues, stepGrid } from "../../plan/schedules.js";
import { NeedsTraceError } from "../../plan/expr.js";
import { readTrace } from "../trace.js";
import { sparkline } from "../../runtime/report/sparkline.js";
import { lineChart } from "../../runtime/report/svg-chart.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { UsageError } from "../../plan/errors.js";
import { ensureOutDir, writeOutFile } from "../out-path.js";
import { graphMermaid, graphSvg } from "../../plan/graph-view.js";
import { checkExpertLengths, maxTurnsOf, naturals } from "../schedule-args.js";
import { collect, printDiagnostics } from "../report-diagnostics.js";
import { jsonMode, result } from "../json-output.js";
import { isPlanJson, loadPlanJson, refuseSourceFlags } from "../plan-json.js";
import type { Plan } from "../../plan/schema.js";

/** The expert length plotted when --expert-length is not given (turns). */
const DEFAULT_EXPERT_LENGTH = 10;

export function register(program: Command): void {
  program.command("plot")
    .description("Plot every schedule of each curriculum (of a .tcod file, or of a compiled plan .json) over its steps: terminal sparklines, and SVG with --out (with --graph: the execution graph).")
    .argument("<file>", ".tcod file, or a compiled plan .json (what `tcod compile` writes)")
    .option("-o, --out <dir>", "also write DIR/NAME.schedules.svg")
    .option("--set <target=value>", "override a curriculum field (.tcod) or a plan JSON path (.json); repeatable", collect, [])
    .option(...MAX_POINTS_FLAG)
    .option("--expert-length <turns>", "expert length for episode-level schedules (b2f prefix): from 0 to the plan's max_turns (default 10, or max_turns when that is less)")
    .option("--trace <metrics.jsonl>", "for feedback-level schedules: a metrics trace (RUN_DIR/metrics.jsonl, a run folder, or a synthetic JSONL file) to replay")
    .option("--graph", "draw each curriculum's execution graph instead: Mermaid text on stdout; with --out also DIR/NAME.graph.svg and DIR/NAME.graph.mmd")
    .action((file: string, o: { out?: string; set: string[]; expertLength?: string; trace?: string; maxPoints?: string; graph?: boolean }, cmd: Command) => {
      refuseSourceFlags(cmd, file, ["maxPoints"]);
      if (o.graph) {
        refuseUnused(cmd, "--graph", "draws the execution graph, which has no schedule values", ["expertLength", "trace"]);
        plotGraphs(file, o);
        return;
      }
      const trace = o.trace !== undefined ? readTrace(o.trace) : undefined;
      const untraced: string[] = [];
      const given = o.expertLength !== undefined ? naturals("--expert-length", o.expertLength, "10") : undefined;
      if (given && given.length !== 1) throw new UsageError(`--expert-length ${o.expertLength}: plot takes one expert length`, { hint: "e.g. --expert-length 10; tcod explain takes several." });
      const plans = plansOf(file, o);
      if (!plans) { process.exitCode = EXIT_USER; return; }
      // Every plan's range before anything is plotted or written; without the flag, 10 turns, or
      // the plan's max_turns when its episodes are shorter.
      if (given) for (const plan of plans) checkExpertLengths("--expert-length", o.expertLength!, given, plan);
      const lengthOf = (plan: Plan): number => given?.[0] ?? Math.min(DEFAULT_EXPERT_LENGTH, maxTurnsOf(plan));
      if (o.out) ensureOutDir(o.out);
      const say = (t: string) => { if (!jsonMode()) process.stdout.write(t); };
      const plotted: { name: string; steps: number; schedules: Record<string, unknown>[]; svg?: string }[] = [];
      const fileNames = planFileNames(plans.map((p) => p.name));
      for (const [i, plan] of plans.entries()) {
        const grid = stepGrid(plan.clock.steps);
        const L = lengthOf(plan);
        say(`${plan.name} (${plan.clock.steps} steps)\n`);
        const entry: (typeof plotted)[number] = { name: plan.name, steps: plan.clock.steps, schedules: [] };
        plotted.push(entry);
        const charts: string[] = [];
        const replayed = trace ? planReplay(plan, trace) : undefined;
        for (const s of planSchedules(plan)) {
          if (needsTrace(plan, s) && !replayed) {
            untraced.push(`${plan.name}.${s.name}`);
            entry.schedules.push({ name: s.name, unit: s.unit, level: s.level, needsTrace: true });
            say(`  ${s.name.padEnd(22)} feedback-level: needs a metrics trace (--trace RUN_DIR/metrics.jsonl)\n`);
            continue;
          }
          const ys = scheduleValues(plan, s, grid, s.level === "episode" ? L : undefined, needsTrace(plan, s) ? replayed : undefined);
          const label = `${s.name}${s.level === "episode" ? ` (L=${L})` : ""}`;
          const lo = Math.min(...ys);
          const hi = Math.max(...ys);
          entry.schedules.push({ name: s.name, unit: s.unit, level: s.level, ...(s.level === "episode" ? { expertLength: L } : {}), first: ys[0], last: ys[ys.length - 1], min: lo, max: hi });
          say(`  ${label.padEnd(22)} ${sparkline(ys, 48)}  ${fmt(ys[0]!)} → ${fmt(ys[ys.length - 1]!)}  [${fmt(lo)}, ${fmt(hi)}]${s.unit ? " " + s.unit : ""}\n`);
          charts.push(lineChart([{ name: label, xs: grid, ys, step: true }], { title: `${plan.name}: ${label}`, xLabel: "step", yLabel: s.unit || "value", height: 200 }));
        }
        // With a trace: each feedback rule's stage and smoothed signal along it.
        if (replayed) {
          const names = Object.keys(replayed.at(1).summary.values);
          for (const name of names) {
            const ys = grid.map((t) => replayed.at(t).summary.values[name]!);
            entry.schedules.push({ name, unit: "", level: "feedback", first: ys[0], last: ys[ys.length - 1], min: Math.min(...ys), max: Math.max(...ys) });
            say(`  ${name.padEnd(22)} ${sparkline(ys, 48)}  ${fmt(ys[0]!)} → ${fmt(ys[ys.length - 1]!)}\n`);
            charts.push(lineChart([{ name, xs: grid, ys, step: true }], { title: `${plan.name}: ${name} (on the trace)`, xLabel: "step", yLabel: "value", height: 200 }));
          }
        }
        if (o.out) {
          mkdirSync(o.out, { recursive: true });
          const path = join(o.out, `${fileNames[i]!}.schedules.svg`);
          writeOutFile(path, stack(charts));
          entry.svg = path;
          say(`  → ${path}\n`);
        }
      }
      if (untraced.length) throw new NeedsTraceError(`${untraced.join(", ")} ${untraced.length === 1 ? "is" : "are"} feedback-level: ${untraced.length === 1 ? "its" : "their"} values depend on the run's own metrics (the other schedules are plotted above)`);
      result({ plans: plotted });
      process.exitCode = EXIT_OK;
    });
}

/** `tcod plot FILE --graph`: the plan/2 graph of each curriculum as Mermaid (stdout) and, with --out, SVG and .mmd files. */
function plotGraphs(file: string, o: { out?: string; set: string[] }): void {
  const plans = plansOf(file, o);
  if (!plans) { process.exitCode = EXIT_USER; return; }
  // After the plans compile: a file that does not leaves no --out folder behind.
  if (o.out) ensureOutDir(o.out);
  const drawn: { name: string; nodes: number; edges: number; mermaid: string; svg?: string; mmd?: string }[] = [];
  const fileNames = planFileNames(plans.map((p) => p.name));
  for (const [i, plan] of plans.entries()) {
    const mermaid = graphMermaid(plan);
    const entry: (typeof drawn)[number] = { name: plan.name, nodes: plan.graph.nodes.length, edges: plan.graph.edges.length, mermaid };
    if (!jsonMode()) process.stdout.write(`%% ${plan.name}\n${mermaid}`);
    if (o.out) {
      mkdirSync(o.out, { recursive: true });
      entry.svg = join(o.out, `${fileNames[i]!}.graph.svg`);
      entry.mmd = join(o.out, `${fileNames[i]!}.graph.mmd`);
      writeOutFile(entry.svg, graphSvg(plan));
      writeOutFile(entry.mmd, mermaid);
      if (!jsonMode()) process.stdout.write(`%% → ${entry.svg}, ${entry.mmd}\n`);
    }
    drawn.push(entry);
  }
  result({ graphs: drawn });
  process.exitCode = EXIT_OK;
}

/**
 * The plans to plot: a plan .json as it is (through the plan loader every command shares: TC7001 for
 * one that does not validate; `--set` sets its JSON paths), or every curriculum and sweep point a
 * .tcod file compiles to (undefined after its diagnostics are printed, when it does not compile).
 */
function plansOf(file: string, o: { set: string[]; maxPoints?: string }): Plan[] | undefined {
  if (isPlanJson(file)) return [loadPlanJson(file, o.set)];
  const r = compileFile(file, { overrides: o.set, ...parseMaxPoints(o.maxPoints) });
  printDiagnostics(r, false);
  return r.ok ? r.plans.map((c) => c.plan) : undefined;
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

/** Stacks several SVG charts vertically into one SVG document. */
function stack(charts: string[]): string {
  const H = 200;
  const W = 640;
  const body = charts.map((c, i) => `<g transform="translate(0 ${i * H})">${c.replace(/^<svg[^>]*>/, "").replace(/<\/svg>$/, "")}</g>`).join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${Math.max(1, charts.length) * H}" viewBox="0 0 ${W} ${Math.max(1, charts.length) * H}" font-family="sans-serif" font-size="11">\n${body}\n</svg>\n`;
}
