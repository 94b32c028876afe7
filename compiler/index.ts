/**
 * The compiler's entry points: check a file, compile it to plans (one per curriculum and sweep
 * point), with `--set` overrides. Phases: modules (load, parse) → evaluate (check) → lower → validate.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { readSourceFile } from "../plan/read-file.js";
import type { CurriculumDecl, Decl, Expr, FnDecl, ImportDecl, LetDecl, ModelDecl, Span, SweepDecl } from "../grammar/ast.js";
import { parse, parseExpression } from "../grammar/index.js";
import { decodeSource, sameSource, type SourceText } from "../grammar/source-chars.js";
import { UserError, type UserIssue } from "../plan/errors.js";
import type { Plan } from "../plan/schema.js";
import { SIZE_LIMITS } from "../plan/defaults.js";
import { CURRICULUM_FIELDS, evalCurriculum, type CurriculumValue, type FieldOverride, type FieldShare, type FieldValue } from "./curriculum.js";
import { d, didYouMean, type Diagnostic } from "./diagnostics/index.js";
import { Evaluator, INLINE_BUDGET } from "./evaluate.js";
import { lower, type LoweredPoint } from "./lower.js";
import { sameJson } from "./json-equal.js";
import { findStdlibDir, importClosureTexts, ModuleLoader, projectRootOf, type LazyCell, type LoaderFs, type Module } from "./modules.js";
import { byCodeUnits, DiagnosticSink } from "./sink.js";
import { bundleExtensions, type TsExtension } from "./ts-extensions.js";
import { scalarType, TypeTable } from "./types.js";
import { fixed, type Scalar, type Scope, type Value } from "./values.js";

export { render, toJsonLine, type Diagnostic } from "./diagnostics/index.js";
/** A syntax error of grammar/ as the catalogue message the compiler reports for it. */
export { syntaxMessage } from "./modules.js";

/**
 * A file that did not compile, thrown where a command needs its plans (`tcod run FILE.tcod`). Its
 * diagnostics carry the codes, positions and hints; `printed` when they were shown already.
 */
export class CompileError extends UserError {
  readonly code: `TC${number}`;
  constructor(readonly file: string, readonly result: Pick<CompileResult, "diagnostics" | "sources">, readonly printed = false) {
    super(`${file} did not compile`);
    const first = result.diagnostics.find((x) => x.severity === "error");
    this.code = first?.code ?? "TC9001";
  }
  override problems(): UserIssue[] {
    return this.result.diagnostics.filter((x) => x.severity === "error").map((x) => ({
      message: x.message, ...(x.hint ? { hint: x.hint } : {}), where: { file: x.span.file, line: x.span.start.line, column: x.span.start.column },
    }));
  }
}

export interface CompileOptions {
  /** `CURRICULUM.FIELD=VALUE` or `LET=VALUE`, typed and checked like source. */
  overrides?: string[];
  /** Compile only this curriculum of the file. */
  curriculum?: string;
  /**
   * Where the command line wrote `curriculum`, for the pseudo-file an unknown one (TC2017) points
   * into, as `--set` errors point into `<--set N>`: the argument (`--curriculum`, the default, or
   * `target`) and its whole text, which starts with the name (`tcod explain FILE nope.horizon`).
   */
  curriculumFrom?: { arg: string; text: string };
  /** Expand the file's sweeps (default true). */
  sweeps?: boolean;
  /** The most sweep points a file may expand to (default DEFAULT_MAX_SWEEP_POINTS); more is TC5006, found before expanding. */
  maxPoints?: number;
  /**
   * Whether the points of a sweep share what they evaluate alike (default true; see `fieldShare`):
   * false evaluates every point on its own, the reference the tests compare the sharing with.
   */
  sharePoints?: boolean;
  /**
   * Whether a stdlib module's function bodies, checked clean before in this process from the same
   * text, are skipped (default true; see `stdlibBodies`): false checks them, the reference the tests
   * compare with.
   */
  stdlibBodyRecords?: boolean;
  /**
   * For editors: reads a file's text (an unsaved buffer instead of the disk) and parses it (a cache
   * shared across compilations, keyed by file and text). Defaults: the disk; a fresh parse.
   */
  host?: CompileHost;
}

export interface CompileHost {
  /**
   * A file's text: an editor's buffer (`{ text }`: no list of bad bytes, every U+FFFD is TC1008), or
   * the disk's as `readSourceFile` decodes it (bytes that are not UTF-8 named, TC1008).
   */
  read(path: string): SourceText;
  /** As grammar/index.ts `parse`, given the `SourceText`'s text and bad bytes. */
  parse(text: string, file: string, badBytes?: SourceText["badBytes"]): ReturnType<typeof parse>;
  /**
   * Whether to check this module's function bodies (default: yes; its values are evaluated either
   * way). A host answers no for a module that, with everything it imports, is unchanged since it was
   * last checked without diagnostics: checking it again would report nothing.
   */
  checkModule?(path: string, program: LoadedProgram): boolean;
  /** The file system (default: the disk, asked each time); an editor answers from caches it keeps current. */
  fs?: LoaderFs;
  /**
   * A module of an earlier compilation to adopt as it is, instead of loading and checking `path`
   * again: the host vouches that it and everything it imports have the same texts and resolve the
   * same way as then, and that they had no diagnostics (lsp/workspace.ts).
   */
  reuse?(path: string): Module | undefined;
  /**
   * The plans of earlier compilations of this entry file (one memo per entry, kept by the host): a
   * curriculum or sweep point whose inputs are unchanged is not compiled again (see `planInputs`).
   */
  plans?: PlanMemo;
  /**
   * Whether `path` is an editor's unsaved buffer (checked under a made-up path): its relative and
   * package imports, which are found from its folder, are reported (TC1112) instead of resolved.
   */
  unsaved?(path: string): boolean;
}

/** Compiled plans by curriculum and settings, with what each read (`planInputs`); for `CompileHost.plans`. */
export type PlanMemo = Map<string, { inputs: string[]; compiled: CompiledPlan; cost: { inlined: number; depth: number } }>;

/**
 * The modules a compilation loaded (for editors: names, scopes, spans), and where each import
 * declaration led (absolute path of the imported module).
 */
export interface LoadedProgram {
  entry: string;
  modules: ReadonlyMap<string, Module>;
  importTargets: ReadonlyMap<ImportDecl, string>;
}

export interface CompiledPlan {
  plan: Plan;
  /** plan.bundle.mjs contents, when the curriculum uses TypeScript extensions. */
  bundle?: string;
  curriculum: CurriculumValue;
  /** The overrides and sweep point in force, as `target=value` texts. */
  settings: string[];
}

export interface CompileResult {
  plans: CompiledPlan[];
  diagnostics: Diagnostic[];
  /** Source texts by file, for rendering diagnostics (includes `<--set …>` pseudo-files). */
  sources: Map<string, string>;
  ok: boolean;
  /** The module graph of the first load (absent when the entry file could not be read). */
  program?: LoadedProgram;
}

