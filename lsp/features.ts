/**
 * What the language server answers, as functions of an analysis (workspace.ts) and a position:
 * hover, completion, definition, references, rename, document symbols, semantic tokens, inlay hints,
 * quick fixes and formatting. Positions here are offsets; server.ts converts to and from LSP.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { Decl, Expr, FnDecl, Span } from "../grammar/ast.js";
import { walk } from "../grammar/walk.js";
import { explain, formatExplanation } from "../compiler/explain.js";
import { CURRICULUM_FIELDS } from "../compiler/curriculum.js";
import { coreBuiltins, preludeBuiltins } from "../compiler/builtins.js";
import { findStdlibDir } from "../compiler/modules.js";
import { formatDim } from "../compiler/units.js";
import type { Scalar, Value } from "../compiler/values.js";
import { printExpr } from "../plan/print.js";
import { typeRef } from "../formatter/print.js";
import { contains, declAt, occurrenceAt, spanKey, type Occurrence } from "./symbols.js";
import type { Analysis, Workspace } from "./workspace.js";

// ---- describing things -----------------------------------------------------------------------------

export function fnSignature(d: FnDecl): string {
  const params = d.params.map((p) => `${p.name}${p.type ? `: ${typeRef(p.type)}` : ""}${p.default ? ` = …` : ""}`).join(", ");
  return `fn ${d.name}(${params})${d.returnType ? `: ${typeRef(d.returnType)}` : ""}`;
}

/** A value in one line: `min(1 + floor(step / 6), 30) turns · step level`. */
export function describeValue(v: Value): string {
  switch (v.kind) {
    case "scalar": return describeScalar(v);
    case "string": return JSON.stringify(v.value);
    case "list": return `[${v.items.map(describeValue).join(", ")}]`;
    case "range": return `${describeScalar(v.start)} .. ${describeScalar(v.end)}`;
    case "record": return `{ ${[...v.fields].map(([k, x]) => `${k}: ${describeValue(x)}`).join(", ")} }`;
    case "object": return `${v.type}(${[...v.fields].map(([k, x]) => `${k}: ${describeValue(x)}`).join(", ")})`;
    case "loss": return v.terms.map((t) => `${printExpr(t.coef.tree)} × ${t.kind}`).join(" + ");
    case "fn": return fnSignature(v.decl);
    case "builtin": return `${v.name}(${v.params.map((p) => p.name).join(", ")})`;
    default: return v.kind;
  }
}

function describeScalar(s: Scalar): string {
  const unit = formatDim(s.dim);
  return `${printExpr(s.tree)}${unit && unit !== "number" ? ` ${unit}` : ""}`;
}

/** `turns · step level` for a scalar, else undefined. */
export function unitAndLevel(v: Value): string | undefined {
  if (v.kind !== "scalar") return undefined;
  const unit = formatDim(v.dim) || "number";
  return `${v.type === "bool" ? "bool" : unit} · ${v.level}`;
}

const builtinDocs = (() => {
  let cache: Map<string, { doc: string; params: string[] }> | undefined;
  return () => {
    if (cache) return cache;
    cache = new Map();
    for (const [k, v] of [...preludeBuiltins(), ...coreBuiltins()]) {
      if (v.kind === "builtin") cache.set(k, { doc: v.doc, params: v.params.map((p) => `${p.name}: ${p.type}`) });
    }
    return cache;
  };
})();

const code = (s: string) => "```tcod\n" + s + "\n```";

// ---- hover -------------------------------------------------------------------------------------

