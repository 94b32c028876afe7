/**
 * The language server's model of the files: open buffers over the disk, parses cached by text, and
 * the last analysis of each open file (the compiler's `compileFile`, so diagnostics are exactly
 * those of `tcod check`).
 *
 * Incremental: a parse is reused while its file's text is unchanged; a module whose text and
 * imports are unchanged since it was last checked without diagnostics is not checked again
 * (`CompileHost.checkModule`); everything else is recomputed after each edit.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { compileFile, type CompileHost, type CompileResult, type LoadedProgram } from "../compiler/index.js";
import { parse, type ParseResult } from "../grammar/index.js";
import { moduleOccurrences, type Occurrence } from "./symbols.js";

export interface Analysis {
  path: string;
  text: string;
  result: CompileResult;
  program?: LoadedProgram;
  occurrences: Map<string, Occurrence[]>;
  /** Milliseconds the analysis took (for the incremental benchmark). */
  ms: number;
}

const hash = (text: string) => createHash("sha1").update(text).digest("hex");

/** Per module: a hash of its text and, recursively, of everything it imports. */
function fingerprints(program: LoadedProgram): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (path: string): string => {
    const known = out.get(path);
    if (known !== undefined) return known;
    out.set(path, "cycle"); // an import cycle is reported anyway; its members are always checked
    const mod = program.modules.get(path);
    if (!mod) return "";
    const parts = [hash(mod.text)];
    for (const d of mod.ast?.decls ?? []) {
      if (d.kind !== "import") continue;
      const t = program.importTargets.get(d);
      parts.push(t ? `${t}=${visit(t)}` : `?${d.from}`);
    }
    const h = hash(parts.join("|"));
    out.set(path, h);
    return h;
  };
  for (const p of program.modules.keys()) visit(p);
  return out;
}

export class Workspace {
  /** Open buffers by absolute path. */
  private readonly open = new Map<string, string>();
  private readonly parses = new Map<string, { text: string; result: ParseResult }>();
  private readonly disk = new Map<string, { mtimeMs: number; size: number; text: string }>();
  /** Modules checked clean: path → hash of their text and of everything they import. */
  private readonly clean = new Map<string, string>();
  private readonly analyses = new Map<string, Analysis>();

  setOpen(path: string, text: string): void { this.open.set(path, text); this.analyses.delete(path); }
  close(path: string): void { this.open.delete(path); this.analyses.delete(path); }
  isOpen(path: string): boolean { return this.open.has(path); }
  openPaths(): string[] { return [...this.open.keys()]; }

  read(path: string): string {
    const buffer = this.open.get(path);
    if (buffer !== undefined) return buffer;
    const st = statSync(path);
    const cached = this.disk.get(path);
    if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) return cached.text;
    const text = readFileSync(path, "utf8");
    this.disk.set(path, { mtimeMs: st.mtimeMs, size: st.size, text });
    return text;
  }

  parse(text: string, file: string): ParseResult {
    const c = this.parses.get(file);
    if (c && c.text === text) return c.result;
    const result = parse(text, file);
    this.parses.set(file, { text, result });
    return result;
  }

  /** The analysis of `path` for its current text (cached until the text of an open file changes). */
  analyze(path: string): Analysis {
    const text = this.read(path);
    const cached = this.analyses.get(path);
    if (cached && cached.text === text && !this.anyOpenChangedSince(cached)) return cached;
    const t0 = performance.now();
    let prints: Map<string, string> | undefined;
    const host: CompileHost = {
      read: (p) => this.read(p),
      parse: (t, f) => this.parse(t, f),
      checkModule: (p, program) => {
        prints ??= fingerprints(program);
        return this.clean.get(p) !== prints.get(p);
      },
    };
    const result = compileFile(path, { host, sweeps: false });
    if (result.program) this.rememberClean(result, prints ?? fingerprints(result.program));
    const occurrences = result.program ? this.occurrences(result.program, prints ?? fingerprints(result.program)) : new Map<string, Occurrence[]>();
    const a: Analysis = { path, text, result, ...(result.program ? { program: result.program } : {}), occurrences, ms: performance.now() - t0 };
    this.analyses.set(path, a);
    return a;
  }

  /** Occurrences per module, recomputed only for modules whose text or imports changed. */
  private readonly occCache = new Map<string, { print: string; occ: Occurrence[] }>();
  private occurrences(program: LoadedProgram, prints: Map<string, string>): Map<string, Occurrence[]> {
    const out = new Map<string, Occurrence[]>();
    for (const path of program.modules.keys()) {
      const print = prints.get(path) ?? "";
      const c = this.occCache.get(path);
      if (c && c.print === print && print !== "") { out.set(path, c.occ); continue; }
      const occ = moduleOccurrences(program, path);
      if (occ) { out.set(path, occ); this.occCache.set(path, { print, occ }); }
    }
    return out;
  }

  private anyOpenChangedSince(a: Analysis): boolean {
    if (!a.program) return false;
    for (const [p, m] of a.program.modules) if (this.open.has(p) && this.open.get(p) !== m.text) return true;
    return false;
  }

  private rememberClean(r: CompileResult, prints: Map<string, string>): void {
    const files = new Set(r.diagnostics.flatMap((d) => [d.span.file, ...d.related.map((x) => x.span.file)]));
    for (const path of r.program!.modules.keys()) {
      if (files.has(path)) this.clean.delete(path);
      else this.clean.set(path, prints.get(path) ?? "");
    }
  }

  /** Last analyses that loaded `path` (for references across the open files). */
  analysesLoading(path: string): Analysis[] {
    return [...this.analyses.values()].filter((a) => a.program?.modules.has(path));
  }

  allAnalyses(): Analysis[] {
    return [...this.analyses.values()];
  }
}
