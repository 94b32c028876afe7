import { join } from "node:path";
import type { Command } from "commander";
import { compileFile } from "../../compiler/index.js";
import { parsePlan, PlanError, stringifyPlan } from "../../plan/schema.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { ensureOutDir, writeAtomic } from "../out-path.js";
import { collect, printDiagnostics } from "../report-diagnostics.js";
import { result } from "../json-output.js";
import { curriculumFlag } from "../curriculum-arg.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";
import { planFileNames, withBundleBeside } from "../plan-file-names.js";

export function register(program: Command): void {
  program.command("compile")
    .description("Compile a .tcod file to DIR/NAME.plan.json: one plan per curriculum and sweep point.")
    .argument("<file>", ".tcod file")
    .option("-o, --out <dir>", "output folder", "out")
    .option("--set <target=value>", "override a curriculum field or a let (repeatable)", collect, [])
    .option("--curriculum <name>", "compile only this curriculum")
    .option("--json", "diagnostics as JSON lines, then the result line (the plans written)")
    .option(...MAX_POINTS_FLAG)
    .action((file: string, o: { out: string; set: string[]; curriculum?: string; json?: boolean; maxPoints?: string }) => {
      const r = compileFile(file, { overrides: o.set, ...(o.curriculum !== undefined ? { curriculum: curriculumFlag(file, o.curriculum) } : {}), ...parseMaxPoints(o.maxPoints) });
      printDiagnostics(r, !!o.json);
      if (!r.ok) { process.exitCode = EXIT_USER; return; }
      ensureOutDir(o.out);
      const written: Record<string, unknown>[] = [];
      const fileNames = planFileNames(r.plans.map((c) => c.plan.name));
      for (const [i, c] of r.plans.entries()) {
        // The bundle is named after the plan's file, which no other plan of the folder shares.
        const plan = withBundleBeside(c.plan, fileNames[i]!);
        // Checked on write: a plan that fails its own schema is a compiler bug, not a user error.
        try { parsePlan(plan); } catch (e) {
          if (e instanceof PlanError) throw new Error(`compiler produced an invalid plan for ${plan.name}:\n${e.message}`);
          throw e;
        }
        const base = join(o.out, fileNames[i]!);
        writeAtomic(`${base}.plan.json`, stringifyPlan(plan));
        const bundle = c.bundle && plan.extensions ? join(o.out, plan.extensions.bundle) : undefined;
        if (bundle) writeAtomic(bundle, c.bundle!);
        if (!o.json) process.stdout.write(`${base}.plan.json\n`);
        written.push({ name: plan.name, plan: `${base}.plan.json`, ...(bundle ? { bundle } : {}), settings: c.settings });
      }
      result({ plans: written });
      process.exitCode = EXIT_OK;
    });
}