export function hover(a: Analysis, offset: number): { markdown: string; span: Span } | undefined {
  const occ = occurrenceAt(a.occurrences.get(a.path), offset);
  const field = curriculumFieldAt(a, offset);
  if (field) {
    const text = explainField(a, field.curriculum, field.name);
    if (text) return { markdown: text, span: field.span };
  }
  if (!occ) return undefined;
  if (occ.kind === "field" && occ.owner?.kind === "curriculum") {
    const spec = CURRICULUM_FIELDS[occ.name];
    if (spec) return { markdown: `${code(`${occ.name}: ${spec.type}`)}\n${spec.doc}\n\nlevel: ${spec.level} · default: ${spec.default}`, span: occ.span };
  }
  if (occ.kind === "builtin") {
    const b = builtinDocs().get(occ.name);
    return { markdown: b ? `${code(`${occ.name}(${b.params.join(", ")})`)}\n${b.doc}` : code(occ.name), span: occ.span };
  }
  if (!occ.target || !a.program) return undefined;
  const decl = declAt(a.program, occ.target);
  const where = relativeDisplay(a, occ.target.file);
  if (decl?.kind === "fn") return { markdown: `${code(fnSignature(decl))}\n${decl.doc ?? ""}\n\n*${where}*`, span: occ.span };
  // A value: evaluated in its module.
  const mod = a.program.modules.get(occ.target.file);
  const binding = mod?.scope.names.get(occ.name);
  if (decl && (decl.kind === "let" || decl.kind === "model") && binding && binding.kind !== "import") {
    const v = binding.get();
    const ul = unitAndLevel(v);
    const lines = [code(`${decl.kind} ${decl.name} = ${describeValue(v)}`)];
    if (ul) lines.push(`unit · level: ${ul}`);
    if (decl.doc) lines.push(decl.doc);
    lines.push(`*${where}*`);
    return { markdown: lines.join("\n\n"), span: occ.span };
  }
  if (decl?.kind === "curriculum") return { markdown: `${code(`curriculum ${decl.name}`)}\n${decl.doc ?? ""}\n\n*${where}*`, span: occ.span };
  if (occ.kind === "param") {
    const fn = enclosingFn(a, occ.target);
    const p = fn?.params.find((x) => x.nameSpan.start.offset === occ.target!.start.offset);
    if (p) return { markdown: code(`${p.name}${p.type ? `: ${typeRef(p.type)}` : ""}`) + (fn ? `\n\nparameter of ${fn.name}` : ""), span: occ.span };
  }
  return undefined;
}

function relativeDisplay(a: Analysis, file: string): string {
  return a.program?.modules.get(file)?.display ?? file;
}

function enclosingFn(a: Analysis, span: Span): FnDecl | undefined {
  const ast = a.program?.modules.get(span.file)?.ast;
  return ast?.decls.find((d): d is FnDecl => d.kind === "fn" && contains(d.span, span.start.offset));
}

/** The curriculum field whose name or value is at `offset`. */
function curriculumFieldAt(a: Analysis, offset: number): { curriculum: string; name: string; span: Span } | undefined {
  const ast = a.program?.modules.get(a.path)?.ast;
  for (const d of ast?.decls ?? []) {
    if (d.kind !== "curriculum" || !contains(d.span, offset)) continue;
    const f = d.fields.find((x) => contains(x.nameSpan, offset));
    if (f) return { curriculum: d.name, name: f.name, span: f.nameSpan };
  }
  return undefined;
}

/** What `tcod explain FILE CURRICULUM.FIELD` prints, with its values at a few steps. */
function explainField(a: Analysis, curriculum: string, field: string): string | undefined {
  const compiled = a.result.plans.find((p) => p.curriculum.name === curriculum);
  if (!compiled) return undefined;
  const total = compiled.plan.clock.steps;
  const steps = [...new Set([1, 2, 3, Math.round(total / 4), Math.round(total / 2), Math.round((3 * total) / 4), total])].filter((s) => s >= 1).sort((x, y) => x - y);
  const e = explain(compiled, [field], steps, undefined, a.result.sources, (file, line, col) => `${relativeDisplay(a, file)}:${line}:${col}`);
  if ("error" in e) return undefined;
  const spec = CURRICULUM_FIELDS[field];
  return "```text\n" + formatExplanation(e) + "\n```" + (spec ? `\n${spec.doc}` : "");
}

// ---- definition, references, rename --------------------------------------------------------------