/** One value set: `targetSpan` is where its target is written (the `a.b` of `--set a.b=…`, a sweep's axis). */
interface Setting { target: string[]; targetSpan: Span; text: string; expr: Expr; file: string; source: "override" | "sweep" }

/** Sweep points a file may expand to unless `--max-points` raises the limit. */
export const DEFAULT_MAX_SWEEP_POINTS = 1000;

/** Caches file reads, parses and text hashes across the loaders of one compilation (one per sweep point). */
class SourceCache {
  readonly texts = new Map<string, SourceText>();
  private readonly asts = new Map<string, ReturnType<typeof parse>>();
  /** By path: in one compilation a path has one text, whichever loader's module holds it. */
  private readonly hashes = new Map<string, string>();
  /** Types by written text: every evaluator of the compilation reads through it. */
  readonly types = new TypeTable();
  constructor(readonly host?: CompileHost) {}
  read = (p: string): SourceText => {
    let t = this.texts.get(p);
    if (t === undefined) {
      // A stdlib file as parsed before (stdlibParses): its text is that record's, one string for both.
      if (this.host) t = this.host.read(p);
      else { t = readSourceFile(p); t = stdlibRecord(t, p)?.source ?? t; }
      this.texts.set(p, t);
    }
    return t;
  };
  /** ASTs are immutable data: every loader of the compilation shares them. */
  parse = (text: string, file: string, badBytes?: SourceText["badBytes"]): ReturnType<typeof parse> => {
    let r = this.asts.get(file);
    if (r === undefined) { r = this.host ? this.host.parse(text, file, badBytes) : parseShared({ text, badBytes }, file); this.asts.set(file, r); }
    return r;
  };
  /** A .tcod module's text hash, once per compilation (a sweep point's loader loads the entry again). */
  hash(m: Module): string {
    let h = this.hashes.get(m.path);
    if (h === undefined) {
      // A stdlib text's hash is kept with its parse (the start-up snapshot's were computed when built).
      const record = stdlibRecord(m, m.path);
      h = record ? (record.sha256 ??= sha256(m.text)) : sha256(m.text);
      this.hashes.set(m.path, h);
    }
    return h;
  }
}

/**
 * Parses of stdlib modules, shared by the compilations of a process (`tcod check a.tcod b.tcod`
 * parses std/ once) and carried by the start-up snapshot of `tcod check` (bin/snapshot-main.ts),
 * where they were parsed at build time: by name inside std/, with the folder they were parsed in,
 * and the text's sha256 once asked (`SourceCache.hash`). A compilation without a host reads a stdlib file
 * of the same text as this record's string (`SourceCache.read`), so the snapshot holds each text once.
 * Module-level, the one cache of parses that is: it holds the bundled stdlib alone (a path outside
 * std/ is never recorded), one record per file, and a record stands for a file only while the text
 * read is the one it was parsed from (`stdlibRecord`); a different text replaces it. An editor's
 * compilations (with a host) parse through the host and never use it.
 */
const stdlibParses = new Map<string, StdlibRecord>();
interface StdlibRecord { dir: string; source: SourceText; result: ReturnType<typeof parse>; sha256?: string }

/** The record of stdlib file `file` when `source` is what it was parsed from. */
function stdlibRecord(source: SourceText, file: string): StdlibRecord | undefined {
  const dir = findStdlibDir();
  if (!file.startsWith(dir + sep)) return undefined;
  const hit = stdlibParses.get(file.slice(dir.length));
  return hit && sameSource(hit.source, source) ? hit : undefined;
}

function parseShared(source: SourceText, file: string): ReturnType<typeof parse> {
  const dir = findStdlibDir();
  if (!file.startsWith(dir + sep)) return parse(source.text, file, source.badBytes);
  const hit = stdlibRecord(source, file);
  if (hit) {
    // Parsed where the package was then (a snapshot built before the package moved): same text, so
    // the same tree, with its spans naming the file where it is now.
    if (hit.dir !== dir) { rebase(hit.result, file); hit.dir = dir; }
    return hit.result;
  }
  const result = parse(source.text, file, source.badBytes);
  stdlibParses.set(file.slice(dir.length), { dir, source, result });
  return result;
}

/** Parses and hashes every stdlib module now (the start-up snapshot carries them). */
export function preparseStdlib(): void {
  const dir = findStdlibDir();
  for (const n of readdirSync(dir)) {
    if (!n.endsWith(".tcod")) continue;
    const source = decodeSource(readFileSync(join(dir, n)));
    parseShared(source, join(dir, n));
    stdlibRecord(source, join(dir, n))!.sha256 = sha256(source.text);
  }
}

/** Points every span of a parse at `file` (in place). */
function rebase(result: ReturnType<typeof parse>, file: string): void {
  result.ast.path = file;
  const seen = new Set<object>();
  const walk = (v: unknown): void => {
    if (!v || typeof v !== "object" || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) { for (const x of v) walk(x); return; }
    const o = v as Record<string, unknown>;
    if (typeof o["file"] === "string" && "start" in o && "end" in o) o["file"] = file;
    for (const k in o) if (k !== "text") walk(o[k]);
  };
  walk(result);
}

export function compileFile(path: string, opts: CompileOptions = {}): CompileResult {
  const abs = resolve(path);
  const sink = new DiagnosticSink();
  const cache = new SourceCache(opts.host);
  const sources = new Map<string, string>();
  try {
    // Without a host (`tcod check`), stdlib function bodies checked clean before from the same texts
    // are not checked again (`stdlibBodies`): when their inlined calls, added to what the first
    // load's evaluator inlined, could have reached the budget, or a limit was hit, the file is
    // compiled again with every body checked, so the result is the same either way.
    const skip = !opts.host && opts.stdlibBodyRecords !== false ? { cost: 0, base: undefined as Evaluator | undefined } : undefined;
    const r = compileInto(abs, opts, sink, cache, sources, skip);
    if (skip && skip.cost > 0 && (!skip.base || skip.base.limitHit || skip.base.inlinedSoFar + skip.cost > INLINE_BUDGET || r.diagnostics.some((x) => x.code === "TC2019" || x.code === "TC2020"))) {
      return compileFile(path, { ...opts, stdlibBodyRecords: false });
    }
    return r;
  } catch (e) {
    // The evaluator bounds its own nesting (TC2020) and the parser its depth (TC1007); this is the
    // last line for a shape nobody bounded: a coded error, never a stack trace.
    if (!(e instanceof RangeError && /call stack/i.test(e.message))) throw e;
    sink.add(d.stackExhausted({ phase: "compiling" }), spanAt(abs));
    return finish([], sink, cache, sources);
  }
}

