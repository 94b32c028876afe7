/**
 * Modules: resolve import specs, load and parse files, build each module's scope, detect cycles.
 *   std/NAME        → stdlib/std/NAME.tcod (std/core is native)
 *   ./x, ../x       → relative to the importing file (`.tcod` may be omitted); never outside the root
 *   @scope/pkg/file → node_modules, searched upwards from the importing file (curricula on npm); the
 *                     nearest folder holding the package wins, and a package.json `exports` map is
 *                     honoured by Node's rules (conditions "tcod", then "default"), as `import` would
 *   ./x.ts          → a TypeScript extension (ts-extensions.ts)
 * Confinement: every file is loaded by its real path (symlinks resolved), and that path must lie in
 * the region the import may reach: the project root for the user's files, the stdlib folder for
 * `std/` and the stdlib's own imports, the `node_modules` folder it was found in for a package (and
 * for a package's relative imports). `std/` and package specifiers may not contain `.`/`..` segments.
 * Nothing outside the region is read, so no error can show its content.
 */
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { fileReadError, mib, notRegularFile, readSourceFile } from "../plan/read-file.js";
import { exports as exportsOf } from "resolve.exports";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { packageFile } from "../plan/package-files.js";
import type { CurriculumDecl, Decl, FnDecl, ImportDecl, LetDecl, ModelDecl, SourceFile, Span, SweepDecl } from "../grammar/ast.js";
import { parse } from "../grammar/index.js";
import { BIDI_CONTROLS, hexBytes, type BadBytes, type SourceText } from "../grammar/source-chars.js";
import type { Code } from "./diagnostics/catalogue.js";
import { d, didYouMean, h, type Message } from "./diagnostics/index.js";
import { coreBuiltins, preludeBuiltins } from "./builtins.js";
import type { Evaluator } from "./evaluate.js";
import { evalModel } from "./model.js";
import type { DiagnosticSink } from "./sink.js";
import { loadTsExtension, type TsExtension } from "./ts-extensions.js";
import { DescribedLater, fixed, invalid, varScalar, type Binding, type Obj, type Scope, type Value } from "./values.js";

export interface Module {
  /** Absolute path, or `std/core` for the native module. */
  path: string;
  /** How the module is named in plans and messages: relative to the root, `std/x.tcod`, `npm:pkg/x.tcod`. */
  display: string;
  text: string;
  /** Its file's bytes that were not UTF-8, as read (`SourceText`): absent for an editor's buffer. */
  badBytes?: readonly BadBytes[];
  ast?: SourceFile;
  scope: Scope;
  exports: Map<string, Binding>;
  curricula: CurriculumDecl[];
  sweeps: SweepDecl[];
  ts?: TsExtension;
  /** Its import declarations and the modules they led to (to adopt the module into a later compilation). */
  deps: { decl: ImportDecl; target: Module }[];
  /** Its lets and models: evaluated on first use in each compilation (see `ModuleLoader.adopt`). */
  cells: LazyCell[];
  /** The loader of the compilation the module belongs to now: its lets evaluate with that loader's evaluator. */
  owner?: ModuleLoader;
}

/**
 * A let's or a model's value in one compilation. `keep`: it was computed while the files' declarations
 * were checked (no curriculum's context, no call in progress) and reported nothing, so it is the same
 * in any compilation of the same module texts: a module adopted by a later compilation keeps it.
 */
export interface LazyCell {
  /**
   * `keep.inlined`: the inlined calls of its own evaluation, not those of the module values it forced
   * (charged to them, `reads`: the module values it read); `keep.depth`: the nesting it reached.
   */
  state: "todo" | "busy" | "done"; value: Value; keep: false | { inlined: number; depth: number; reads: LazyCell[] };
  /** Kept from an earlier compilation and not yet accounted for in this one (`Evaluator.replayCost`). */
  owed: boolean;
}

/**
 * The file system as the loader sees it: an editor's host answers from caches it keeps up to date
 * (lsp/workspace.ts); the default asks the disk each time.
 */
export interface LoaderFs {
  /** A file's text (throws when it cannot be read). */
  read(path: string): string;
  isFile(path: string): boolean;
  /**
   * Why `path` is there but is not a regular file (a folder, a device, a FIFO, a socket, a loop of
   * symlinks), in words about "it"; undefined when it is one, or is missing. Without it, such an
   * import is "not found".
   */
  notAFile?(path: string): string | undefined;
  /** The path with every symlink resolved (the path itself when it cannot be resolved). */
  realpath(path: string): string;
}

