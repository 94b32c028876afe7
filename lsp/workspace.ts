/**
 * The language server's model of the files: open buffers over a cached view of the disk, parses
 * cached by text, the modules of earlier compilations, and the last analysis of each open file (the
 * compiler's `compileFile`, so diagnostics are exactly those of `tcod check`).
 *
 * Incremental, so that a keystroke re-checks what it changed and little else:
 * - the disk is read through `DiskCache` (texts, which paths are files, real paths): an analysis
 *   makes no system call for what it read before. The editor's file events (`filesChanged`) and
 *   `revalidate` (stats of what was read; run by the server when idle, and every 2 s for an editor
 *   that sends no file events) drop what changed, and only the analyses that read it;
 * - a parse is reused while its file's text is unchanged, and after an edit only the declarations
 *   it touched are parsed again (lsp/reparse.ts);
 * - a module that had no diagnostics, with everything it imports, is adopted by the next compilation
 *   as it is (`CompileHost.reuse`): not parsed, declared, resolved or checked again, its values kept.
 *   An edit invalidates the edited module and the modules that import it, up the import graph;
 * - the plan of each curriculum and sweep point is kept per open file (`CompileHost.plans`) and
 *   reused while what it reads is unchanged: the modules it imports, and the entry's declarations it
 *   names, directly or through others (an edit elsewhere in the file does not compile it again).
 */
import { realpathSync, statSync } from "node:fs";
import { compileFile, type CompileHost, type CompileResult, type LoadedProgram, type PlanMemo } from "../compiler/index.js";
import { projectRootOf, type LoaderFs, type Module } from "../compiler/modules.js";
import { parse, type ParseResult } from "../grammar/index.js";
import { sameSource, type SourceText } from "../grammar/source-chars.js";
import { FileReadError, MAX_SOURCE_BYTES, mib, notRegularFile, readSourceFile } from "../plan/read-file.js";
import { reparse, ReparseMemo } from "./reparse.js";
import { isUntitledPath } from "./untitled.js";
import { moduleOccurrences, type Occurrence } from "./symbols.js";

export interface Analysis {
  path: string;
  text: string;
  result: CompileResult;
  program?: LoadedProgram;
  /** Every name's occurrences per module (computed on first use). */
  readonly occurrences: Map<string, Occurrence[]>;
  /** Milliseconds the analysis took (for the incremental benchmark). */
  ms: number;
  /** The files whose texts it read (buffers and disk): a change to one of them makes it stale. */
  readonly reads: ReadonlySet<string>;
}

type Stamp = { mtimeMs: number; size: number } | undefined;
const stampOf = (p: string): Stamp => {
  try { const st = statSync(p); return { mtimeMs: st.mtimeMs, size: st.size }; } catch { return undefined; }
};
const sameStamp = (a: Stamp, b: Stamp) => (a === undefined ? b === undefined : b !== undefined && a.mtimeMs === b.mtimeMs && a.size === b.size);

/** What the compiler asked of the disk, remembered until `revalidate` finds it changed. */
export class DiskCache implements LoaderFs {
  private readonly texts = new Map<string, { stamp: Stamp; source?: SourceText; error?: Error }>();
  private readonly files = new Map<string, boolean>();
  private readonly real = new Map<string, string>();

  /** A file's text as `tcod check` reads a source: a regular file, up to MAX_SOURCE_BYTES, decoded with its bad bytes. */
  source(path: string): SourceText {
    let c = this.texts.get(path);
    if (!c) {
      const stamp = stampOf(path);
      try { c = { stamp, source: readSourceFile(path) }; } catch (e) { c = { stamp, error: e as Error }; }
      this.texts.set(path, c);
    }
    if (c.error) throw c.error;
    return c.source!;
  }

  read(path: string): string {
    return this.source(path).text;
  }

  isFile(path: string): boolean {
    let r = this.files.get(path);
    if (r === undefined) {
      try { r = statSync(path).isFile(); } catch { r = false; }
      this.files.set(path, r);
    }
    return r;
  }

  /** As `tcod check` says it (TC1109): asked only when an import finds no file, so not cached. */
  notAFile(path: string): string | undefined {
    return notRegularFile(path)?.message;
  }

  realpath(path: string): string {
    let r = this.real.get(path);
    if (r === undefined) {
      try { r = realpathSync(path); } catch { r = path; }
      this.real.set(path, r);
    }
    return r;
  }