function compileInto(abs: string, opts: CompileOptions, sink: DiagnosticSink, cache: SourceCache, sources: Map<string, string>, skip?: StdlibSkip): CompileResult {
  const root = projectRootOf(abs);

  const overrides: Setting[] = [];
  (opts.overrides ?? []).forEach((text, i) => {
    const s = parseSetting(text, `<--set ${i + 1}>`, sink, sources);
    if (s) overrides.push(s);
  });

  // A first load checks the whole module graph: syntax, names, every function body.
  const base = newLoader(root, sink, cache);
  // The entry is never adopted: overrides change its scope, and it is the file being edited.
  const entry = base.loader.loadEntry(abs);
  if (!entry) return finish([], sink, cache, sources);
  const program: LoadedProgram = { entry: abs, modules: base.loader.modules, importTargets: base.loader.importTargets };
  const checkModule = opts.host?.checkModule?.bind(opts.host);
  if (skip) skip.base = base.ev;
  checkFunctionBodies(base.loader, base.ev, checkModule && ((p) => checkModule(p, program)), skip);

  // An empty name (`--curriculum ""`) names no curriculum: an error, never "all of them".
  const curricula = entry.curricula.filter((c) => opts.curriculum === undefined || c.name === opts.curriculum);
  if (opts.curriculum !== undefined && curricula.length === 0) {
    // Not at line 1 of the file, which has nothing to do with it: at the argument that names it.
    const names = entry.curricula.map((c) => c.name);
    const from = opts.curriculumFrom ?? { arg: "--curriculum", text: opts.curriculum };
    const file = `<${from.arg}>`;
    sources.set(file, from.text);
    const end = from.text.startsWith(opts.curriculum) ? opts.curriculum.length : 0;
    const span: Span = { file, start: { offset: 0, line: 1, column: 1 }, end: { offset: end, line: 1, column: end + 1 } };
    sink.add(d.unknownCurriculum({ name: opts.curriculum, suggestion: didYouMean(opts.curriculum, names), where: entry.display, available: names.join(", ") || "none" }), span);
  }
  // `--set steps=500` (a field name, not a let) sets that field of every curriculum of the file.
  const lets = new Set(entry.ast?.decls.filter((x) => x.kind === "let").map((x) => (x as { name: string }).name) ?? []);
  // `--set optimizer.lr=0.05`: an argument of that field's call, likewise in every curriculum.
  const curriculumNames = new Set(entry.curricula.map((c) => c.name));
  const expanded = overrides.flatMap((s) => (!lets.has(s.target[0]!) && !curriculumNames.has(s.target[0]!) && Object.hasOwn(CURRICULUM_FIELDS, s.target[0]!) && entry.curricula.length
    ? entry.curricula.map((c) => ({ ...s, target: [c.name, ...s.target] }))
    : [s]));
  // Only valid overrides are applied; the others were reported.
  const validOverrides = expanded.filter((s) => validateTarget(s.target, s.targetSpan, entry, sink));

  // The CLI refuses a --max-points past the hard limit; an API caller's is held to it here.
  const points = (opts.sweeps ?? true) ? expandSweeps(entry.sweeps, entry, sink, Math.min(opts.maxPoints ?? DEFAULT_MAX_SWEEP_POINTS, SIZE_LIMITS.sweepPoints)) : [[]];
  if (opts.sweeps ?? true) checkOverridesOfSwept(validOverrides, entry, sink);
  const plans: CompiledPlan[] = [];
  let pointsBefore = 0;
  const memo = opts.host?.plans;
  const used = new Set<string>();
  const index = new EntryIndex(entry);
  {
    // Evaluate every curriculum even after errors, to report everything in one run; plans are
    // dropped at the end when any error was found.
    for (const c of curricula) {
      const applies = (s: Setting) => s.target.length === 1 || s.target[0] === c.name;
      const seen = new Set<string>();
      // The points' fields that name nothing a point sets are evaluated once and shared (FieldShare).
      const share = points.length > 1 && opts.sharePoints !== false ? fieldShare(base.loader, index, [...points.flat(), ...validOverrides].filter(applies)) : undefined;
      for (const point of points) {
        // A sweep over another curriculum's fields leaves this one as it is: compile it once.
        const own = point.filter(applies);
        const key = own.map((s) => `${s.target.join(".")}=${s.text}`).join(";");
        if (seen.has(key)) continue;
        seen.add(key);
        const settings = [...own, ...validOverrides.filter(applies)];
        // Without settings the first loader's evaluation is reused (lets are evaluated once).
        const compiled = memo
          ? compileMemo(memo, used, abs, root, c.name, settings, own, sink, cache, base, index, share)
          : compileOne(abs, root, c.name, settings, own, sink, cache, settings.length === 0 ? base : undefined, base.loader.importTargets, share);
        if (compiled) plans.push(compiled);
      }
      warnIdenticalPoints(plans.slice(pointsBefore), c.name, entry, sink);
      pointsBefore = plans.length;
    }
  }
  if (memo) for (const k of memo.keys()) if (!used.has(k)) memo.delete(k);
  return { ...finish(plans, sink, cache, sources), program };
}

/**
 * The names of the curricula the file at `path` declares, from a parse alone: for the hint of a
 * command line that names one badly, before anything is compiled. Undefined when the file cannot be read.
 */
export function declaredCurricula(path: string): string[] | undefined {
  let source: SourceText;
  try { source = readSourceFile(path); } catch { return undefined; }
  const { ast } = parse(source.text, resolve(path), source.badBytes);
  return ast.decls.filter((x): x is CurriculumDecl => x.kind === "curriculum").map((c) => c.name);
}