/**
 * The disk as one loader sees it when no host gives a `LoaderFs`: asked each time, but for real
 * paths, found once per path in a loader (every import asks the real path of its file and of the
 * folder it must stay in, and a load's files share a few folders): component by component, as
 * `realpathSync` does, but each folder's from the real path of its parent found before, with one
 * lstat for the last name (`realpathSync` makes one per component at every call).
 */
function diskFs(): LoaderFs {
  const known = new Map<string, string | null>();
  /** `p` with every symlink resolved; null when it cannot be (missing, a loop, no permission). */
  const real = (p: string): string | null => {
    let r = known.get(p);
    if (r === undefined) known.set(p, (r = resolveReal(p)));
    return r;
  };
  const resolveReal = (p: string): string | null => {
    const dir = dirname(p);
    if (dir === p) return realpathOrNull(p);
    const realDir = real(dir);
    if (realDir === null) return null;
    try {
      if (lstatSync(p).isSymbolicLink()) return realpathOrNull(p);
    } catch {
      return null;
    }
    return join(realDir, basename(p));
  };
  return { read: (p) => readFileSync(p, "utf8"), isFile, realpath: (p) => real(p) ?? p, notAFile: (p) => notRegularFile(p)?.message };
}

export interface LoaderOptions {
  fs?: LoaderFs;
  /**
   * A module of an earlier compilation to adopt instead of loading `path` again (it and everything
   * it imports must be unchanged and have had no diagnostics); undefined to load it.
   */
  reuse?(path: string): Module | undefined;
  /**
   * Where import declarations led in another loader of the same compilation over the same files (the
   * first load; its `importTargets`): a sweep point's loader loads those modules without resolving
   * the specifiers again. A declaration not in it is resolved (and any error reported) as usual.
   */
  resolved?: ReadonlyMap<ImportDecl, string>;
  /**
   * For a sweep point's loader: the values of the entry's lets and models that this point shares with
   * the first load (compiler/index.ts `sharedCells`), by declaration. Such a value is kept
   * (`LazyCell.keep`) and owed in this loader, as an adopted module's: on first use it is accounted for
   * as if evaluated here, not evaluated again.
   */
  shared?: ReadonlyMap<LetDecl | ModelDecl, LazyCell>;
  /** Whether a module is an editor's unsaved buffer, which has no folder to find imports from (`CompileHost.unsaved`). */
  unsaved?(path: string): boolean;
}

/** How many files deep imports may nest, the entry file being the first (a chain as long is far from any real project's). */
export const MAX_IMPORT_DEPTH = 100;

/** What `resolveImport` answers for a file that imports itself (reported there). */
const SELF = Symbol("self-import");

let stdlibDir: string | undefined;
const displayCache = new Map<string, Map<string, string>>();

/** Forgets the paths this module remembers (the start-up snapshot is built in one place, run in another). */
export function forgetPaths(): void {
  stdlibDir = undefined;
  displayCache.clear();
}
export function findStdlibDir(): string {
  if (stdlibDir !== undefined) return stdlibDir;
  const dir = packageFile(join("stdlib", "std"));
  if (dir === undefined) throw new Error("tcod: cannot find stdlib/std in the tcod installation");
  return (stdlibDir = realpath(dir));
}

/**
 * The texts of `mod` and of every module it imports, transitively, each after its path relative to
 * `base` (a folder path ending in the separator; paths outside it are kept whole), in path order: a
 * key that changes when any text a module's checks can depend on changes (compared item by item; a
 * list, not one joined string, so that the start-up snapshot holds each text once).
 */
export function importClosureTexts(mod: Module, base: string): string[] {
  const seen = new Map<string, string>();
  const todo = [mod];
  for (let m = todo.pop(); m !== undefined; m = todo.pop()) {
    if (seen.has(m.path)) continue;
    seen.set(m.path, m.text);
    for (const d of m.deps) todo.push(d.target);
  }
  return [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([p, t]) => [p.startsWith(base) ? p.slice(base.length) : p, t]);
}

/** Finds the project root of a file: the nearest ancestor with package.json, else its folder. */
export function projectRootOf(file: string): string {
  let dir = dirname(resolve(file));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) return dirname(resolve(file));
    dir = up;
  }
}

/**
 * Why a source file could not be read, as its diagnostic: too large (TC1108), missing (TC1101, as
 * for an import that resolves nowhere), or there but not readable as a file (TC1109).
 */
export function sourceReadMessage(e: unknown, path: string, display: string): Message {
  const er = fileReadError(e);
  return er.kind === "tooLarge" ? d.sourceTooLarge({ file: display, size: mib(er.size!), limit: mib(er.limit!) })
    : er.kind === "missing" ? d.moduleNotFound({ spec: path, tried: path, hint: h.cannotRead({ reason: er.message }) })
    : d.unreadableSource({ file: display, reason: er.message });
}