export function definition(a: Analysis, offset: number): Span | undefined {
  const occ = occurrenceAt(a.occurrences.get(a.path), offset);
  if (occ?.target) return occ.target;
  // On an import path: the module itself.
  const ast = a.program?.modules.get(a.path)?.ast;
  for (const d of ast?.decls ?? []) {
    if (d.kind === "import" && contains(d.fromSpan, offset)) {
      const target = a.program!.importTargets.get(d);
      if (target) return { file: target, start: { offset: 0, line: 1, column: 1 }, end: { offset: 0, line: 1, column: 1 } };
    }
  }
  return undefined;
}

/** Every occurrence (declaration included) of what is at `offset`, across the analyses of the workspace. */
export function references(ws: Workspace, a: Analysis, offset: number): Occurrence[] {
  const occ = occurrenceAt(a.occurrences.get(a.path), offset);
  if (!occ?.target) return [];
  const key = spanKey(occ.target);
  const seen = new Set<string>();
  const out: Occurrence[] = [];
  for (const an of [a, ...ws.allAnalyses()]) {
    for (const list of an.occurrences.values()) {
      for (const o of list) {
        if (!o.target || spanKey(o.target) !== key) continue;
        const k = spanKey(o.span);
        if (seen.has(k)) continue;
        seen.add(k);
        out.push(o);
      }
    }
  }
  return out;
}

export type RenameResult = { edits: { span: Span; newText: string }[] } | { error: string };

export function rename(ws: Workspace, a: Analysis, offset: number, newName: string, isLibrary: (file: string) => boolean): RenameResult {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(newName)) return { error: `'${newName}' is not a name` };
  const occ = occurrenceAt(a.occurrences.get(a.path), offset);
  if (!occ?.target) return { error: "nothing to rename here" };
  if (isLibrary(occ.target.file)) return { error: `'${occ.name}' is declared in a library (${relativeDisplay(a, occ.target.file)}); it cannot be renamed here` };
  // Only occurrences spelled as the declaration (an import alias keeps its own name).
  const refs = references(ws, a, offset).filter((o) => o.name === occ.name || o.declaration);
  return { edits: refs.map((o) => ({ span: o.span, newText: newName })) };
}

// ---- completion --------------------------------------------------------------------------------

export interface CompletionEntry {
  label: string;
  kind: "field" | "function" | "variable" | "module" | "keyword" | "argument" | "file" | "folder";
  detail?: string;
  doc?: string;
  insertText?: string;
  /** An import to add at the top of the file (`import { linear } from "std/schedule"`). */
  addImport?: { name: string; from: string };
}

interface StdExport { name: string; module: string; decl?: Decl }

export class StdIndex {
  private cache?: StdExport[];
  constructor(private readonly ws: Workspace) {}
  exports(): StdExport[] {
    if (this.cache) return this.cache;
    const dir = findStdlibDir();
    const out: StdExport[] = [];
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".tcod")).sort()) {
      const path = join(dir, f);
      const source = this.ws.source(path);
      const ast = this.ws.parse(source.text, path, source.badBytes).ast;
      for (const d of ast.decls) if (d.kind !== "import" && d.kind !== "sweep" && d.exported) out.push({ name: d.name, module: `std/${f.replace(/\.tcod$/, "")}`, decl: d });
    }
    for (const k of coreBuiltins().keys()) out.push({ name: k, module: "std/core" });
    return (this.cache = out);
  }
  modules(): string[] {
    return [...new Set(["std/core", ...this.exports().map((e) => e.module)])].sort();
  }
}

