/**
 * `tcod import trinity CONFIG.yaml [--out FILE.tcod [--force]]`: a Trinity-RFT config as an idiomatic
 * .tcod file (an existing --out is replaced only with --force). The result is checked before it is
 * written: it must compile, and exporting it must give back every curriculum key of the config
 * (targets/trinity/import.ts CURRICULUM_KEYS). A compile error is the config's (a value tcod
 * refuses, such as lr: 0): reported as TC7101 at the YAML key the refused text was written from.
 */
import { lstatSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { compileFile, render } from "../../compiler/index.js";
import { exportTrinity, parseInfra, TrinityExportError } from "../../targets/trinity/export.js";
import { curriculumDifferences, importTrinity, resolvedConfig, TrinityImportError, type TrinityImport } from "../../targets/trinity/import.js";
import { EXIT_INTERNAL, EXIT_OK, EXIT_USER } from "../exit.js";
import { readBytesFile } from "../../plan/read-file.js";
import { UsageError } from "../../plan/errors.js";
import { ensureOutFile, refuseSpecialFile, writeAtomic } from "../out-path.js";
import { reportUserError } from "../report-diagnostics.js";
import { jsonMode, result } from "../json-output.js";

export function register(program: Command): void {
  program.command("import")
    .description("Import another engine's config as a .tcod file. Formats: trinity (Trinity-RFT YAML).")
    .argument("<format>", "trinity")
    .argument("<config>", "Trinity-RFT config (YAML)")
    .option("-o, --out <file>", "write the .tcod here (default: print it)")
    .option("--force", "overwrite --out when it exists (without it, an existing file is refused)")
    .option("--no-verify", "skip compiling the result and comparing its export with the config")
    .action((format: string, config: string, o: { out?: string; verify: boolean; force?: boolean }) => {
      if (format !== "trinity") throw new UsageError(`unknown format '${format}'`, { hint: "The formats are: trinity." });
      if (o.out) {
        ensureOutFile(o.out);
        refuseSpecialFile(o.out);
        if (!o.force && pathExists(o.out)) {
          throw new UsageError(`${o.out} exists; tcod import does not overwrite it`, { hint: "Give --out a new file name, or add --force to replace this one.", where: { file: o.out } });
        }
      }
      // Bytes, not text: the import refuses bytes that are not UTF-8 (TC7101), as Trinity-RFT does.
      let bytes: Buffer;
      try { bytes = readBytesFile(config); }
      catch (e) { throw new UsageError(`cannot read ${config}: ${(e as Error).message}`, { where: { file: config }, hint: "Give the Trinity-RFT config: a YAML file you may read." }); }
      const text = bytes.toString("utf8");
      let imported;
      try { imported = importTrinity(bytes, config); }
      catch (e) {
        if (!(e instanceof TrinityImportError)) throw e;
        reportUserError(e, "tcod import");
        if (!jsonMode()) process.stderr.write(`${e.issues.length} error(s)\n`);
        process.exitCode = EXIT_USER;
        return;
      }
      for (const n of imported.notes) process.stderr.write(`note: ${n}\n`);
      if (imported.infra.length > 0) process.stderr.write(`note: export with ${imported.infra.map((i) => `--infra '${i}'`).join(" ")} to keep the config's cluster settings\n`);
      if (o.verify) {
        const problem = verify(imported, text, config, o.out);
        if (problem instanceof TrinityImportError) {
          reportUserError(problem, "tcod import");
          if (!jsonMode()) process.stderr.write(`${problem.issues.length} error(s)\n`);
          process.exitCode = EXIT_USER;
          return;
        }
        if (problem) { process.stderr.write(`tcod import: internal error: ${problem}\n`); process.exitCode = EXIT_INTERNAL; return; }
      }
      if (o.out) {
        writeAtomic(o.out, imported.source);
        process.stderr.write(`${o.out}: curriculum ${imported.curriculum}\n`);
      } else if (!jsonMode()) process.stdout.write(imported.source);
      result({ curriculum: imported.curriculum, ...(o.out ? { out: o.out } : { source: imported.source }), notes: imported.notes, infra: imported.infra });
      process.exitCode = EXIT_OK;
    });
}

/**
 * Compiles the imported source where it will live (imports resolve alike) and compares its export.
 * A compile error whose text was written from a YAML key is that key's TC7101; anything else is an
 * import bug (a string).
 */
function verify(imported: TrinityImport, yamlText: string, config: string, out?: string): TrinityImportError | string | undefined {
  const { source, curriculum, infra: infraArgs } = imported;
  const dir = out ? join(out, "..") : mkdtempSync(join(tmpdir(), "tcod-import-"));
  const file = join(dir, `.${curriculum}.verify-${process.pid}.tcod`);
  writeFileSync(file, source);
  try {
    const r = compileFile(file);
    if (!r.ok) {
      const errors = r.diagnostics.filter((d) => d.severity === "error");
      // One error per key and message (the train and eval env calls can report the same
      // max_env_steps), and one per value that an anchor gives several keys.
      const issues = errors.every((d) => resolve(d.span.file) === resolve(file))
        ? imported.issuesAt(errors.map((d) => ({ start: d.span.start.offset, end: d.span.end.offset, message: `tcod cannot take this value: ${d.message.replace(/\.$/, "")} (${d.code})`, hint: d.hint ?? "Change the value." })))
        : undefined;
      if (issues && issues.length > 0) return new TrinityImportError(config, issues);
      return `the imported file does not compile:\n${r.diagnostics.map((d) => render(d, (f) => r.sources.get(f))).join("\n")}`;
    }
    const plan = r.plans[0]?.plan;
    if (!plan) return "the imported file has no curriculum";
    let exported;
    const infra = parseInfra(infraArgs);
    if (typeof infra === "string") return `the import's --infra arguments do not parse: ${infra}`;
    try { exported = exportTrinity(plan, { target: "tcod-fork", infra }); }
    catch (e) { if (e instanceof TrinityExportError) return `the imported curriculum does not export back: ${e.message}`; throw e; }
    const diffs = curriculumDifferences(resolvedConfig(yamlText, config), exported.config);
    if (diffs.length) return `exporting the import changes ${diffs.map((d) => `${d.key} (${JSON.stringify(d.original)} → ${JSON.stringify(d.exported)})`).join(", ")}`;
    return undefined;
  } finally {
    rmSync(file, { force: true });
  }
}

/** Anything at `path`, a dangling symlink included (existsSync follows links). */
function pathExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