const NOWHERE: Span = { file: "<prelude>", start: { offset: 0, line: 1, column: 1 }, end: { offset: 0, line: 1, column: 1 } };
type Bindings = [string, Binding][];
let builtinCache: { prelude: Bindings; namespaces: Bindings; core: Bindings } | undefined;
/**
 * The bindings of the builtins (the prelude's and std/core's), made once per process: they are
 * immutable values, and every loader (one per sweep point) starts its scopes with them.
 */
function builtinBindings(): { prelude: Bindings; namespaces: Bindings; core: Bindings } {
  return (builtinCache ??= {
    prelude: [
      ...[...preludeBuiltins()].map(([k, v]): [string, Binding] => [k, fixed(v, NOWHERE, "builtin", `builtin ${k}`)]),
      ["step", fixed(varScalar("step", NOWHERE), NOWHERE, "builtin", "the step clock")],
    ],
    // (After `total_steps`, which reads the loader's evaluator: each loader adds its own.)
    namespaces: ["episode", "turn", "token", "feedback"].map((ns): [string, Binding] => [ns, fixed({ kind: "namespace", name: ns, span: NOWHERE }, NOWHERE, "builtin", `runtime variables of each ${ns}`)]),
    core: [...coreBuiltins()].map(([k, v]): [string, Binding] => [k, fixed(v, NOWHERE, "builtin", `std/core ${k}`)]),
  });
}

/**
 * A module's `let` or `model` as a binding: evaluated on first use, once per compilation (with the
 * evaluator of the loader that owns the module then); a value that needs itself is reported, not
 * looped on. One object per declaration holding what it needs, rather than closures over it (a
 * function and a context each, for every declaration of a large file, kept to the end).
 */
class ModuleValue implements Binding {
  readonly span: Span;
  readonly kind: "let" | "model";
  private readonly cell: LazyCell;

  constructor(private readonly mod: Module, private readonly decl: LetDecl | ModelDecl, shared?: LazyCell) {
    this.span = decl.nameSpan;
    this.kind = decl.kind;
    this.cell = shared ?? { state: "todo", value: invalid(decl.nameSpan), keep: false, owed: false };
    mod.cells.push(this.cell);
  }

  /**
   * For `explain` only: computed when asked, not for every declaration. Through `mod.owner`, the
   * loader the module belongs to now, never the one that made it: a module an editor's later
   * compilations adopt would keep that first loader, and every module it loaded, alive.
   */
  get describe(): string {
    return `${this.decl.kind} ${this.decl.name} (${this.mod.owner!.describe(this.decl.span)})`;
  }

  get(): Value {
    return this.mod.owner!.ev.readCell(this.cell, this);
  }

  /** Evaluates the value, or accounts for a kept one (`Evaluator.readCell`). */
  force(): Value {
    const { cell, decl: { name }, span } = this;
    const { ev, sink } = this.mod.owner!;
    if (cell.state === "done") {
      // Kept from an earlier compilation: on first use it stands for the evaluation it saves,
      // against the same limits (or is evaluated, when that evaluation would hit one).
      if (!cell.owed) return cell.value;
      // With the kept values it read that are still owed (not those evaluated here already).
      if (ev.settle([cell])) return cell.value;
      cell.owed = false;
      cell.state = "todo";
    }
    if (cell.state === "busy") {
      sink.add(d.recursiveFunction({ name, chain: `${name} → … → ${name}` }), span);
      return invalid(span);
    }
    cell.state = "busy";
    cell.keep = false;
    const saved = ev.abstract;
    ev.abstract = false;
    const before = ev.mark(sink);
    const forced = ev.startCell();
    try {
      cell.value = ev.nested(name, span, () => this.compute(ev));
    } finally {
      ev.abstract = saved;
      cell.state = "done";
      const { reads, forced: theirs } = ev.endCell(forced);
      const cost = ev.since(before, sink);
      if (cost) cell.keep = { inlined: cost.inlined - theirs, depth: cost.depth, reads };
    }
    return cell.value;
  }

  private compute(ev: Evaluator): Value {
    const { decl, mod } = this;
    if (decl.kind === "model") return evalModel(decl, mod.scope, ev);
    const v = ev.expr(decl.value, mod.scope);
    return decl.type ? ev.check.type(v, ev.types.ofRef(decl.type), decl.value.span, `'${decl.name}'`) : v;
  }
}