  /**
   * Checks everything remembered against the disk and forgets what changed: `texts`, files whose
   * contents changed; `structure`, whether a file appeared or went or a link changed (imports may
   * resolve differently).
   */
  revalidate(opts: { structure?: boolean } = {}): { texts: string[]; structure: boolean } {
    const texts: string[] = [];
    let structure = false;
    for (const [p, c] of this.texts) if (!sameStamp(c.stamp, stampOf(p))) { this.texts.delete(p); texts.push(p); }
    // Texts alone: one stat per file read (the periodic check); files and links are checked when idle.
    if (opts.structure === false) return { texts, structure };
    for (const [p, was] of this.files) {
      let now = false;
      try { now = statSync(p).isFile(); } catch { now = false; }
      if (now !== was) { this.files.delete(p); structure = true; }
    }
    for (const [p, was] of this.real) {
      let now = p;
      try { now = realpathSync(p); } catch { now = p; }
      if (now !== was) { this.real.delete(p); structure = true; }
    }
    return { texts, structure };
  }

  /**
   * Forgets one path (the editor reported it changed); `resolution`: an import had asked whether it
   * is a file, or its real path (its creation or deletion may change how imports resolve).
   */
  forget(path: string): { resolution: boolean } {
    const known = { resolution: this.files.has(path) || this.real.has(path) };
    this.texts.delete(path);
    this.files.delete(path);
    this.real.delete(path);
    return known;
  }

  clear(): void { this.texts.clear(); this.files.clear(); this.real.clear(); }
}

/**
 * The size in UTF-8 bytes of a buffer larger than `tcod check` reads of a source file
 * (MAX_SOURCE_BYTES), else undefined. Such a buffer is not parsed: its analysis is the diagnostic
 * `tcod check` gives a file of that size (the editor's other features skip it).
 */
export function oversized(text: string): number | undefined {
  // UTF-8 takes 1 to 3 bytes per UTF-16 code unit: count only when the length leaves it open.
  if (text.length <= MAX_SOURCE_BYTES / 3) return undefined;
  const bytes = text.length > MAX_SOURCE_BYTES ? text.length : Buffer.byteLength(text, "utf8");
  return bytes > MAX_SOURCE_BYTES ? bytes : undefined;
}

export class Workspace {
  /** Open buffers by absolute path. */
  private readonly open = new Map<string, string>();
  /** Per file: its last parse, and what its re-parses keep for the next one. */
  private readonly parses = new Map<string, { source: SourceText; result: ParseResult; memo: ReparseMemo }>();
  readonly disk = new DiskCache();
  /** Per project root: modules that had no diagnostics, with everything they import (see `remember`). */
  private readonly modules = new Map<string, Map<string, Module>>();
  private readonly analyses = new Map<string, Analysis>();
  private readonly occCache = new WeakMap<Module, Occurrence[]>();
  /** Per entry file: the plans of its last compilations (see `CompileHost.plans`). */
  private readonly plans = new Map<string, PlanMemo>();

  setOpen(path: string, text: string): void {
    this.open.set(path, text);
    this.analyses.delete(path);
    // A module kept for adoption whose text this buffer no longer is cannot be adopted (`compileHost`
    // `reuse` compares texts): dropped now, not when the next compilation replaces it, so that its
    // values (an edited large file's whole evaluation) are not alive while that compilation makes new ones.
    for (const known of this.modules.values()) {
      const m = known.get(path);
      if (m && !sameSource({ text }, m)) known.delete(path);
    }
  }
  close(path: string): void {
    this.open.delete(path);
    this.plans.delete(path);
    // Without the buffer, the file is the disk's again: what loaded the buffer is redone on demand.
    for (const [p, a] of this.analyses) if (p === path || a.program?.modules.has(path)) this.analyses.delete(p);
  }
  isOpen(path: string): boolean { return this.open.has(path); }
  openPaths(): string[] { return [...this.open.keys()]; }

