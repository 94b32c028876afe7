import { relative } from "node:path";
import type { Command } from "commander";
import { explain, formatExplanation } from "../../compiler/explain.js";
import { compileFile } from "../../compiler/index.js";
import { UsageError } from "../../plan/errors.js";
import { NeedsTraceError } from "../../plan/expr.js";
import { graphText } from "../../plan/graph-view.js";
import { readTrace } from "../trace.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { collect, printDiagnostics } from "../report-diagnostics.js";
import { result } from "../json-output.js";
import { isPlanJson, loadPlanJson } from "../plan-json.js";
import { explainTarget } from "../curriculum-arg.js";
import { refuseUnused } from "../flag-rules.js";
import { checkExpertLengths, checkSteps, naturals } from "../schedule-args.js";
import type { Plan } from "../../plan/schema.js";

export function register(program: Command): void {
  program.command("explain")
    .description("Show a curriculum field: its value, binding-time level, where it came from, and its values at given steps. A field is explained from its .tcod source; a compiled plan .json gives the graph (--graph) only.")
    .argument("<file>", ".tcod file; with --graph also a compiled plan .json (what `tcod compile` writes)")
    .argument("<target>", "CURRICULUM.FIELD (or CURRICULUM.FIELD.MEMBER); with --graph, CURRICULUM")
    .option("--at <steps>", "comma-separated steps, e.g. 0,6,12,174,175")
    .option("--expert-length <turns>", "for episode-level values: comma-separated expert lengths")
    .option("--set <target=value>", "override a curriculum field (.tcod) or, with --graph, a plan JSON path (.json); repeatable", collect, [])
    .option("--trace <metrics.jsonl>", "for feedback-level values: a metrics trace (RUN_DIR/metrics.jsonl, a run folder, or a synthetic JSONL file) to replay")
    .option("--json", "the explanation as the JSON result line")
    .option("--graph", "list the curriculum's execution graph: its nodes with their typed ports, and its edges")
    .action((file: string, target: string, o: { at?: string; expertLength?: string; set: string[]; trace?: string; json?: boolean; graph?: boolean }, cmd: Command) => {
      if (o.graph) {
        refuseUnused(cmd, "--graph", "lists the execution graph, which has no values at steps", ["at", "expertLength", "trace"]);
        explainGraph(file, target, o);
        return;
      }
      if (isPlanJson(file)) fieldNeedsSource(file, target, loadPlanJson(file, o.set));
      const trace = o.trace !== undefined ? readTrace(o.trace) : undefined;
      const steps0 = o.at !== undefined ? naturals("--at", o.at, "0,6,12") : undefined;
      const lengths = o.expertLength !== undefined ? naturals("--expert-length", o.expertLength, "4,8,12") : undefined;
      const { curriculum, path } = explainTarget(file, target, false);
      const r = compileFile(file, { overrides: o.set, curriculum, curriculumFrom: { arg: "target", text: target }, sweeps: false });
      printDiagnostics(r, !!o.json);
      if (!r.ok) { process.exitCode = EXIT_USER; return; }
      const compiled = r.plans[0]!;
      if (steps0) checkSteps("--at", o.at!, steps0, compiled.plan);
      if (lengths) checkExpertLengths("--expert-length", o.expertLength!, lengths, compiled.plan);
      const steps = steps0 ?? defaultSteps(compiled.plan.clock.steps);
      const e = explain(compiled, path, steps, lengths, r.sources, (f, l, c) => `${relative(process.cwd(), f) || f}:${l}:${c}`, trace);
      if ("error" in e) throw new UsageError(`target '${target}': ${e.error}`, { hint: e.hint });
      if (e.needsTrace) {
        // What is known without a trace (the rule, its level, where it came from), then the coded error.
        if (!o.json) process.stdout.write(formatExplanation(e) + "\n");
        throw new NeedsTraceError(`${target} is feedback-level: its values depend on the run's own metrics`);
      }
      if (o.json) result({ ...e });
      else process.stdout.write(formatExplanation(e) + "\n");
      process.exitCode = EXIT_OK;
    });
}

/** `tcod explain FILE CURRICULUM --graph`: the nodes, ports and edges of the compiled plan's graph. */
function explainGraph(file: string, target: string, o: { set: string[]; json?: boolean }): void {
  let plan: Plan;
  if (isPlanJson(file)) {
    plan = loadPlanJson(file, o.set);
    if (target !== plan.name) throw new UsageError(`target '${target}': ${file} holds the plan '${plan.name}'`, { hint: `A plan .json holds one curriculum (or sweep point): tcod explain ${file} ${plan.name} --graph`, where: { file } });
  } else {
    const { curriculum } = explainTarget(file, target, true);
    const r = compileFile(file, { overrides: o.set, curriculum, curriculumFrom: { arg: "target", text: target }, sweeps: false });
    printDiagnostics(r, !!o.json);
    if (!r.ok) { process.exitCode = EXIT_USER; return; }
    plan = r.plans[0]!.plan;
  }
  if (o.json) result({ name: plan.name, nodes: plan.graph.nodes.map((n) => ({ id: n.id, kind: n.kind })), edges: plan.graph.edges });
  else process.stdout.write(graphText(plan) + "\n");
  process.exitCode = EXIT_OK;
}

/**
 * `tcod explain PLAN.json CURR.FIELD`: a field is explained from its source — the expression as
 * written and where, the `with` base, `--set` or sweep point it came from, the function that computed
 * it and its doc comment, a loss's or object's members — none of which a compiled plan keeps (it holds
 * numbers and expression trees). The plan is loaded first (a bad one is TC7001), then this TC7009
 * names the sources the plan was compiled from.
 */
function fieldNeedsSource(file: string, target: string, plan: Plan): never {
  const sources = plan.sources.map((s) => s.path).filter((p) => !p.startsWith("std/"));
  const src = sources[0] ?? "FILE.tcod";
  const field = target.includes(".") ? target.slice(target.indexOf(".") + 1) : "FIELD";
  throw new UsageError(`${file} is a compiled plan: explain reads a field from its .tcod source (the expression as written and where, its \`with\` base, --set or sweep point, the function that computed it), which a plan .json does not keep`, {
    where: { file },
    hint: `Give the source the plan was compiled from${sources.length ? ` (it lists ${sources.join(", ")})` : ""}: tcod explain ${src} ${target.includes(".") ? target : `${target}.${field}`}; a plan .json works with \`tcod explain ${file} ${plan.name} --graph\` and \`tcod plot ${file}\`.`,
  });
}

function defaultSteps(total: number): number[] {
  return [...new Set([1, 2, 3, Math.round(total / 4), Math.round(total / 2), Math.round((3 * total) / 4), total])].filter((s) => s >= 1).sort((a, b) => a - b);
}