/** A module's `fn` as a binding: its value, the closure, made once. */
class FunctionBinding implements Binding {
  readonly span: Span;
  readonly kind = "fn";
  private readonly closure: Value;

  constructor(private readonly mod: Module, private readonly decl: FnDecl) {
    this.span = decl.nameSpan;
    this.closure = { kind: "fn", decl, scope: mod.scope, module: mod.display };
  }

  /** For `explain` only: computed when asked (through `mod.owner`, as `ModuleValue.describe`). */
  get describe(): string {
    return `fn ${this.decl.name} (${this.mod.owner!.describe(this.decl.span)})`;
  }

  get(): Value {
    return this.closure;
  }
}

export class ModuleLoader {
  readonly modules = new Map<string, Module>();
  /** Where each import declaration led: the imported module's path (for editors' go-to-definition). */
  readonly importTargets = new Map<ImportDecl, string>();
  /**
   * The files being loaded, from the entry down to the one whose imports are being resolved: each
   * with its real path (the entry may be named through a symlink), which cycles are found by.
   */
  private readonly loading: { path: string; real: string }[] = [];
  readonly prelude: Scope;
  private readonly stdlibDir = findStdlibDir();

  private readonly fs: LoaderFs;
  private readonly reuse: LoaderOptions["reuse"];
  private readonly resolved: LoaderOptions["resolved"];
  private readonly shared: LoaderOptions["shared"];
  private readonly unsaved: LoaderOptions["unsaved"];
  /** Modules adopted from an earlier compilation (their function bodies were checked then). */
  readonly adopted = new Set<string>();

  constructor(
    readonly root: string, readonly sink: DiagnosticSink, readonly ev: Evaluator,
    private readonly readText: (p: string) => SourceText = (p) => readSourceFile(p),
    private readonly parseText: typeof parse = parse,
    opts: LoaderOptions = {},
  ) {
    this.fs = opts.fs ?? diskFs();
    this.reuse = opts.reuse;
    this.resolved = opts.resolved;
    this.shared = opts.shared;
    this.unsaved = opts.unsaved;
    const { prelude, namespaces, core: coreExports } = builtinBindings();
    const names = new Map<string, Binding>(prelude);
    names.set("total_steps", { get: () => (ev.contextReads++, ev.context.totalSteps !== undefined) ? { ...varScalar("total_steps", NOWHERE), level: "const", tree: { op: "const", value: ev.context.totalSteps }, reads: [] } : varScalar("total_steps", NOWHERE), span: NOWHERE, kind: "builtin", describe: "the curriculum's steps" });
    for (const [k, b] of namespaces) names.set(k, b);
    this.prelude = { names };
    ev.isLibrary = (file) => file.startsWith(this.stdlibDir + sep) || file.includes(sep + "node_modules" + sep);
    // Natives only, nothing evaluated in its scope: without the prelude as parent, whose `total_steps`
    // reads this loader's evaluator (modules adopted later still name this std/core in their imports,
    // which would keep this compilation, and every module it loaded, alive).
    const core: Module = { path: "std/core", display: "std/core", text: "", scope: { names: new Map() }, exports: new Map(), curricula: [], sweeps: [], deps: [], cells: [] };
    for (const [k, b] of coreExports) core.exports.set(k, b);
    this.modules.set("std/core", core);
  }

  /** Display names by path (every inlined call describes two spans for `explain`), per root. */
  private get displays(): Map<string, string> {
    let m = displayCache.get(this.root);
    if (!m) displayCache.set(this.root, (m = new Map()));
    return m;
  }
  display(path: string): string {
    let shown = this.displays.get(path);
    if (shown === undefined) this.displays.set(path, (shown = this.displayOf(path)));
    return shown;
  }

  private displayOf(path: string): string {
    if (path.startsWith(this.stdlibDir + sep)) return "std/" + relative(this.stdlibDir, path).split(sep).join("/");
    const nm = path.lastIndexOf(sep + "node_modules" + sep);
    if (nm >= 0) return "npm:" + path.slice(nm + 14).split(sep).join("/");
    const rel = relative(this.root, path);
    return rel.startsWith("..") ? path : rel.split(sep).join("/");
  }

  /** Loads the entry file (never adopted from an earlier compilation). */
  loadEntry(path: string): Module | undefined {
    return this.load(path, undefined, false);
  }