  /**
   * A file's text: its open buffer, else the disk's; throws, as `readSourceFile` does, for a buffer
   * too large to check. A buffer arrives decoded by the editor, so it has no list of bytes that were
   * not UTF-8 (every U+FFFD in it is TC1008); the disk's is decoded from its bytes, as `tcod check`
   * reads it (such bytes named, a U+FFFD the file holds a character).
   */
  source(path: string): SourceText {
    const buffer = this.open.get(path);
    if (buffer === undefined) return this.disk.source(path);
    const size = oversized(buffer);
    if (size !== undefined) throw new FileReadError(`it is ${mib(size)}; tcod reads files up to ${mib(MAX_SOURCE_BYTES)}`, "tooLarge", size, MAX_SOURCE_BYTES);
    return { text: buffer };
  }

  read(path: string): string {
    return this.source(path).text;
  }

  parse(text: string, file: string, badBytes?: SourceText["badBytes"]): ParseResult {
    const source: SourceText = { text, badBytes };
    const c = this.parses.get(file);
    if (c && sameSource(c.source, source)) return c.result;
    // After an edit, the declarations it touched (lsp/reparse.ts), else the file. Only between texts
    // read alike (two buffers, or two disk reads) without bad bytes: the declarations kept from the
    // old parse were read under the rule for U+FFFD the new text's are. (reparse parses the region as
    // a buffer: one holding a U+FFFD has an error there, and the whole file is parsed here.)
    const alike = c !== undefined && (c.source.badBytes === undefined) === (badBytes === undefined) && !c.source.badBytes?.length && !badBytes?.length;
    const memo = c?.memo ?? new ReparseMemo();
    const result = (alike && reparse({ text: c.source.text, result: c.result }, text, file, memo)?.result) || parse(text, file, badBytes);
    this.parses.set(file, { source, result, memo });
    return result;
  }

  /**
   * Checks the disk for changes to what the analyses read (files edited, created or deleted outside
   * the editor's buffers; `structure: false`, texts alone: one stat per file read). Returns the files
   * whose analyses are stale (dropped, redone on demand): those that read a changed text, or all of
   * them when a file appeared or went or a link changed.
   */
  revalidate(opts: { structure?: boolean } = {}): string[] {
    const { texts, structure } = this.disk.revalidate(opts);
    return this.stale(texts, structure);
  }

  /**
   * The editor reported changes on disk; returns the files whose analyses are stale, as `revalidate`.
   * A path the analyses never asked about changes nothing. A changed text is seen by the next analysis
   * (a module is adopted only while its text is the same); a file created or deleted where an import
   * looked may change how imports resolve, so then no module of earlier compilations is adopted.
   */
  filesChanged(changes: { path: string; kind: "created" | "changed" | "deleted" }[]): string[] {
    const texts: string[] = [];
    let structure = false;
    for (const c of changes) {
      const known = this.disk.forget(c.path);
      // (A TypeScript extension is not read through the cache: its analyses loaded it.)
      texts.push(c.path);
      if (known.resolution && c.kind !== "changed") structure = true;
    }
    return this.stale(texts, structure);
  }

  private stale(texts: string[], structure: boolean): string[] {
    if (structure) {
      this.disk.clear(); this.modules.clear(); this.plans.clear();
      const all = [...this.analyses.keys()];
      this.analyses.clear();
      return all;
    }
    // An open file's text is its buffer's: the disk's changes to it matter to no analysis.
    const changed = texts.filter((p) => !this.open.has(p));
    const out: string[] = [];
    for (const [p, a] of this.analyses) {
      if (changed.some((c) => a.reads.has(c) || a.program?.modules.has(c))) { this.analyses.delete(p); out.push(p); }
    }
    return out;
  }

  /** The analysis of `path` for its current text (cached until the text of an open file changes). */
  analyze(path: string): Analysis {
    // (A buffer too large to read is compiled all the same: the compiler reports why it was not read.)
    const text = this.open.get(path) ?? this.read(path);
    const cached = this.analyses.get(path);
    if (cached && cached.text === text && !this.anyOpenChangedSince(cached)) return cached;
    const t0 = performance.now();
    const root = projectRootOf(path);
    const reads = new Set<string>();
    const verdict = new Map<string, Module | null>();
    // As `tcod check` compiles it: every sweep point too (their errors are the file's errors).
    const result = compileFile(path, { host: this.compileHost(path, root, reads, verdict) });
    // (The host outlives the compilation in the loaders of reused plans: it keeps no module.)
    verdict.clear();
    if (result.program) this.remember(root, result);
    // Occurrences (hover, references, semantic tokens, inlay hints) are found when a feature first asks,
    // not on every keystroke: from the modules' declarations and scopes, which later compilations keep.
    let occurrences: Map<string, Occurrence[]> | undefined;
    const occurrencesOf = (program?: LoadedProgram) => (occurrences ??= program ? this.occurrences(program) : new Map<string, Occurrence[]>());
    const a: Analysis = {
      path, text, result, ...(result.program ? { program: result.program } : {}),
      get occurrences() { return occurrencesOf(result.program); },
      ms: performance.now() - t0, reads,
    };
    this.analyses.set(path, a);
    return a;
  }

