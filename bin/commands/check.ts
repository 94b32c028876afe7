import type { Command } from "commander";
import { checkFiles } from "../../compiler/index.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { printDiagnostics } from "../report-diagnostics.js";
import { result } from "../json-output.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";

export function register(program: Command): void {
  program.command("check")
    .description("Check .tcod files: syntax, names, types, units, binding-time levels, ranges.")
    .argument("<files...>", ".tcod files")
    .option("--json", "diagnostics as JSON lines, then the result line")
    .option(...MAX_POINTS_FLAG)
    .action((files: string[], o: { json?: boolean; maxPoints?: string }) => {
      const r = checkFiles(files, parseMaxPoints(o.maxPoints));
      printDiagnostics(r, !!o.json);
      if (!o.json && r.ok) process.stderr.write(`ok: ${files.length} file(s), ${r.plans.length} plan(s)\n`);
      result({ files: files.length, plans: r.plans.map((p) => p.plan.name) });
      process.exitCode = r.ok ? EXIT_OK : EXIT_USER;
    });
}