/** Checks files without writing anything: every diagnostic of every file. */
export function checkFiles(paths: string[], opts: Pick<CompileOptions, "maxPoints" | "overrides" | "curriculum"> = {}): CompileResult {
  const results = paths.map((p) => compileFile(p, opts));
  const sources = new Map<string, string>();
  for (const r of results) for (const [k, v] of r.sources) sources.set(k, v);
  // A library error reached from several files is one error.
  const seen = new Set<string>();
  const diagnostics = results.flatMap((r) => r.diagnostics).filter((x) => {
    const key = `${x.code}|${x.span.file}|${x.span.start.offset}|${x.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { plans: results.flatMap((r) => r.plans), diagnostics, sources, ok: diagnostics.every((x) => x.severity !== "error") };
}

function finish(plans: CompiledPlan[], sink: DiagnosticSink, cache: SourceCache, sources: Map<string, string>): CompileResult {
  for (const [k, v] of cache.texts) sources.set(k, v.text);
  const diagnostics = sink.sorted();
  return { plans: diagnostics.some((x) => x.severity === "error") ? [] : plans, diagnostics, sources, ok: diagnostics.every((x) => x.severity !== "error") };
}

/** A loader and its evaluator; for a sweep point, `resolved` is the first load's `importTargets`. */
function newLoader(root: string, sink: DiagnosticSink, cache: SourceCache, resolved?: ReadonlyMap<ImportDecl, string>, shared?: ReadonlyMap<LetDecl | ModelDecl, LazyCell>): { loader: ModuleLoader; ev: Evaluator } {
  let loader: ModuleLoader | undefined;
  const ev = new Evaluator(sink, (s) => (loader ? loader.describe(s) : `${s.file}:${s.start.line}:${s.start.column}`), cache.types);
  const host = cache.host;
  loader = new ModuleLoader(root, sink, ev, cache.read, cache.parse, {
    ...(host?.fs ? { fs: host.fs } : {}), ...(host?.reuse ? { reuse: (p) => host.reuse!(p) } : {}), ...(host?.unsaved ? { unsaved: (p) => host.unsaved!(p) } : {}), ...(resolved ? { resolved } : {}), ...(shared ? { shared } : {}),
  });
  return { loader, ev };
}

function compileOne(abs: string, root: string, name: string, settings: Setting[], point: Setting[], sink: DiagnosticSink, cache: SourceCache, reuse?: { loader: ModuleLoader; ev: Evaluator }, resolved?: ReadonlyMap<ImportDecl, string>, share?: SweepShare): CompiledPlan | undefined {
  if (!reuse && share) {
    try {
      return compileOne(abs, root, name, settings, point, sink, cache, newLoader(root, sink, cache, resolved, share.enter()), resolved, share);
    } finally { share.leave(); }
  }
  const { loader, ev } = reuse ?? newLoader(root, sink, cache, resolved);
  if (share) share.loader = loader;
  const entry = loader.loadEntry(abs)!;
  const fieldOverrides: FieldOverride[] = [];
  for (const s of settings) {
    if (s.target.length === 1) {
      const prev = entry.scope.names.get(s.target[0]!)!;
      let cached: Value | undefined;
      entry.scope.names.set(s.target[0]!, {
        span: s.expr.span, kind: "let", describe: `${s.source === "sweep" ? "sweep" : "--set"} ${s.target[0]}=${s.text} (was ${prev.describe})`,
        get: () => (cached ??= ev.expr(s.expr, entry.scope)),
      });
    } else {
      fieldOverrides.push({ field: s.target[1]!, args: s.target.slice(2), expr: s.expr, scope: entry.scope, source: s.source, text: s.text, target: s.target.join(".") });
    }
  }
  const decl = entry.curricula.find((c) => c.name === name)!;
  const cv = evalCurriculum(decl, entry.scope, ev, fieldOverrides, share);
  const modules = [...loader.modules.values()].filter((m) => m.path !== "std/core");
  const exts = modules.map((m) => m.ts).filter((t): t is TsExtension => !!t);
  const sweep = point.length ? Object.fromEntries(point.map((s) => [s.target.join("."), s.text.replace(/\s+/g, "")])) : undefined;
  const planName = name + (sweep ? "@" + Object.entries(sweep).map(([k, v]) => `${k}=${v}`).join(",") : "");
  const plan = lower(cv, ev.check, {
    sources: modules.map((m) => planSource(m, cache)).sort((a, b) => byCodeUnits(a.path, b.path)),
    ...(sweep ? { sweep } : {}),
    describe: (s) => loader.describe(s),
    ...(exts.length ? { extensions: { bundle: `${safeFileName(planName)}.plan.bundle.mjs`, functions: Object.fromEntries(exts.flatMap((e) => e.functions.map((f) => [f.planName, { params: paramNames(f), returns: "number", level: f.kind === "turn" ? "turn" : f.kind === "step" ? "step" : "any" }]))) } } : {}),
    // A point whose fields are another point's values but for the horizon lowers only the horizon.
    ...(share ? { ...(share.lowered ? { reuse: share.lowered } : {}), keep: (p: LoweredPoint) => { share.lowered = p; } } : {}),
  });
  if (!plan) return undefined;
  let bundle: string | undefined;
  if (exts.length) {
    const b = bundleExtensions(exts, dirname(abs));
    if ("errors" in b) {
      for (const message of b.errors) sink.add(d.tsError({ file: exts.map((x) => x.display).join(", "), message: `esbuild could not bundle it:\n${message}` }), decl.nameSpan);
      return undefined;
    }
    bundle = b.text;
  }
  return { plan, curriculum: cv, settings: settings.map((s) => `${s.target.join(".")}=${s.text}`), ...(bundle ? { bundle } : {}) };
}

/**
 * `compileOne` through an editor's memo (`CompileHost.plans`): the plan of an earlier compilation when
 * its inputs (`planInputs`) are the same, it reported nothing then, and (for a curriculum evaluated
 * with the file's own evaluator, after everything else of the file) the evaluation it stands for still
 * fits the evaluator's limits, as `tcod check` would find; else compiled, and remembered when it
 * reported nothing. A plan of TypeScript extensions is compiled each time (its bundle is rebuilt).
 */
function compileMemo(
  memo: PlanMemo, used: Set<string>, abs: string, root: string, name: string, settings: Setting[], point: Setting[],
  sink: DiagnosticSink, cache: SourceCache, base: { loader: ModuleLoader; ev: Evaluator }, index: EntryIndex, share?: SweepShare,
): CompiledPlan | undefined {
  const key = `${name}\n${settings.map((s) => `${s.source}:${s.target.join(".")}=${s.text}`).join("\n")}`;
  used.add(key);
  const decl = index.curriculum(name)!;
  // A sweep point's settings are values of the file's sweeps, whose names `planInputs` follows anyway:
  // the points of a curriculum read the same inputs, listed once per compilation.
  const swept = settings.every((s) => s.source === "sweep");
  let inputs = swept ? index.sweptInputs.get(decl) : undefined;
  if (!inputs) {
    inputs = planInputs(index, decl, swept ? [] : settings, base.loader.modules);
    if (swept) index.sweptInputs.set(decl, inputs);
  }
  const own = settings.length === 0;
  let hit = memo.get(key);
  if (hit && sameList(hit.inputs, inputs) && (!own || base.ev.replayCost(hit.cost.inlined, hit.cost.depth))) {
    // The same plan, but for the hashes of the module texts (the entry's changed; computed when read,
    // as a compiled plan's are: the editor never reads them).
    const modules = [...base.loader.modules.values()].filter((m) => m.path !== "std/core");
    const sources = modules.map((m) => planSource(m, cache)).sort((a, b) => byCodeUnits(a.path, b.path));
    const plan = { ...hit.compiled.plan, sources };
    const k = pointKeys.get(hit.compiled.plan);
    if (k !== undefined) pointKeys.set(plan, k);
    // The memo's entry becomes this compilation's, so that it does not keep the one it came from alive
    // (its modules, values and texts: in the editor, a copy of a large file's evaluation per keystroke
    // of an older one): the plan's sources are this compilation's modules, the scopes of the file's own
    // curriculum are too (a sweep point's are its own loader's), and its inputs are this compilation's
    // equal texts (slices of an older text would keep all of it).
    const curriculum = own ? rescoped(hit.compiled.curriculum, base.loader.modules) : hit.compiled.curriculum;
    memo.set(key, (hit = { ...hit, inputs, compiled: { ...hit.compiled, plan, curriculum } }));
    return hit.compiled;
  }
  const attempts = sink.attempts;
  const run = own ? base : newLoader(root, sink, cache, base.loader.importTargets, share?.enter());
  const before = run.ev.mark(sink);
  let compiled: CompiledPlan | undefined;
  try {
    compiled = compileOne(abs, root, name, settings, point, sink, cache, run, undefined, share);
  } finally { if (!own) share?.leave(); }
  const cost = run.ev.cost(before);
  // A compilation that reported something is not kept; the plan of the last clean one stays (reused
  // only for the same inputs: a name broken by a keystroke and typed again finds it).
  if (compiled && !compiled.bundle && sink.attempts === attempts) memo.set(key, { inputs, compiled, cost });
  return compiled;
}

/**
 * A curriculum value of an earlier compilation with each field's scope that of the module of this
 * compilation where the field is written (its expression's file: `collectFields` takes each field
 * with the scope of the module declaring it). For a plan reused from the memo without settings, whose
 * inputs vouch that those modules declare the same; the old scope where no module has that path.
 * Without it, a reused plan would keep its compilation's modules, values and texts alive (in the
 * language server, a second copy of a large file's evaluation).
 */
function rescoped(c: CurriculumValue, modules: ReadonlyMap<string, Module>): CurriculumValue {
  const fields = new Map<string, FieldValue>();
  for (const [name, f] of c.fields) fields.set(name, { ...f, scope: modules.get(f.expr.span.file)?.scope ?? f.scope });
  return { ...c, fields };
}

/**
 * What the points of one curriculum's sweep share in a compilation: its fields (`FieldShare`), and
 * the values of the entry's lets and models (`enter`, for the loader of each point, and `leave` after
 * it); `loader` is the loader of the point being compiled, `lowered` what a point lowered for the next.
 */
interface SweepShare extends FieldShare {
  loader?: ModuleLoader;
  /** The lowering of the last point lowered whole that reported nothing (`LowerContext.reuse`). */
  lowered?: LoweredPoint;
  enter(): ReadonlyMap<LetDecl | ModelDecl, LazyCell>;
  leave(): void;
}

/**
 * The `SweepShare` of one curriculum across the sweep points of a compilation, `settings` being every
 * setting of every point that applies to it. A field is shareable when the names its expression
 * reaches through the entry's declarations (as `planInputs` follows them) include no let a setting
 * sets. So is a let or model of the entry: its value of the first load (`base`), evaluated when its
 * declarations were checked, is given to each point's loader (`ModuleLoader` option `shared`) when it
 * was kept (`LazyCell.keep`: it reported nothing and read no curriculum context) and every value it
 * read is shared too or belongs to an adopted module, the same in every loader of the compilation.
 * In the point it is owed, as a kept value of an adopted module is: on first use, the point's
 * evaluator is charged for its evaluation (or evaluates it, where that would hit a limit), as it would
 * be charged by evaluating it. A module value is the point's own (`local`) when its module was loaded
 * for the point, not adopted, and it is not shared.
 */
function fieldShare(base: ModuleLoader, index: EntryIndex, settings: Setting[]): SweepShare {
  const set = new Set(settings.filter((s) => s.target.length === 1).map((s) => s.target[0]!));
  const { entry, binders } = index;
  const verdicts = new WeakMap<object, boolean>();
  const shareable = (node: object) => {
    let v = verdicts.get(node);
    if (v === undefined) verdicts.set(node, (v = !reachesAny(node, binders, set)));
    return v;
  };
  let locals: { loader: ModuleLoader; cells: Set<unknown> } | undefined;
  let adoptedCells: Set<LazyCell> | undefined;
  let given = new Map<LetDecl | ModelDecl, LazyCell>();
  let saved: LazyCell[] = [];
  const share: SweepShare = {
    memo: new Map(),
    shareable,
    local(cell) {
      const loader = share.loader!;
      if (locals?.loader !== loader) {
        const cells = new Set<unknown>();
        for (const m of loader.modules.values()) if (!loader.adopted.has(m.path)) for (const c of m.cells) cells.add(c);
        for (const c of given.values()) cells.delete(c);
        locals = { loader, cells };
      }
      return locals.cells.has(cell);
    },
    enter() {
      adoptedCells ??= new Set([...base.modules.values()].filter((m) => base.adopted.has(m.path)).flatMap((m) => m.cells));
      // The entry's cells in declaration order, one per let and model (ModuleValue).
      const candidates = new Map<LazyCell, LetDecl | ModelDecl>();
      let i = 0;
      for (const x of entry.ast?.decls ?? []) {
        if (x.kind !== "let" && x.kind !== "model") continue;
        const c = entry.cells[i++];
        if (c && c.state === "done" && c.keep && !c.owed && shareable(x)) candidates.set(c, x);
      }
      // Only those whose reads are all shared or adopted, transitively.
      for (let changed = true; changed;) {
        changed = false;
        for (const c of [...candidates.keys()]) {
          if (!(c.keep as Exclude<LazyCell["keep"], false>).reads.every((r) => candidates.has(r) || adoptedCells!.has(r))) { candidates.delete(c); changed = true; }
        }
      }
      given = new Map([...candidates].map(([c, x]) => [x, c]));
      saved = [...candidates.keys()].map((c) => ({ ...c }));
      for (const c of candidates.keys()) c.owed = true;
      return given;
    },
    leave() {
      // The first load's values, as they were (a point evaluates one again where accounting for it
      // would hit a limit): evaluated there, not owed.
      [...given.values()].forEach((c, i) => Object.assign(c, saved[i]));
    },
  };
  return share;
}

/**
 * What the plans of one compilation look up in its entry module, found once per compilation: once per
 * curriculum, a file of thousands of curricula and declarations made each keystroke's compilation
 * quadratic in time and garbage (a map of every declaration per curriculum).
 */
class EntryIndex {
  private bindersMap?: Map<string, Decl>;
  private byName?: Map<string, CurriculumDecl>;
  /** The inputs of each curriculum's sweep points, alike for every point (see `compileMemo`). */
  readonly sweptInputs = new Map<CurriculumDecl, string[]>();
  constructor(readonly entry: Module) {}
  get binders(): Map<string, Decl> { return (this.bindersMap ??= entryBinders(this.entry)); }
  /** The entry's curriculum of that name (the first, as `find` would). */
  curriculum(name: string): CurriculumDecl | undefined {
    if (!this.byName) {
      this.byName = new Map();
      for (const c of this.entry.curricula) if (!this.byName.has(c.name)) this.byName.set(c.name, c);
    }
    return this.byName.get(name);
  }
}

/** The entry's declarations by the names they bind (the first of each name; an import binds each of its names). */
function entryBinders(entry: Module): Map<string, Decl> {
  const binders = new Map<string, Decl>();
  for (const x of entry.ast?.decls ?? []) {
    if (x.kind === "import") { for (const sp of x.names) if (!binders.has(sp.alias ?? sp.name)) binders.set(sp.alias ?? sp.name, x); }
    else if (x.kind !== "sweep" && !binders.has(x.name)) binders.set(x.name, x);
  }
  return binders;
}

/** Whether `node`, or a declaration of the entry it names (and so on), names one of `names`. */
function reachesAny(node: object, binders: Map<string, Decl>, names: Set<string>): boolean {
  if (names.size === 0) return false;
  const seen = new Set<object>([node]);
  const todo: object[] = [node];
  while (todo.length) {
    for (const n of namesIn(todo.pop()!)) {
      if (names.has(n)) return true;
      const b = binders.get(n);
      if (b && !seen.has(b)) { seen.add(b); todo.push(b); }
    }
  }
  return false;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * What a curriculum's plan reads, as texts to compare across compilations: every module but the entry
 * (path and text); the curriculum's declaration, the sweeps, and every declaration of the entry they
 * name, and those name, and so on (text and position, since plans and diagnostics carry positions);
 * the names they use that the entry does not declare (a declaration added later would hide the
 * builtin). Names are collected from the syntax, over-approximating (a parameter's name counts too).
 */
function planInputs(index: EntryIndex, decl: CurriculumDecl, settings: Setting[], modules: ReadonlyMap<string, Module>): string[] {
  const { entry, binders } = index;
  const out: string[] = [];
  for (const m of modules.values()) if (m !== entry && m.path !== "std/core") out.push(m.path, m.text);
  const seen = new Set<Decl>();
  const named = new Set<string>();
  const todo: Decl[] = [decl, ...entry.sweeps];
  const visit = (names: Iterable<string>) => {
    for (const n of names) {
      if (named.has(n)) continue;
      named.add(n);
      const b = binders.get(n);
      if (!b) out.push(`${n}: not declared`);
      else if (!seen.has(b)) todo.push(b);
    }
  };
  for (const s of settings) visit(namesIn(s.expr));
  while (todo.length) {
    const x = todo.pop()!;
    if (seen.has(x)) continue;
    seen.add(x);
    const st = x.span.start;
    out.push(`${st.offset}:${st.line}:${st.column}`, entry.text.slice(st.offset, x.span.end.offset), "doc" in x ? x.doc ?? "" : "");
    visit(namesIn(x));
  }
  return out;
}

/** Every name a piece of syntax mentions (memoized per node: an editor's parses keep unchanged declarations). */
const nodeNames = new WeakMap<object, string[]>();
function namesIn(node: object): string[] {
  let names = nodeNames.get(node);
  if (names) return names;
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) { for (const x of v) walk(x); return; }
    if (!v || typeof v !== "object") return;
    const o = v as Record<string, unknown>;
    for (const k in o) {
      const x = o[k];
      if (k === "name" && typeof x === "string") out.add(x);
      else if (x && typeof x === "object" && !k.endsWith("pan") && !k.endsWith("Span")) walk(x);
    }
  };
  walk(node);
  nodeNames.set(node, (names = [...out]));
  return names;
}

function paramNames(f: TsExtension["functions"][number]): string[] {
  return f.kind === "turn" ? ["turn.index", "turn.kl", "turn.entropy", "turn.tokens", "episode.turns"] : f.kind === "step" ? ["step", "total_steps"] : Array.from({ length: f.arity }, (_, i) => `arg${i}`);
}

/**
 * A plan name as a file or folder name: every character but letters, digits and `_.@=,+-` (path
 * separators and control characters included) becomes `_`, and so does a first `-` or `.` (a name
 * read as a command-line option, a hidden file, `.` or `..`); never empty. The compiler's names start
 * with a curriculum's identifier, so only hand-written plan .json names meet the last two rules.
 */
export function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.@=,+-]/g, "_").replace(/^[-.]/, "_") || "_";
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
/**
 * A module's entry of a plan's `sources`. A .tcod module's hash is computed when first read, then kept
 * as a plain property: `tcod check` never reads it (`run`, `compile` and `export` write it), and the
 * first hash of a process cost a check ~130 µs (Node.js's cold crypto code and OpenSSL's digest).
 */
function planSource(m: Module, cache: SourceCache): { path: string; sha256: string } {
  if (m.ts) return { path: m.display, sha256: sha256(cache.read(m.path).text) };
  return {
    path: m.display,
    get sha256(): string {
      const value = cache.hash(m);
      Object.defineProperty(this, "sha256", { value, enumerable: true, writable: true, configurable: true });
      return value;
    },
  };
}

function spanAt(file: string): Span {
  return { file, start: { offset: 0, line: 1, column: 1 }, end: { offset: 0, line: 1, column: 1 } };
}

// ---- overrides and sweeps --------------------------------------------------------------------------

/** Parses `a.b=value`; the value is parsed as a tcod expression in a pseudo-file for diagnostics. */
function parseSetting(text: string, file: string, sink: DiagnosticSink, sources: Map<string, string>): Setting | undefined {
  const m = /^\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*=(.*)$/s.exec(text);
  sources.set(file, text);
  if (!m || !m[2]!.trim()) {
    const target = /^\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)/.exec(text)?.[1];
    sink.add(d.badOverride({ text, example: target ? overrideExample(target.split(".")) : "alfworld_tcod_f2b.steps=500" }), { file, start: { offset: 0, line: 1, column: 1 }, end: { offset: text.length, line: 1, column: text.length + 1 } });
    return undefined;
  }
  const valueText = m[2]!;
  const prefix = m[0].length - valueText.length;
  // The value is parsed where it stands in the setting (the target blanked out), so spans and carets
  // point into the override text.
  const { expr, errors } = parseExpression(text.slice(0, prefix).replace(/[^\r\n]/g, " ") + valueText, file);
  for (const er of errors) {
    sink.add(d.badOverride({ text, example: overrideExample(m[1]!.split(".")) }), er.span);
    return undefined;
  }
  const start = m[0].length - m[0].trimStart().length;
  const targetSpan: Span = { file, start: { offset: start, line: 1, column: start + 1 }, end: { offset: start + m[1]!.length, line: 1, column: start + m[1]!.length + 1 } };
  return { target: m[1]!.split("."), targetSpan, text: valueText.trim(), expr, file, source: "override" };
}

/** Examples of the call arguments `--set` most often sets, each in its argument's unit. */
const ARGUMENT_EXAMPLES: Record<string, string> = {
  "loss.coef": "0.5", "optimizer.lr": "1e-6", "horizon.every": "6 steps", "horizon.max": "30 turns", "prefix.every": "5 steps",
};

/**
 * A `--set` example for the target the user wrote, in that target's unit: a field's documented
 * example, a known argument's, else the whole field set to its example (never a value of another unit).
 */
function overrideExample(target: string[]): string {
  const at = target.length >= 2 && Object.hasOwn(CURRICULUM_FIELDS, target[1]!) ? 1 : Object.hasOwn(CURRICULUM_FIELDS, target[0]!) ? 0 : -1;
  // A let, or a name that is neither: its unit is unknown before the file is read.
  if (at < 0) return `${target.join(".")}=VALUE (in the unit of its let)`;
  const field = target[at]!;
  const args = target.slice(at + 1);
  const spec = CURRICULUM_FIELDS[field]!;
  // `steps: 250` may be bare, but the example says its unit.
  const example = spec.bareUnit && /^\d+$/.test(spec.example) ? `${spec.example} ${spec.bareUnit}` : spec.example;
  if (args.length === 0) return `${target.join(".")}=${example}`;
  const arg = ARGUMENT_EXAMPLES[`${field}.${args.join(".")}`];
  return arg !== undefined ? `${target.join(".")}=${arg}` : `${target.slice(0, at + 1).join(".")}=${example}`;
}

/** Whether `target` names a let or a curriculum's field; else reported at `span`, where it is written. */
function validateTarget(target: string[], span: Span, entry: Module, sink: DiagnosticSink): boolean {
  const curricula = entry.curricula.map((c) => c.name);
  const lets = entry.ast ? entry.ast.decls.filter((x) => x.kind === "let").map((x) => (x as { name: string }).name) : [];
  const targets = [...lets, ...curricula.map((c) => `${c}.<field>`)];
  // CURRICULUM.FIELD, or CURRICULUM.FIELD.ARG… (an argument of the field's call, checked when evaluated).
  const ok = target.length === 1 ? lets.includes(target[0]!) : curricula.includes(target[0]!);
  if (ok && target.length >= 2 && !Object.hasOwn(CURRICULUM_FIELDS, target[1]!)) {
    const names = Object.keys(CURRICULUM_FIELDS);
    sink.add(d.unknownField({ field: target[1]!, owner: `curriculum '${target[0]}'`, suggestion: didYouMean(target[1]!, names), available: names.join(", ") }), span);
    return false;
  }
  if (!ok) {
    const t = target.join(".");
    sink.add(d.unknownOverrideTarget({ target: t, suggestion: didYouMean(t, [...lets, ...curricula.flatMap((c) => [`${c}.steps`, `${c}.horizon`])]), available: targets.join(", ") || "none" }), span);
    return false;
  }
  return true;
}

/** One list of settings per sweep point: the product (or zip) within a sweep, and across sweeps. */
function expandSweeps(sweeps: SweepDecl[], entry: Module, sink: DiagnosticSink, maxPoints: number): Setting[][] {
  // Checked first, then counted, then expanded: a sweep of a million points is refused before any is made.
  const valid: { sw: SweepDecl; size: number }[] = [];
  for (const sw of sweeps) {
    let ok = true;
    for (const a of sw.axes) {
      if (a.values.length === 0) { sink.add(d.emptySweep({ name: sw.name, axis: a.target.join(".") }), a.span); ok = false; }
      if (!validateTarget(a.target, a.targetSpan, entry, sink)) ok = false;
    }
    if (!ok) continue;
    const lengths = sw.axes.map((a) => a.values.length);
    if (sw.mode === "zip" && new Set(lengths).size > 1) {
      sink.add(d.zipLengthMismatch({ name: sw.name, lengths: lengths.join(", ") }), sw.nameSpan);
      continue;
    }
    valid.push({ sw, size: sw.mode === "zip" ? (lengths[0] ?? 0) : lengths.reduce((a, b) => a * b, 1) });
  }
  const total = valid.reduce((a, v) => a * v.size, 1);
  if (total > maxPoints) {
    const sizes = valid.map(({ sw, size }) => `${sw.name}: ${sw.mode === "zip" ? `zip of ${size}` : sw.axes.map((a) => a.values.length).join(" × ")}`).join("; ");
    sink.add(d.sweepTooLarge({ size: total.toLocaleString("en-US"), sizes, max: maxPoints.toLocaleString("en-US") }), valid[0]!.sw.nameSpan);
    return [[]];
  }
  let points: Setting[][] = [[]];
  for (const { sw } of valid) {
    const axes = sw.axes.map((a) => a.values.map((v) => ({
      target: a.target, targetSpan: a.targetSpan, text: entry.text.slice(v.span.start.offset, v.span.end.offset), expr: v, file: entry.path, source: "sweep" as const,
    })));
    const local = sw.mode === "zip"
      ? Array.from({ length: axes[0]?.length ?? 0 }, (_, i) => axes.map((a) => a[i]!))
      : axes.reduce<Setting[][]>((acc, axis) => acc.flatMap((p) => axis.map((v) => [...p, v])), [[]]);
    points = points.flatMap((p) => local.map((l) => [...p, ...l]));
  }
  return points;
}

const sweepValueText = (entry: Module, v: Expr): string => entry.text.slice(v.span.start.offset, v.span.end.offset).replace(/\s+/g, " ");

/**
 * An override of what a sweep varies (the same target, or a part of it, or a whole of which it is a
 * part) would give every point the override's value while the point names still say otherwise.
 */
function checkOverridesOfSwept(overrides: Setting[], entry: Module, sink: DiagnosticSink): void {
  const prefix = (a: string[], b: string[]) => a.length <= b.length && a.every((x, i) => x === b[i]);
  const reported = new Set<string>();
  for (const s of overrides) {
    for (const sw of entry.sweeps) {
      for (const a of sw.axes) {
        if (!(prefix(s.target, a.target) || prefix(a.target, s.target))) continue;
        const key = `${s.file}|${s.target.join(".")}|${sw.name}|${a.target.join(".")}`;
        if (reported.has(key)) continue;
        reported.add(key);
        const values = a.values.map((v) => sweepValueText(entry, v));
        // The name of the file's first point (each axis at its first value), as the compiled plans spell it.
        const curriculum = a.target.length > 1 ? a.target[0]! : entry.curricula[0]?.name ?? "CURRICULUM";
        const first = entry.sweeps.flatMap((x) => x.axes).filter((x) => x.values.length > 0)
          .map((x) => `${x.target.join(".")}=${sweepValueText(entry, x.values[0]!).replace(/\s+/g, "")}`).join(",");
        sink.add(d.overrideOfSweptTarget({
          target: `${s.target.join(".")}=${s.text}`, sweep: sw.name, swept: a.target.join("."), values: values.join(", "), example: `"${curriculum}@${first}"`,
        }), s.expr.span);
      }
    }
  }
}

/**
 * A plan but for its name and sweep point, as text (memoized per plan: an editor's compilations reuse
 * plans). Without its sources too: the points of one compilation read the same modules.
 */
const pointKeys = new WeakMap<Plan, string>();
function pointKey(plan: Plan): string {
  let key = pointKeys.get(plan);
  if (key === undefined) {
    key = JSON.stringify(pointView(plan));
    pointKeys.set(plan, key);
  }
  return key;
}

/** Whether two plans are the same but for their names, sweep points and sources (their `pointKey` texts are equal). */
function samePoint(a: Plan, b: Plan): boolean {
  return sameJson(pointView(a), pointView(b));
}

/** The object `pointKey` writes. */
function pointView(plan: Plan): Record<string, unknown> {
  const { name: _n, sweep: _s, sources: _src, extensions, ...rest } = plan as Plan & { sweep?: unknown };
  return { ...rest, ...(extensions ? { extensions: { ...extensions, bundle: "" } } : {}) };
}

/** Sweep points compared side by side up to this many plans; past it, by `pointKey` texts. */
const COMPARE_POINTS = 32;

/** One warning per curriculum naming the sweep points whose plans are the same but for their names. */
function warnIdenticalPoints(plans: CompiledPlan[], curriculum: string, entry: Module, sink: DiagnosticSink): void {
  // After an error no plan is kept (and an override of a swept target makes every point the same).
  if (plans.length < 2 || sink.errorCount > 0) return;
  const groups: CompiledPlan[][] = [];
  if (plans.length <= COMPARE_POINTS) {
    // Side by side: the points share most of their plans (unchanged parts are the same objects).
    for (const p of plans) {
      const g = groups.find((x) => samePoint(x[0]!.plan, p.plan));
      if (g) g.push(p);
      else groups.push([p]);
    }
  } else {
    const byKey = new Map<string, CompiledPlan[]>();
    for (const p of plans) {
      const key = pointKey(p.plan);
      byKey.set(key, [...(byKey.get(key) ?? []), p]);
    }
    groups.push(...byKey.values());
  }
  const same = groups.filter((g) => g.length > 1);
  if (same.length === 0) return;
  // The swept targets whose values differ inside a group: those change nothing.
  const vars = new Set<string>();
  for (const g of same) {
    const sweeps = g.map((p) => p.plan.sweep ?? {});
    for (const k of Object.keys(sweeps[0]!)) if (new Set(sweeps.map((x) => x[k])).size > 1) vars.add(k);
  }
  // A few names of a few groups: a swept value that changes nothing may make one group of every point.
  const names = (g: CompiledPlan[]) => g.slice(0, 4).map((p) => p.plan.name).join(", ") + (g.length > 4 ? `, … ${g.length - 4} more` : "");
  const shown = same.slice(0, 3).map((g) => `[${names(g)}]`).join(", ") + (same.length > 3 ? ` and ${same.length - 3} more groups` : "");
  const axis = entry.sweeps.flatMap((sw) => sw.axes).find((a) => vars.has(a.target.join(".")));
  const span = axis?.targetSpan ?? entry.sweeps[0]?.nameSpan ?? spanAt(entry.path);
  sink.add(d.identicalSweepPoints({ points: shown, vars: [...vars].map((v) => `'${v}'`).join(", ") || "value", curriculum }), span);
}

// ---- checking functions that are never called -----------------------------------------------------

/**
 * Checks every function body once with symbolic parameters of their declared types, so errors in a
 * function nobody calls yet are still reported. Parameters without a declared unit type and without a
 * default make the body uncheckable in isolation; such functions are checked at their calls.
 */
function checkFunctionBodies(loader: ModuleLoader, ev: Evaluator, checkModule?: (path: string) => boolean, skip?: StdlibSkip): void {
  const stdlib = skip ? findStdlibDir() + sep : undefined;
  for (const mod of [...loader.modules.values()]) {
    if (!mod.ast) continue;
    // An adopted module's bodies were checked, clean, in the compilation it comes from; its values are
    // still forced here, in the same order as `tcod check` forces them (most are kept: LazyCell.keep).
    let bodies = !loader.adopted.has(mod.path) && (!checkModule || checkModule(mod.path));
    // An adopted module whose values are all kept: account for their evaluations at once.
    if (!bodies && loader.adopted.has(mod.path) && settleKept(mod, ev)) continue;
    // A stdlib module whose bodies were checked clean before, from this text: their cost is counted.
    const name = stdlib && bodies && mod.path.startsWith(stdlib) ? mod.path.slice(stdlib.length) : undefined;
    const texts = name !== undefined ? importClosureTexts(mod, stdlib!) : undefined;
    const known = name !== undefined ? stdlibBodies.get(name) : undefined;
    if (known && sameList(known.texts, texts!)) { skip!.cost += known.cost; bodies = false; }
    // Else, for a stdlib module, whether its bodies are clean and read no module value, and their cost.
    const record = name !== undefined && !known && bodies ? { cost: 0, clean: true } : undefined;
    for (const decl of mod.ast.decls) {
      if (decl.kind === "fn") {
        if (!bodies) continue;
        if (!record) { checkBody(decl, mod.scope, ev); continue; }
        const items = ev.sink.items.length;
        const inlined = ev.inlinedSoFar;
        const cell = ev.startCell();
        try { checkBody(decl, mod.scope, ev); } finally {
          if (ev.endCell(cell).reads.length > 0 || ev.sink.items.length !== items) record.clean = false;
          record.cost += ev.inlinedSoFar - inlined;
        }
      }
      // Values nobody uses yet are still checked: every error in one run.
      else if (decl.kind === "let" || decl.kind === "model") mod.scope.names.get(decl.name)?.get();
    }
    if (record?.clean && !ev.limitHit) stdlibBodies.set(name!, { texts: texts!, cost: record.cost });
  }
}

/** For `compileFile`: the inlined calls of the stdlib body checks skipped, and the first load's evaluator. */
interface StdlibSkip { cost: number; base: Evaluator | undefined }

/**
 * Stdlib modules whose function bodies were checked in this process (a compilation without a host;
 * the start-up snapshot of `tcod check` carries those of its warm-up) without a diagnostic and
 * without reading a module value, by name inside std/: the texts checked (the module's and those of
 * every module it imports, `importClosureTexts`) and the inlined calls the checks made. Such checks
 * depend on nothing but those texts (the scope of a
 * stdlib module holds the stdlib and the builtins only, and no module value is read, so none is
 * forced in another order by skipping them): checking them again reports nothing and charges that
 * many calls, which `compileFile` accounts for. Module-level as `stdlibParses` is, for the same
 * reasons: bounded by the stdlib's files, and a record is used only for the texts it was made from.
 */
const stdlibBodies = new Map<string, { texts: string[]; cost: number }>();

/**
 * Accounts for every value of an adopted module as `tcod check` would evaluate them here, in one step
 * (at this point each is evaluated at depth 0, one after the other): true when all were kept and fit
 * the evaluator's limits; else nothing is done and they are forced one by one.
 */
function settleKept(mod: Module, ev: Evaluator): boolean {
  for (const c of mod.cells) if (c.state !== "done" || !c.keep || !c.owed) return false;
  // (With the owed values of other modules they read: each is charged once, here or where first used.)
  return ev.settle(mod.cells);
}

function checkBody(decl: FnDecl, modScope: Scope, ev: Evaluator): void {
  const scope: Scope = { parent: modScope, names: new Map() };
  for (const p of decl.params) {
    const t = scalarType(p.type && ev.types.ofRef(p.type));
    let v: Value | undefined;
    if (t) v = { ...symbolic(p.name, t.dim, t.perTurn ? "turn" : "const", p.nameSpan), type: t.type };
    if (!v && p.default) {
      const saved = ev.abstract;
      ev.abstract = true;
      v = ev.expr(p.default, modScope);
      ev.abstract = saved;
    }
    if (!v) return;
    scope.names.set(p.name, fixed(v, p.nameSpan, "param", `parameter ${p.name}`));
  }
  const saved = ev.abstract;
  ev.abstract = true;
  try { ev.fnBody(decl, scope); } finally { ev.abstract = saved; }
}

function symbolic(name: string, dim: Scalar["dim"], level: Scalar["level"], span: Span): Scalar {
  return { kind: "scalar", type: "number", dim, level, tree: { op: "var", name: `param:${name}` as never }, reads: [], span, abstract: true };
}