  /** Loads a module by absolute path (the entry file, or a resolved import). */
  load(path: string, via?: { span: Span }, reuse = true): Module | undefined {
    const existing = this.modules.get(path);
    if (existing) return existing;
    const earlier = reuse ? this.reuse?.(path) : undefined;
    if (earlier) return this.adopt(earlier);
    let source: SourceText;
    try {
      source = this.readText(path);
    } catch (e) {
      const span = via?.span ?? { file: path, start: { offset: 0, line: 1, column: 1 }, end: { offset: 0, line: 1, column: 1 } };
      // Named as the user would find it: from the working folder, or absolute (`/dev/null`, not `null`).
      const fromCwd = relative(process.cwd(), path);
      this.sink.add(sourceReadMessage(e, path, fromCwd === "" || fromCwd.startsWith("..") || isAbsolute(fromCwd) ? path : fromCwd), span);
      return undefined;
    }
    const { text, badBytes } = source;
    const { ast, errors } = this.parseText(text, path, badBytes);
    for (const er of errors) this.sink.add(syntaxMessage(er), er.span);
    const mod: Module = { path, display: this.display(path), text, ...(badBytes ? { badBytes } : {}), ast, scope: { parent: this.prelude, names: new Map() }, exports: new Map(), curricula: [], sweeps: [], deps: [], cells: [], owner: this };
    this.modules.set(path, mod);
    this.loading.push({ path, real: this.fs.realpath(path) });
    try {
      for (const decl of ast.decls) this.declare(mod, decl);
    } finally {
      this.loading.pop();
    }
    return mod;
  }

  /**
   * Makes a module of an earlier compilation (and, first, everything it imports) part of this one:
   * its declarations were made and its function bodies checked then, without a diagnostic, from the
   * same texts; its lets and models are evaluated again here, except those computed while declarations
   * were checked (`LazyCell.keep`).
   */
  private adopt(mod: Module): Module {
    const existing = this.modules.get(mod.path);
    if (existing) return existing;
    this.modules.set(mod.path, mod);
    this.adopted.add(mod.path);
    this.readText(mod.path); // the compilation's sources include it (for rendering diagnostics)
    for (const { decl, target } of mod.deps) {
      this.adopt(target);
      this.importTargets.set(decl, target.path);
    }
    mod.scope.parent = this.prelude;
    mod.owner = this;
    for (const c of mod.cells) {
      if (c.state === "done" && c.keep) { c.owed = true; continue; }
      c.state = "todo";
      c.keep = false;
      c.owed = false;
    }
    return mod;
  }

  private bind(mod: Module, name: string, span: Span, b: Binding, exported: boolean): void {
    if (mod.scope.names.has(name)) {
      this.sink.add(d.duplicateDeclaration({ name }), span, [{ span: mod.scope.names.get(name)!.span, message: "first declared here" }]);
      return;
    }
    mod.scope.names.set(name, b);
    if (exported) mod.exports.set(name, b);
  }

  private declare(mod: Module, decl: Decl): void {
    switch (decl.kind) {
      case "import": this.importDecl(mod, decl); return;
      case "let": case "model":
        this.bind(mod, decl.name, decl.nameSpan, new ModuleValue(mod, decl, this.shared?.get(decl)), decl.exported);
        return;
      case "fn":
        this.bind(mod, decl.name, decl.nameSpan, new FunctionBinding(mod, decl), decl.exported);
        return;
      case "curriculum": {
        mod.curricula.push(decl);
        const v: Obj = { kind: "object", type: "curriculum", fields: new Map(), span: decl.span, origin: [], source: { decl, scope: mod.scope } };
        this.bind(mod, decl.name, decl.nameSpan, fixed(v, decl.nameSpan, "curriculum", `curriculum ${decl.name}`), decl.exported);
        return;
      }
      case "sweep":
        mod.sweeps.push(decl);
        return;
    }
  }