export function complete(a: Analysis, std: StdIndex, text: string, offset: number): CompletionEntry[] {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  const ast = a.program?.modules.get(a.path)?.ast;

  // Import paths: inside the string of an import.
  const imp = /\bfrom\s+"([^"]*)$/.exec(before) ?? /^\s*import\s*\{[^}]*\}\s*from\s+"([^"]*)$/.exec(before);
  if (imp) return importPaths(a.path, imp[1]!, std);

  // Named arguments: inside the parentheses of a call.
  const call = enclosingCall(text, offset);
  const decls = ast?.decls ?? [];
  const inCurriculum = decls.find((d) => d.kind === "curriculum" && d.span.start.offset < offset && offset <= d.span.end.offset);
  if (call && /(\(|,)\s*[A-Za-z_]*$/.test(before)) {
    const args = namedArgs(a, std, call);
    if (args.length) return [...args, ...names(a, std, offset)];
  }
  // Curriculum fields: at the start of a line in a curriculum body.
  if (inCurriculum && !call && /^\s*[A-Za-z_]*$/.test(before)) {
    const present = new Set(inCurriculum.kind === "curriculum" ? inCurriculum.fields.map((f) => f.name) : []);
    return Object.entries(CURRICULUM_FIELDS).filter(([k]) => !present.has(k)).map(([k, spec]) => ({
      label: k, kind: "field" as const, detail: `${spec.type} · ${spec.level}${spec.required ? " · required" : ""}`, doc: `${spec.doc}\n\nexample: \`${k}: ${spec.example}\``, insertText: `${k}: `,
    }));
  }
  if (/^\s*[A-Za-z_]*$/.test(before) && !call && !decls.some((d) => d.span.start.offset < offset && offset < d.span.end.offset)) {
    return ["import", "let", "fn", "model", "curriculum", "sweep", "export"].map((k) => ({ label: k, kind: "keyword" as const }));
  }
  return names(a, std, offset);
}

/** Names usable at `offset`: the module's, the prelude's, and stdlib exports (imported on accept). */
function names(a: Analysis, std: StdIndex, offset: number): CompletionEntry[] {
  const out: CompletionEntry[] = [];
  const mod = a.program?.modules.get(a.path);
  const seen = new Set<string>();
  const fn = mod?.ast?.decls.find((d): d is FnDecl => d.kind === "fn" && contains(d.span, offset));
  for (const p of fn?.params ?? []) { seen.add(p.name); out.push({ label: p.name, kind: "variable", detail: `parameter${p.type ? `: ${typeRef(p.type)}` : ""}` }); }
  for (const l of fn?.lets ?? []) { seen.add(l.name); out.push({ label: l.name, kind: "variable", detail: "let" }); }
  for (const [name, b] of mod?.scope.names ?? []) {
    if (seen.has(name)) continue;
    seen.add(name);
    const occ = a.occurrences.get(a.path)?.find((o) => o.name === name && o.target);
    const decl = occ?.target && a.program ? declAt(a.program, occ.target) : undefined;
    out.push({ label: name, kind: b.kind === "fn" || decl?.kind === "fn" ? "function" : "variable", detail: decl?.kind === "fn" ? fnSignature(decl) : b.kind, ...(decl && "doc" in decl && decl.doc ? { doc: decl.doc } : {}) });
  }
  for (const [name, b] of builtinDocs()) {
    if (seen.has(name)) continue;
    seen.add(name);
    out.push({ label: name, kind: "function", detail: `${name}(${b.params.join(", ")})`, doc: b.doc });
  }
  for (const v of ["step", "total_steps", "feedback", "episode", "turn", "token"]) if (!seen.has(v)) { seen.add(v); out.push({ label: v, kind: "variable", detail: "runtime variable" }); }
  for (const e of std.exports()) {
    if (seen.has(e.name)) continue;
    seen.add(e.name);
    const d = e.decl;
    out.push({
      label: e.name, kind: d?.kind === "fn" ? "function" : "variable", detail: `${d?.kind === "fn" ? fnSignature(d) : e.name} — ${e.module}`,
      ...(d && "doc" in d && d.doc ? { doc: d.doc } : {}), addImport: { name: e.name, from: e.module },
    });
  }
  return out;
}

function namedArgs(a: Analysis, std: StdIndex, callee: string): CompletionEntry[] {
  const occ = a.occurrences.get(a.path)?.find((o) => o.name === callee && o.target);
  let decl = occ?.target && a.program ? declAt(a.program, occ.target) : undefined;
  if (!decl) decl = std.exports().find((e) => e.name === callee)?.decl;
  if (decl?.kind === "fn") {
    return decl.params.map((p) => ({ label: `${p.name}:`, kind: "argument" as const, detail: p.type ? typeRef(p.type) : "", insertText: `${p.name}: `, doc: `parameter of ${decl.name}${p.default ? " (has a default)" : ""}` }));
  }
  const b = builtinDocs().get(callee);
  return b ? b.params.map((p) => ({ label: `${p.split(":")[0]}:`, kind: "argument" as const, detail: p, insertText: `${p.split(":")[0]}: ` })) : [];
}