  /**
   * The host of a compilation of `path`: it records in `reads` what it reads (a Set add per file), so
   * that a change re-checks only what read it, and decides in `verdict`, once per path, whether to
   * adopt the module of an earlier compilation (null: no), so that every importer agrees. A method of
   * its own, not closures inside `analyze`: the loaders of plans reused later keep the host, and
   * closures share the variables of the function they are made in (the analysis, with every module
   * it loaded, would stay alive).
   */
  private compileHost(path: string, root: string, reads: Set<string>, verdict: Map<string, Module | null>): CompileHost {
    const known = this.modules.get(root) ?? new Map<string, Module>();
    const reuse = (p: string): Module | undefined => {
      const v = verdict.get(p);
      if (v !== undefined) return v ?? undefined;
      verdict.set(p, null); // while deciding (a cycle is never adopted: it is an error)
      const m = known.get(p);
      let ok = m !== undefined && p !== path;
      if (ok) { try { ok = sameSource(this.source(p), m!); } catch { ok = false; } }
      if (ok) ok = m!.deps.every(({ target }) => target.path === "std/core" || reuse(target.path) === target);
      verdict.set(p, ok ? m! : null);
      return ok ? m : undefined;
    };
    let plans = this.plans.get(path);
    if (!plans) this.plans.set(path, (plans = new Map()));
    const disk = this.disk;
    const fs: LoaderFs = { read: (p) => { reads.add(p); return disk.read(p); }, isFile: (p) => disk.isFile(p), notAFile: (p) => disk.notAFile(p), realpath: (p) => disk.realpath(p) };
    return { read: (p) => { reads.add(p); return this.source(p); }, parse: (t, f, b) => this.parse(t, f, b), fs, reuse, plans, unsaved: isUntitledPath };
  }

  /**
   * Keeps the modules of this compilation that a later one may adopt: those without diagnostics
   * whose imports are all kept too (a TypeScript extension is loaded again each time).
   */
  private remember(root: string, r: CompileResult): void {
    const program = r.program!;
    const dirty = new Set(r.diagnostics.flatMap((d) => [d.span.file, ...d.related.map((x) => x.span.file)]));
    const ok = new Map<string, boolean>();
    const keep = (m: Module): boolean => {
      const known = ok.get(m.path);
      if (known !== undefined) return known;
      ok.set(m.path, false);
      const v = m.path === "std/core" || (!!m.ast && !m.ts && !dirty.has(m.path) && m.deps.every((x) => keep(x.target)));
      ok.set(m.path, v);
      return v;
    };
    let known = this.modules.get(root);
    if (!known) this.modules.set(root, (known = new Map()));
    for (const m of program.modules.values()) {
      if (m.path === "std/core") continue;
      if (keep(m)) known.set(m.path, m);
      else known.delete(m.path);
    }
  }

  /** Occurrences per module; an adopted module's are those computed when it was first analysed. */
  private occurrences(program: LoadedProgram): Map<string, Occurrence[]> {
    const out = new Map<string, Occurrence[]>();
    for (const [path, mod] of program.modules) {
      let occ = this.occCache.get(mod);
      if (!occ) {
        occ = moduleOccurrences(program, path);
        if (!occ) continue;
        this.occCache.set(mod, occ);
      }
      out.set(path, occ);
    }
    return out;
  }

  private anyOpenChangedSince(a: Analysis): boolean {
    if (!a.program) return false;
    for (const [p, m] of a.program.modules) if (this.open.has(p) && !sameSource({ text: this.open.get(p)! }, m)) return true;
    return false;
  }

  /** Last analyses that loaded `path` (for references across the open files). */
  analysesLoading(path: string): Analysis[] {
    return [...this.analyses.values()].filter((a) => a.program?.modules.has(path));
  }

  allAnalyses(): Analysis[] {
    return [...this.analyses.values()];
  }
}