  private importDecl(mod: Module, decl: ImportDecl): void {
    // Resolved by the first load of this compilation (the same files, the same graph: no cycle
    // through it either); a TypeScript extension is loaded through `resolveImport`.
    const known = this.resolved?.get(decl);
    const target = known !== undefined && !isTsPath(known) ? this.load(known, decl) : this.resolveImport(mod, decl);
    if (target === SELF) {
      // Reported once, at the import: its names that the module declares are in scope already (binding
      // them again would report each as declared twice); the others name nothing.
      const own = new Set(mod.ast?.decls.flatMap((x) => (x.kind === "import" || x.kind === "sweep" ? [] : [x.name])));
      for (const spec of decl.names) {
        if (!own.has(spec.alias ?? spec.name)) this.bind(mod, spec.alias ?? spec.name, spec.nameSpan, fixed(invalid(spec.span), spec.nameSpan, "import", `imported from "${decl.from}" (this file)`), false);
      }
      return;
    }
    if (target) {
      this.importTargets.set(decl, target.path);
      mod.deps.push({ decl, target });
    }
    for (const spec of decl.names) {
      const local = spec.alias ?? spec.name;
      const get = (): Value => {
        if (!target) return invalid(spec.span);
        const b = target.exports.get(spec.name);
        if (b) return b.get();
        return invalid(spec.span);
      };
      if (target) {
        if (!target.exports.has(spec.name)) {
          if (target.scope.names.has(spec.name)) {
            this.sink.add(d.notExported({ name: spec.name, spec: decl.from }), spec.nameSpan, [{ span: target.scope.names.get(spec.name)!.span, message: "declared here" }]);
          } else {
            const names = [...target.exports.keys()].sort();
            this.sink.add(d.missingExport({ spec: decl.from, name: spec.name, suggestion: didYouMean(spec.name, names), available: names.join(", ") || "none" }), spec.nameSpan);
          }
        }
      }
      // (Through `mod.owner`, as `ModuleValue.describe`: this closure outlives the loader when adopted.)
      const describe = () => `imported from "${decl.from}" (${mod.owner!.describe(spec.span)})`;
      this.bind(mod, local, spec.nameSpan, new DescribedLater(get, spec.nameSpan, "import", describe), false);
    }
  }

  /** The module `decl` leads to; SELF when that is `mod` itself; undefined when reported. */
  private resolveImport(mod: Module, decl: ImportDecl): Module | typeof SELF | undefined {
    const spec = decl.from;
    // Node's rule: a file's imports are found from its real path, so an entry file given through a
    // symlink imports from the folder of the file it points to (every other module is loaded by its
    // real path already).
    const real = this.fs.realpath(mod.path);
    const fromDir = dirname(real);
    /** Each candidate with the folder its real path must stay inside. */
    let candidates: { path: string; region: string }[];
    let hint: string;
    const outside = (): undefined => { this.sink.add(d.importOutsideRoot({ spec }), decl.fromSpan); return undefined; };
    if (spec === "std/core") return this.modules.get("std/core");
    if (spec.startsWith("std/")) {
      if (!plainSegments(spec.slice(4))) return outside();
      const base = join(this.stdlibDir, spec.slice(4));
      candidates = [{ path: base.endsWith(".tcod") ? base : base + ".tcod", region: this.stdlibDir }];
      hint = `The stdlib modules are: ${this.stdlibNames().join(", ")}.`;
    } else if (this.unsaved?.(mod.path)) {
      this.sink.add(d.importNeedsSavedFile({ spec }), decl.fromSpan);
      return undefined;
    } else if (spec.startsWith("./") || spec.startsWith("../")) {
      const base = resolve(fromDir, spec);
      let region = this.regionOf(real);
      if (!isInside(base, region) && !isInside(base, this.fs.realpath(region))) {
        // A symlinked entry file whose real file lies outside the project of the link: its own project.
        if (real === mod.path || !isInside(base, projectRootOf(real))) return outside();
        region = projectRootOf(real);
      }
      candidates = (/\.(tcod|ts|mts)$/.test(base) ? [base] : [base + ".tcod", base + ".ts"]).map((path) => ({ path, region }));
      hint = "Check the path; it is relative to the importing file.";
    } else {
      if (!plainSegments(spec)) return outside();
      const pkg = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
      const installed = this.packageImport(spec, pkg, fromDir, decl);
      if (installed === null) return undefined;
      if (installed) {
        candidates = [installed];
        hint = `Package '${pkg}' is installed, but it has no file '${spec.slice(pkg.length + 1) || "(package root)"}'; check the path inside the package.`;
      } else {
        candidates = [];
        for (let dir = fromDir; ; dir = dirname(dir)) {
          const region = join(dir, "node_modules");
          const base = join(region, spec);
          candidates.push({ path: /\.(tcod|ts)$/.test(base) ? base : base + ".tcod", region });
          if (dirname(dir) === dir) break;
        }
        hint = `Install the package that provides it: \`npm install ${pkg}\`, or import the stdlib with "std/…".`;
      }
    }
    const hit = candidates.find((c) => this.fs.isFile(c.path));
    if (!hit) {
      const shown = (c: string) => (c.includes(sep + "node_modules" + sep) ? relative(this.root, c).split(sep).join("/") : this.display(c));
      // There, but a folder or a FIFO (which reading would block on): say so, not "not found".
      for (const c of candidates) {
        const reason = this.fs.notAFile?.(c.path);
        if (reason === undefined) continue;
        this.sink.add(d.unreadableSource({ file: shown(c.path), reason }), decl.fromSpan);
        return undefined;
      }
      const tried = candidates.slice(0, 3).map((c) => shown(c.path)).join(", ") + (candidates.length > 3 ? ", …" : "");
      this.sink.add(d.moduleNotFound({ spec, tried, hint }), decl.fromSpan);
      return undefined;
    }
    // A symlink (file or folder) may point anywhere: the real path decides.
    const found = this.fs.realpath(hit.path);
    if (!isInside(found, this.fs.realpath(hit.region))) return outside();
    // By real paths: a symlink to a file on the chain (or to a folder above it) closes a cycle too.
    const idx = this.loading.findIndex((l) => l.real === found);
    if (idx >= 0) {
      if (idx === this.loading.length - 1) {
        this.sink.add(d.selfImport({ file: mod.display, spec }), decl.fromSpan);
        return SELF;
      }
      const chain = [...this.loading.slice(idx), this.loading[idx]!].map((l) => this.display(l.path)).join(" → ");
      this.sink.add(d.importCycle({ chain }), decl.fromSpan);
      return undefined;
    }
    // Loading recurses once per level: a bound, with its own message, not the stack's (TC2022).
    if (this.loading.length >= MAX_IMPORT_DEPTH && !this.modules.has(found)) {
      const shown = this.loading.map((l) => this.display(l.path));
      const chain = [...shown.slice(0, 2), "…", ...shown.slice(-1), this.display(found)].join(" → ");
      this.sink.add(d.importTooDeep({ spec, limit: String(MAX_IMPORT_DEPTH), chain }), decl.fromSpan);
      return undefined;
    }
    if (isTsPath(found)) return this.loadTs(found, decl);
    return this.load(found, decl);
  }

