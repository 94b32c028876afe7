import { readdirSync, statSync, writeFileSync } from "node:fs";
import { fileReadError, readSourceFile } from "../../plan/read-file.js";
import type { SourceText } from "../../grammar/source-chars.js";
import { join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { createTwoFilesPatch } from "diff";
import { d, diag, type Diagnostic } from "../../compiler/diagnostics/index.js";
import { render, syntaxMessage, toJsonLine } from "../../compiler/index.js";
import { sourceReadMessage } from "../../compiler/modules.js";
import { UsageError } from "../../plan/errors.js";
import { format, FormatterBug } from "../../formatter/index.js";
import { EXIT_INTERNAL, EXIT_OK, EXIT_USER } from "../exit.js";
import { jsonMode, result } from "../json-output.js";
import { reportUserError } from "../report-diagnostics.js";

export function register(program: Command): void {
  program.command("fmt")
    .description("Format .tcod files in the one canonical layout (in place); --check only reports, with a diff.")
    .argument("<files...>", ".tcod files or folders (searched for .tcod files)")
    .option("--check", "change nothing: print a diff of each file that is not formatted, exit 1 if any")
    .action((args: string[], o: { check?: boolean }) => {
      process.exitCode = fmt(args, !!o.check);
    });
}

function fmt(args: string[], check: boolean): number {
  let failed = false;
  let changed = 0;
  let syntaxErrors = 0;
  const changedFiles: string[] = [];
  const files: string[] = [];
  // Files named that are not there: counted, as `tcod check` counts every file it is given.
  let missing = 0;
  for (const a of args) {
    let folder: boolean;
    try {
      folder = statSync(a).isDirectory();
    } catch (e) {
      cannotRead(a, e); // a path that is not there: reported as `tcod check` reports it
      failed = true;
      missing++;
      continue;
    }
    if (!folder) { files.push(a); continue; }
    let found: string[];
    try {
      found = tcodFilesUnder(a);
    } catch (e) {
      reportUserError(new UsageError(`cannot list the folder ${a}: ${fileReadError(e).message}`, { where: { file: a } }), "tcod fmt");
      failed = true;
      continue;
    }
    if (found.length === 0) {
      reportUserError(new UsageError(`${a} holds no .tcod files`, { where: { file: a }, hint: "Give .tcod files, or folders that hold some (node_modules and hidden folders are skipped)." }), "tcod fmt");
      failed = true;
    }
    files.push(...found);
  }
  for (const file of files) {
    let source: SourceText;
    try {
      source = readSourceFile(file);
    } catch (e) {
      cannotRead(file, e);
      failed = true;
      continue;
    }
    const { text } = source;
    // Diagnostics name the file by its absolute path, as `tcod check` does (--json prints it so; the
    // human rendering shows it from the working folder).
    const abs = resolve(file);
    let r;
    try {
      r = format(text, abs, source.badBytes);
    } catch (e) {
      if (!(e instanceof FormatterBug)) throw e;
      process.stderr.write(`tcod fmt: internal error: ${e.message}\n`);
      return EXIT_INTERNAL;
    }
    if (!r.ok) {
      // A file that does not parse is not formatted: its syntax errors, as `tcod check` reports them.
      const diagnostics: Diagnostic[] = r.tooDeep
        ? [diag(d.stackExhausted({ phase: "formatting" }), { file: abs, start: { offset: 0, line: 1, column: 1 }, end: { offset: 0, line: 1, column: 1 } })]
        : r.errors.map((er) => diag(syntaxMessage(er), er.span));
      // --json: one JSON line each on stdout, the shape `tcod check --json` prints (and cannotRead below).
      if (jsonMode()) {
        for (const dg of diagnostics) process.stdout.write(toJsonLine(dg) + "\n");
      } else {
        for (const dg of diagnostics) process.stderr.write(render(dg, () => text) + "\n\n");
        process.stderr.write(`${file}: not formatted (${r.tooDeep ? "nested too deeply" : `${diagnostics.length} syntax error(s)`})\n`);
      }
      syntaxErrors += diagnostics.length;
      failed = true;
      continue;
    }
    if (!r.changed) continue;
    changed++;
    changedFiles.push(file);
    if (check) {
      const name = relative(process.cwd(), file) || file;
      if (!jsonMode()) process.stdout.write(createTwoFilesPatch(`a/${name}`, `b/${name}`, text, r.text, undefined, undefined, { context: 3 }));
    } else {
      try {
        writeFileSync(file, r.text);
      } catch (e) {
        reportUserError(new UsageError(`cannot write ${file}: ${fileReadError(e).message}`, { where: { file }, hint: "Format a copy you may write, or check the file without changing it: tcod fmt --check." }), "tcod fmt");
        failed = true;
      }
    }
  }
  const total = files.length + missing;
  result({ files: total, [check ? "unformatted" : "formatted"]: changedFiles, ...(syntaxErrors ? { errors: syntaxErrors } : {}) });
  if (check) {
    if (changed > 0) process.stderr.write(`${changed} of ${total} file(s) not formatted (run tcod fmt to fix)\n`);
    return failed || changed > 0 ? EXIT_USER : EXIT_OK;
  }
  if (changed > 0) process.stderr.write(`formatted ${changed} of ${total} file(s)\n`);
  return failed ? EXIT_USER : EXIT_OK;
}

/** A file fmt cannot read: the diagnostic `tcod check` prints for it (TC1101, TC1108, TC1109). */
function cannotRead(file: string, e: unknown): void {
  const at = { offset: 0, line: 1, column: 1 };
  const dg = diag(sourceReadMessage(e, resolve(file), file), { file: resolve(file), start: at, end: at });
  if (jsonMode()) process.stdout.write(toJsonLine(dg) + "\n");
  else process.stderr.write(render(dg, () => undefined) + "\n\n");
}

function tcodFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.name === "node_modules" || e.name.startsWith(".")) return [];
    return e.isDirectory() ? tcodFilesUnder(p) : e.name.endsWith(".tcod") ? [p] : [];
  }).sort();
}
