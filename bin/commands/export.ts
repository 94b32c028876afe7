/**
 * `tcod export trinity FILE|PLAN [--out DIR] [--target tcod-fork|upstream]`: a Trinity-RFT config per
 * plan (DIR/NAME.yaml) and, where the plan needs one, its plugin directory (DIR/NAME.plugin/).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { compileFile } from "../../compiler/index.js";
import { planFileNames } from "../plan-file-names.js";
import { DEFAULT_INFRA, exportTrinity, parseInfra, TRINITY_TARGETS, TrinityExportError, type TrinityTarget } from "../../targets/trinity/export.js";
import type { Plan } from "../../plan/schema.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { UsageError, UserError } from "../../plan/errors.js";
import { ensureOutDir, writeAtomic } from "../out-path.js";
import { collect, printDiagnostics, reportUserError } from "../report-diagnostics.js";
import { result } from "../json-output.js";
import { curriculumFlag } from "../curriculum-arg.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";
import { isPlanJson, loadPlanJson, refuseSourceFlags } from "../plan-json.js";

export function register(program: Command): void {
  program.command("export")
    .description("Export plans to another engine. Formats: trinity (Trinity-RFT config + --plugin-dir).")
    .argument("<format>", "trinity")
    .argument("<input>", ".tcod file or compiled .plan.json")
    .option("-o, --out <dir>", "output folder", "out/trinity")
    .option("--target <target>", `Trinity-RFT flavour: ${TRINITY_TARGETS.join(" | ")}`, "tcod-fork")
    .option("--infra <key=value>", `cluster setting, repeatable (${Object.keys(DEFAULT_INFRA).filter((k) => k !== "envVars").join(", ")}, env_vars.NAME for explorer.env_vars)`, collect, [])
    .option("--set <target=value>", "override a curriculum field or a let (.tcod input), or a plan field by its JSON path (plan .json input); repeatable", collect, [])
    .option("--curriculum <name>", "export only this curriculum (.tcod input)")
    .option(...MAX_POINTS_FLAG)
    .option("--json", "the result line lists what was written (config, plugin, workflow, advantage_fn, notes per plan)")
    .action((format: string, input: string, o: { out: string; target: string; infra: string[]; set: string[]; curriculum?: string; json?: boolean; maxPoints?: string }, cmd: Command) => {
      const fail = (e: string | UserError, hint?: string) => { reportUserError(typeof e === "string" ? new UsageError(e, hint !== undefined ? { hint } : {}) : e, "tcod export"); process.exitCode = EXIT_USER; };
      if (format !== "trinity") return fail(`unknown format '${format}'; the formats are: trinity`, `e.g. tcod export trinity ${input}`);
      if (!(TRINITY_TARGETS as readonly string[]).includes(o.target)) {
        return fail(`unknown --target '${o.target}'; use ${TRINITY_TARGETS.join(" or ")}`, "--target tcod-fork (the default) writes for the TCOD fork of Trinity-RFT, --target upstream for Trinity-RFT from PyPI.");
      }
      const infra = parseInfra(o.infra);
      if (typeof infra === "string") return fail(infra, "--infra takes KEY=VALUE, one setting each time it is given; `tcod export --help` lists the keys.");
      let plans: Plan[];
      refuseSourceFlags(cmd, input, ["curriculum", "maxPoints"]);
      if (isPlanJson(input)) {
        // The one plan loader (bin/plan-json.ts) that run, plot and explain use: the same errors,
        // positions and hints for the same bad plan, and --set applied to the plan's own fields.
        try { plans = [loadPlanJson(input, o.set)]; }
        catch (e) {
          if (e instanceof UserError) return fail(e);
          throw e;
        }
      } else {
        const r = compileFile(input, { overrides: o.set, ...(o.curriculum !== undefined ? { curriculum: curriculumFlag(input, o.curriculum) } : {}), ...parseMaxPoints(o.maxPoints) });
        printDiagnostics(r, false);
        if (!r.ok) { process.exitCode = EXIT_USER; return; }
        plans = r.plans.map((p) => p.plan);
      }
      ensureOutDir(o.out);
      let failed = false;
      const exported: Record<string, unknown>[] = [];
      const fileNames = planFileNames(plans.map((p) => p.name));
      for (const [i, plan] of plans.entries()) {
        const base = fileNames[i]!;
        try {
          const e = exportTrinity(plan, { target: o.target as TrinityTarget, infra, pluginDir: `${base}.plugin` });
          const yamlPath = join(o.out, `${base}.yaml`);
          writeAtomic(yamlPath, e.yaml);
          const pluginDir = join(o.out, `${base}.plugin`);
          rmSync(pluginDir, { recursive: true, force: true });
          for (const [rel, text] of Object.entries(e.plugin ?? {})) writeAtomic(join(pluginDir, rel), text);
          if (o.json) exported.push({ plan: plan.name, config: yamlPath, plugin: e.plugin ? pluginDir : null, workflow: e.workflow, advantage_fn: e.advantageFn, notes: e.notes });
          else {
            process.stdout.write(`${yamlPath}\n${e.plugin ? `${pluginDir}/\n` : ""}`);
            for (const n of e.notes) process.stderr.write(`  ${plan.name}: ${n}\n`);
          }
        } catch (err) {
          if (!(err instanceof TrinityExportError)) throw err;
          failed = true;
          reportUserError(err, `tcod export (plan '${plan.name}')`);
        }
      }
      result({ exports: exported });
      process.exitCode = failed ? EXIT_USER : EXIT_OK;
    });
}