  /**
   * A package import through the nearest node_modules folder that holds the package: the file its
   * package.json `exports` maps the subpath to (Node's rules, conditions "tcod" then "default"; the
   * subpath as written, then with `.tcod`), or the plain path inside the package when it has no
   * `exports`. undefined: no such package installed; null: reported (subpath not exported).
   */
  private packageImport(spec: string, pkg: string, fromDir: string, decl: ImportDecl): { path: string; region: string } | undefined | null {
    for (let dir = fromDir; ; dir = dirname(dir)) {
      const region = join(dir, "node_modules");
      const pkgDir = join(region, pkg);
      const manifest = join(pkgDir, "package.json");
      if (this.fs.isFile(manifest) && isInside(this.fs.realpath(manifest), this.fs.realpath(region))) {
        const sub = spec.slice(pkg.length + 1);
        let json: { name?: string; exports?: unknown } | undefined;
        try { json = JSON.parse(this.fs.read(manifest)) as typeof json; } catch { json = undefined; }
        if (json && json.exports !== undefined && json.exports !== null) {
          const entries = sub ? [`./${sub}`, ...(/\.(tcod|ts)$/.test(sub) ? [] : [`./${sub}.tcod`])] : ["."];
          for (const entry of entries) {
            let target: string[] | void = undefined;
            try { target = exportsOf({ name: pkg, ...json } as never, entry, { conditions: ["tcod"] }); } catch { target = undefined; }
            const first = target?.[0];
            if (first) return { path: join(pkgDir, first), region };
          }
          this.sink.add(d.packageSubpathNotExported({ pkg, subpath: sub ? `./${sub}` : ".", exported: exportedPaths(json.exports) }), decl.fromSpan);
          return null;
        }
        const base = join(pkgDir, sub);
        return { path: /\.(tcod|ts)$/.test(base) ? base : base + ".tcod", region };
      }
      if (dirname(dir) === dir) return undefined;
    }
  }

  /** The folder a module's relative imports must stay in: the stdlib, its node_modules folder, or the root. */
  private regionOf(path: string): string {
    if (isInside(path, this.stdlibDir)) return this.stdlibDir;
    const nm = path.lastIndexOf(sep + "node_modules" + sep);
    if (nm >= 0) return path.slice(0, nm + sep.length + "node_modules".length);
    return this.root;
  }

  private loadTs(path: string, decl: ImportDecl): Module | undefined {
    const existing = this.modules.get(path);
    if (existing) return existing;
    const ts = loadTsExtension(path, decl, this.sink, this.display(path));
    const mod: Module = { path, display: this.display(path), text: "", scope: { parent: this.prelude, names: new Map() }, exports: new Map(), curricula: [], sweeps: [], ts, deps: [], cells: [], owner: this };
    for (const [name, b] of ts.exports) mod.exports.set(name, fixed(b, decl.span, "builtin", `TypeScript ${name} from ${this.display(path)}`));
    this.modules.set(path, mod);
    return mod;
  }

