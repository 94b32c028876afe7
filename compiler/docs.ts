/**
 * Reference docs generated from the sources, so they cannot drift: the stdlib reference (from doc
 * comments and signatures), the diagnostics catalogue, and the plan's JSON Schema.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { FnDecl, TypeRef } from "../grammar/ast.js";
import { parse } from "../grammar/index.js";
import { coreBuiltins, preludeBuiltins } from "./builtins.js";
import { USER_ERROR_CODES } from "../plan/errors.js";
import { catalogue, type Code } from "./diagnostics/catalogue.js";
import { findStdlibDir, MAX_IMPORT_DEPTH } from "./modules.js";
import { formatDim } from "./units.js";
import { constValue, type Builtin, type Value } from "./values.js";

const typeText = (t?: TypeRef) => t?.text ?? "any";

export function stdlibReference(): string {
  const dir = findStdlibDir();
  const out: string[] = [
    "# tcod standard library",
    "",
    "Generated from `stdlib/std/*.tcod` and the native builtins by `npm run docs`; do not edit by hand.",
    "",
    "## Prelude (every file, no import)",
    "",
    ...builtinRows([...preludeBuiltins().values()].filter((v): v is Builtin => v.kind === "builtin")),
    "",
    "Runtime variables: `step` (the explorer step, 1-based — one step per explore batch, as TCOD's `batch_id`), `total_steps`, `episode.expert_length`, `episode.max_turns`, `episode.turns`, `turn.index`, `turn.kl`, `turn.entropy`, `turn.tokens`, `token.logp_student`, `token.logp_teacher` (see docs/LANGUAGE.md for their levels). `pi` = π.",
    "",
  ];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".tcod")).sort()) {
    const text = readFileSync(join(dir, file), "utf8");
    const { ast } = parse(text, file);
    const name = `std/${file.replace(/\.tcod$/, "")}`;
    const header = text.split("\n").filter((l) => l.startsWith("// ")).slice(0, 4).map((l) => l.slice(3));
    out.push(`## ${name}`, "", ...header.map((h) => h), "");
    for (const d of ast.decls) {
      if (d.kind !== "fn" || !d.exported) continue;
      out.push(`### \`${signature(d, text)}\``, "", ...(d.doc ? [d.doc.trim(), ""] : []));
    }
  }
  out.push("## std/core (low-level constructors the stdlib is written with)", "", ...builtinRows([...coreBuiltins().values()].filter((v): v is Builtin => v.kind === "builtin")), "");
  return out.join("\n");
}

function signature(d: FnDecl, text: string): string {
  const src = (e: { span: { start: { offset: number }; end: { offset: number } } }) => text.slice(e.span.start.offset, e.span.end.offset);
  const params = d.params.map((p) => `${p.name}: ${typeText(p.type)}${p.default ? ` = ${src(p.default)}` : ""}`).join(", ");
  return `${d.name}(${params}) : ${typeText(d.returnType)}`;
}

function builtinRows(bs: Builtin[]): string[] {
  return bs.map((b) => `- \`${b.name}(${b.params.map((p) => `${p.name}: ${p.type}${p.default ? ` = ${show(p.default())}` : ""}`).join(", ")})\` — ${b.doc}`);
}

function show(v: Value): string {
  if (v.kind === "string") return JSON.stringify(v.value);
  if (v.kind === "scalar") {
    const c = constValue(v);
    if (c === undefined) return "…";
    if (v.type === "bool") return c ? "true" : "false";
    const u = formatDim(v.dim);
    return u === "number" ? String(c) : `${c} ${u}`;
  }
  if (v.kind === "list") return `[${v.items.map(show).join(", ")}]`;
  if (v.kind === "record") return "{}";
  return "…";
}

/**
 * Codes without a fixture: no input produces them on purpose (a fixture would be a bug report), or
 * their input is not a text that a fixture folder holds (NOT_A_TEXT below).
 */