/** The name of the call whose parentheses enclose `offset` (scanning back over balanced brackets). */
function enclosingCall(text: string, offset: number): string | undefined {
  let depth = 0;
  for (let i = offset - 1; i >= 0 && i > offset - 2000; i--) {
    const c = text[i]!;
    if (c === ")" || c === "]" || c === "}") depth++;
    else if (c === "[" || c === "{") { if (depth === 0) return undefined; depth--; }
    else if (c === "(") {
      if (depth > 0) { depth--; continue; }
      const m = /([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(text.slice(Math.max(0, i - 100), i));
      return m?.[1];
    }
  }
  return undefined;
}

function importPaths(file: string, typed: string, std: StdIndex): CompletionEntry[] {
  const out: CompletionEntry[] = [];
  if (typed === "" || "std/".startsWith(typed.slice(0, 4))) for (const m of std.modules()) out.push({ label: m, kind: "module", detail: "standard library" });
  if (typed === "" || typed.startsWith(".")) {
    const base = dirname(file);
    const sub = typed.includes("/") ? typed.slice(0, typed.lastIndexOf("/") + 1) : "./";
    const dir = join(base, sub);
    if (existsSync(dir)) {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.name.startsWith(".") || e.name === "node_modules") continue;
        const p = join(dir, e.name);
        if (p === file) continue;
        if (e.isDirectory()) out.push({ label: `${sub}${e.name}/`, kind: "folder" });
        else if (e.name.endsWith(".tcod") || e.name.endsWith(".ts")) out.push({ label: `${sub}${e.name.endsWith(".tcod") ? e.name.slice(0, -5) : e.name}`, kind: "file", detail: relative(base, p) });
      }
    }
  }
  if (typed === "" || typed.startsWith("@") || /^[a-z]/.test(typed)) {
    // npm packages with .tcod files, in node_modules folders above the file.
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      const nm = join(dir, "node_modules");
      if (existsSync(nm)) {
        for (const pkg of packagesIn(nm)) {
          for (const f of tcodFilesIn(join(nm, pkg), 3)) out.push({ label: `${pkg}/${f.replace(/\.tcod$/, "")}`, kind: "module", detail: "npm" });
        }
      }
      if (dirname(dir) === dir) break;
    }
  }
  return out;
}

function packagesIn(nm: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(nm, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name.startsWith(".")) continue;
    if (e.name.startsWith("@")) for (const s of readdirSync(join(nm, e.name), { withFileTypes: true })) { if (s.isDirectory()) out.push(`${e.name}/${s.name}`); }
    else out.push(e.name);
  }
  return out;
}

function tcodFilesIn(dir: string, depth: number): string[] {
  if (depth < 0 || !existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    if (e.isDirectory()) out.push(...tcodFilesIn(join(dir, e.name), depth - 1).map((f) => `${e.name}/${f}`));
    else if (e.name.endsWith(".tcod")) out.push(e.name);
  }
  return out;
}

// ---- symbols, tokens, hints --------------------------------------------------------------------

export interface DocSymbol { name: string; kind: "import" | "let" | "fn" | "model" | "curriculum" | "sweep" | "field"; detail?: string; span: Span; selection: Span; children: DocSymbol[] }

export function documentSymbols(decls: Decl[]): DocSymbol[] {
  return decls.flatMap((d): DocSymbol[] => {
    switch (d.kind) {
      case "import": return d.names.map((s) => ({ name: s.alias ?? s.name, kind: "import" as const, detail: `from "${d.from}"`, span: d.span, selection: s.nameSpan, children: [] }));
      case "let": return [{ name: d.name, kind: "let", span: d.span, selection: d.nameSpan, children: [] }];
      case "fn": return [{ name: d.name, kind: "fn", detail: fnSignature(d), span: d.span, selection: d.nameSpan, children: [] }];
      case "model":
      case "curriculum":
        return [{
          name: d.name, kind: d.kind, ...(d.kind === "curriculum" && d.base ? { detail: `with ${d.base.name}` } : {}), span: d.span, selection: d.nameSpan,
          children: d.fields.map((f) => ({ name: f.name, kind: "field" as const, span: f.span, selection: f.nameSpan, children: [] })),
        }];
      case "sweep": return [{ name: d.name, kind: "sweep", detail: d.mode, span: d.span, selection: d.nameSpan, children: [] }];
    }
  });
}