  stdlibNames(): string[] {
    return ["std/core", "std/schedule", "std/loss", "std/tcod", "std/turnopd", "std/atod", "std/envs", "std/agent"];
  }

  describe(span: Span): string {
    return `${this.display(span.file)}:${span.start.line}:${span.start.column}`;
  }
}

/** The subpaths an `exports` map offers, for a hint. */
function exportedPaths(exp: unknown): string {
  if (typeof exp === "string" || Array.isArray(exp)) return "'.'";
  const keys = exp && typeof exp === "object" ? Object.keys(exp).filter((k) => k.startsWith(".")) : [];
  return keys.length ? keys.map((k) => `'${k}'`).join(", ") : "'.'";
}

/** A TypeScript extension's path (`.ts`, `.mts`); a string test, not a regular expression compiled at each start. */
const isTsPath = (p: string): boolean => p.endsWith(".ts") || p.endsWith(".mts");

function isInside(p: string, root: string): boolean {
  const rel = relative(root, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(".." + sep) && !isAbsolute(rel));
}

/** `a/b/c` without empty, `.` or `..` segments, backslashes or a leading `/`. */
function plainSegments(spec: string): boolean {
  return spec.length > 0 && !spec.includes("\\") && spec.split("/").every((x) => x !== "" && x !== "." && x !== "..");
}

function isFile(p: string): boolean {
  try { return statSync(p).isFile(); } catch { return false; }
}

/** The path with every symlink resolved (the path itself when it cannot be resolved). */
function realpath(p: string): string {
  return realpathOrNull(p) ?? p;
}

function realpathOrNull(p: string): string | null {
  try { return realpathSync(p); } catch { return null; }
}

/**
 * Characters a terminal shows as nothing or that reorder the line: controls, format and bidi controls,
 * separators; and U+FFFD, which shows as the mark of bytes that could not be decoded.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\uFFFD]|[^\S ]/u;

/** An invalid character as a message shows it: itself when visible, else `U+XXXX` (a NUL, U+202E). */
export function visibleChar(ch: string): string {
  if (!INVISIBLE.test(ch)) return ch;
  return [...ch].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`).join(" ");
}

export function syntaxMessage(er: { code: string; found?: string; expected?: string; char?: string; encoding?: string; bytes?: readonly number[] }): Message {
  const code = er.code as Code;
  switch (code) {
    case "TC1001": return d.unexpectedToken({ found: er.found ?? "input", expected: er.expected ?? "something else", suggestion: keywordSuggestion(er.found) });
    case "TC1002": return d.unterminatedString();
    case "TC1003": return d.invalidCharacter({ char: visibleChar(er.char ?? er.found ?? "?") });
    case "TC1004": return d.missingToken({ expected: er.expected ?? "a token" });
    case "TC1005": return d.unterminatedComment();
    case "TC1008": return d.invalidUtf8({ what: er.bytes ? `the ${er.bytes.length > 1 ? "bytes" : "byte"} ${hexBytes(er.bytes)} here` : "U+FFFD here, the character that bytes which are not UTF-8 are read as" });
    case "TC1009": return d.wrongEncoding({ encoding: er.encoding ?? "UTF-16" });
    case "TC1010": { const ch = er.char ?? "?"; const name = BIDI_CONTROLS.get(ch); return d.bidiControl({ char: name ? `${visibleChar(ch)} (${name})` : visibleChar(ch) }); }
    default: {
      const m = (d as unknown as Record<string, (a: Record<string, string>) => Message>)[nameOfCode(code)];
      return m ? m({ found: er.found ?? "", expected: er.expected ?? "", char: er.char ?? "", suggestion: "" }) : d.unexpectedToken({ found: er.found ?? "input", expected: er.expected ?? "something else", suggestion: "" });
    }
  }
}

const KEYWORDS = ["import", "export", "let", "fn", "return", "model", "curriculum", "with", "sweep", "product", "zip", "if", "then", "else", "from"];

/** `'curriculm'`, `'improt'`, `'lett'` → " Did you mean 'curriculum'?" (a misspelt keyword is a name to the parser). */
function keywordSuggestion(found: string | undefined): string {
  const word = /^'([A-Za-z_]\w*)'$/.exec(found ?? "")?.[1];
  if (!word || KEYWORDS.includes(word)) return "";
  return didYouMean(word, KEYWORDS);
}

import { catalogue } from "./diagnostics/catalogue.js";
function nameOfCode(code: Code): string {
  return (catalogue[code] as { name: string } | undefined)?.name ?? "";
}