// TC2022: running out of stack depends on the machine and the caller, not on the input alone.
export const CODES_WITHOUT_FIXTURE: readonly Code[] = ["TC2022", "TC9001", "TC1108", "TC1109", "TC1111", "TC1112"];

/**
 * Codes whose input is not a .tcod text a fixture folder can hold, with what produces them (the CLI
 * tests make those inputs: test/cli/edges.test.ts, test/cli/coded-errors.test.ts; the import chain:
 * test/compiler/import-edges.test.ts; the language server's, test/lsp/).
 */
const NOT_A_TEXT: Partial<Record<Code, string>> = {
  TC1108: "a source file larger than the limit (32 MiB), e.g. `tcod check big.tcod`",
  TC1109: "a path to a folder, a device, a FIFO, a socket or a loop of symbolic links, e.g. `tcod check /dev/zero`",
  TC1111: `a chain of more than ${MAX_IMPORT_DEPTH} files, each importing the next`,
  TC1112: "an editor's unsaved buffer (`untitled:`) with a relative or package import, in `tcod lsp` (test/lsp/hostile.test.ts)",
};

/**
 * Every diagnostic's first example, keyed by code: the first block of that code in the baseline
 * fixtures `test/fixtures/<group>/<case>/diagnostics.txt`, in group/case order.
 */
export function fixtureExamples(fixturesDir: string): Map<string, { fixture: string; text: string }> {
  const out = new Map<string, { fixture: string; text: string }>();
  for (const group of readdirSync(fixturesDir).sort()) {
    const g = join(fixturesDir, group);
    if (!statSync(g).isDirectory()) continue;
    for (const c of readdirSync(g).sort()) {
      const file = join(g, c, "diagnostics.txt");
      if (!existsSync(file)) continue;
      for (const block of readFileSync(file, "utf8").trimEnd().split("\n\n")) {
        const code = / (?:error|warning) (TC\d{4}):/.exec(block.split("\n")[0] ?? "")?.[1];
        if (code && !out.has(code)) out.set(code, { fixture: `${group}/${c}`, text: block });
      }
    }
  }
  return out;
}

export function diagnosticsReference(fixturesDir = join(findStdlibDir(), "..", "..", "test", "fixtures")): string {
  const examples = fixtureExamples(fixturesDir);
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const out = [
    "# tcod diagnostics", "",
    "Generated from `compiler/diagnostics/catalogue.ts`, `plan/errors.ts` and the compiler fixtures by `npm run docs`; do not edit by hand.",
    "Each compiler diagnostic's example is the first fixture that produces it (`test/fixtures/<group>/<case>/`).", "",
    "## Compiler diagnostics", "",
    "| code | severity | message | hint |", "|---|---|---|---|",
  ];
  for (const [code, e] of Object.entries(catalogue)) out.push(`| [${code}](#${code.toLowerCase()}) | ${e.severity} | ${esc(e.message)} | ${esc((e as { hint?: string }).hint ?? "")} |`);
  out.push("");
  for (const [code, e] of Object.entries(catalogue)) {
    out.push(`### ${code}`, "", `\`${e.name}\` — ${e.message}`, "");
    const ex = examples.get(code);
    if (ex) out.push(`From \`test/fixtures/${ex.fixture}\`:`, "", "```console", ex.text, "```", "");
    else if (NOT_A_TEXT[code as Code]) out.push(`No fixture: it is produced by ${NOT_A_TEXT[code as Code]}.`, "");
    else out.push("No example: no input produces it on purpose.", "");
  }
  out.push("## Errors after compilation (plans, runs, interop)", "",
    "Thrown as a `UserError` (plan/errors.ts) and printed as `FILE:LINE:COL error CODE: message` with a hint; exit 1.", "",
    "| code | meaning |", "|---|---|");
  for (const [code, meaning] of Object.entries(USER_ERROR_CODES)) out.push(`| ${code} | ${esc(meaning)} |`);
  return out.join("\n") + "\n";
}