export const TOKEN_TYPES = ["namespace", "type", "class", "function", "parameter", "variable", "property", "keyword", "comment", "string", "number", "operator", "enumMember"] as const;
export const TOKEN_MODIFIERS = ["declaration", "readonly", "defaultLibrary"] as const;

export interface SemanticToken { span: Span; type: (typeof TOKEN_TYPES)[number]; modifiers: (typeof TOKEN_MODIFIERS)[number][] }

/** Names classified by what they mean (the TextMate grammar colours keywords, numbers, strings, comments). */
export function semanticTokens(a: Analysis, isLibrary: (file: string) => boolean): SemanticToken[] {
  const out: SemanticToken[] = [];
  for (const o of a.occurrences.get(a.path) ?? []) {
    const lib = o.target ? isLibrary(o.target.file) : o.kind === "builtin";
    const mods: SemanticToken["modifiers"] = [...(o.declaration ? ["declaration" as const] : []), ...(lib ? ["defaultLibrary" as const] : [])];
    const type: SemanticToken["type"] | undefined =
      o.kind === "fn" ? "function" : o.kind === "builtin" ? (builtinDocs().has(o.name) ? "function" : "variable")
        : o.kind === "let" ? "variable" : o.kind === "param" ? "parameter" : o.kind === "model" || o.kind === "curriculum" ? "class"
          : o.kind === "field" || o.kind === "namedArg" ? "property" : undefined;
    if (type) out.push({ span: o.span, type, modifiers: type === "variable" ? [...mods, "readonly"] : mods });
  }
  // Units after numbers: the word the literal ends with (a comment may stand between it and the number).
  const ast = a.program?.modules.get(a.path)?.ast;
  walk(ast?.decls ?? [], (e) => {
    if (e.kind === "number" && e.unit && e.unit !== "%") {
      const word = /[A-Za-z_]+$/.exec(e.text)?.[0];
      if (word) {
        const start = { offset: e.span.end.offset - word.length, line: e.span.end.line, column: e.span.end.column - word.length };
        out.push({ span: { file: e.span.file, start, end: e.span.end }, type: "enumMember", modifiers: [] });
      }
    }
  });
  return out.sort((x, y) => x.span.start.offset - y.span.start.offset);
}

export interface InlayHint { at: number; line: number; column: number; label: string; tooltip?: string }

/** After each curriculum field and top-level `let` with a number value: its unit and binding-time level. */
export function inlayHints(a: Analysis): InlayHint[] {
  const out: InlayHint[] = [];
  const mod = a.program?.modules.get(a.path);
  if (!mod?.ast) return out;
  for (const d of mod.ast.decls) {
    if (d.kind === "let") {
      const b = mod.scope.names.get(d.name);
      const ul = b && b.kind === "let" ? unitAndLevel(b.get()) : undefined;
      if (ul) out.push({ at: d.value.span.end.offset, line: d.value.span.end.line, column: d.value.span.end.column, label: `: ${ul}` });
    }
    if (d.kind === "curriculum") {
      const compiled = a.result.plans.find((p) => p.curriculum.name === d.name);
      for (const f of d.fields) {
        const fv = compiled?.curriculum.fields.get(f.name);
        const ul = fv ? unitAndLevel(fv.value) : undefined;
        if (ul) out.push({ at: f.value.span.end.offset, line: f.value.span.end.line, column: f.value.span.end.column, label: `: ${ul}`, tooltip: CURRICULUM_FIELDS[f.name]?.doc });
      }
    }
  }
  return out;
}

/** `Did you mean 'x'?` in a diagnostic message → the replacement. */
export function didYouMeanFix(message: string): string | undefined {
  return /Did you mean '([^']+)'\?/.exec(message)?.[1];
}
