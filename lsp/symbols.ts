/**
 * Names in a loaded program: every place a name is declared or used, and the declaration it means
 * (through imports, to the module that declares it: stdlib and npm packages included). Built from
 * the compiler's module graph (`LoadedProgram`) and the ASTs; pure data, no evaluation.
 */
import type { CurriculumDecl, Decl, Expr, FnDecl, ModelDecl, SourceFile, Span } from "../grammar/ast.js";
import type { LoadedProgram } from "../compiler/index.js";

export type OccurrenceKind =
  | "let" | "fn" | "model" | "curriculum" | "param" | "import" | "builtin" | "field" | "namedArg" | "unknown";

export interface Occurrence {
  /** Where the name is written. */
  span: Span;
  name: string;
  kind: OccurrenceKind;
  /** The declaration it refers to (its name's span), after following imports; undefined for builtins and fields. */
  target?: Span;
  /** True where this occurrence is the declaration itself. */
  declaration: boolean;
  /** For fields and named arguments: the curriculum/model/call it belongs to. */
  owner?: { kind: "curriculum" | "model" | "record" | "call"; callee?: string };
}

export const spanKey = (s: Span): string => `${s.file}:${s.start.offset}`;
export const contains = (s: Span, offset: number): boolean => s.start.offset <= offset && offset <= s.end.offset;

/** Every occurrence of every module of `program`, by module path. */
export function occurrencesOf(program: LoadedProgram): Map<string, Occurrence[]> {
  const out = new Map<string, Occurrence[]>();
  for (const path of program.modules.keys()) {
    const occ = moduleOccurrences(program, path);
    if (occ) out.set(path, occ);
  }
  return out;
}

/** The occurrences of one module (undefined for native modules, which have no source). */
export function moduleOccurrences(program: LoadedProgram, path: string): Occurrence[] | undefined {
  const mod = program.modules.get(path);
  const ast: SourceFile | undefined = mod?.ast;
  if (!mod || !ast) return undefined;
  const occ: Occurrence[] = [];
  /** The declaration a module-level name means, following imports (at most a few hops). */
  const resolveTop = (modPath: string, name: string, depth = 0): { span: Span; kind: OccurrenceKind } | undefined => {
    const m = program.modules.get(modPath);
    const b = m?.scope.names.get(name);
    if (!m || !b) return undefined;
    if (b.kind !== "import") return { span: b.span, kind: b.kind as OccurrenceKind };
    if (depth > 8 || !m.ast) return { span: b.span, kind: "import" };
    for (const d of m.ast.decls) {
      if (d.kind !== "import") continue;
      const spec = d.names.find((s) => (s.alias ?? s.name) === name);
      if (!spec) continue;
      const target = program.importTargets.get(d);
      const r = target ? resolveTop(target, spec.name, depth + 1) : undefined;
      return r ?? { span: b.span, kind: "import" };
    }
    return { span: b.span, kind: "import" };
  };
  const fnParams = new Map<string, FnDecl>();
  for (const d of ast.decls) if (d.kind === "fn") fnParams.set(d.name, d);

  // An explicit stack, not recursion: a chain of binary operators is a tree as deep as the chain is
  // long (`1+1+…+1`, 200 000 terms, compiles), deeper than the call stack. Children are pushed last
  // first so they are visited in source order.
  const visitExpr = (root: Expr, locals: Map<string, Span>): void => {
    const stack: Expr[] = [root];
    const push = (...es: Expr[]): void => { for (let i = es.length - 1; i >= 0; i--) stack.push(es[i]!); };
    while (stack.length > 0) {
      const e = stack.pop()!;
      switch (e.kind) {
        case "name": {
          const local = locals.get(e.name);
          if (local) { occ.push({ span: e.span, name: e.name, kind: "param", target: local, declaration: false }); break; }
          const top = resolveTop(path, e.name);
          if (top) occ.push({ span: e.span, name: e.name, kind: top.kind, target: top.span, declaration: false });
          else occ.push({ span: e.span, name: e.name, kind: mod.scope.parent && lookupPrelude(program, path, e.name) ? "builtin" : "unknown", declaration: false });
          break;
        }
        case "member": push(e.object); break;
        case "call": {
          const callee = e.callee.kind === "name" ? e.callee.name : undefined;
          for (const a of e.args) {
            if (a.name !== undefined && a.nameSpan) {
              occ.push({ span: a.nameSpan, name: a.name, kind: "namedArg", declaration: false, ...(callee ? { owner: { kind: "call" as const, callee } } : {}), ...paramTarget(callee, a.name) });
            }
          }
          push(e.callee, ...e.args.map((a) => a.value));
          break;
        }
        case "list": push(...e.items); break;
        case "record":
          for (const f of e.fields) occ.push({ span: f.nameSpan, name: f.name, kind: "field", declaration: false, owner: { kind: "record" } });
          push(...e.fields.map((f) => f.value));
          break;
        case "binary": push(e.left, e.right); break;
        case "unary": push(e.operand); break;
        case "if": push(e.cond, e.then, e.else); break;
        default: break;
      }
    }
  };
  /** A named argument of a tcod function refers to its parameter. */
  const paramTarget = (callee: string | undefined, arg: string): { target?: Span } => {
    if (!callee) return {};
    const top = resolveTop(path, callee);
    if (!top || top.kind !== "fn") return {};
    const decl = fnDeclAt(program, top.span);
    const p = decl?.params.find((x) => x.name === arg);
    return p ? { target: p.nameSpan } : {};
  };

  const fieldsOf = (d: CurriculumDecl | ModelDecl, kind: "curriculum" | "model") => {
    for (const f of d.fields) {
      occ.push({ span: f.nameSpan, name: f.name, kind: "field", declaration: false, owner: { kind } });
      visitExpr(f.value, new Map());
    }
  };

  for (const d of ast.decls) {
    switch (d.kind) {
      case "import": {
        const target = program.importTargets.get(d);
        for (const s of d.names) {
          const t = target ? resolveTop(target, s.name) : undefined;
          occ.push({ span: s.nameSpan, name: s.name, kind: t?.kind ?? "import", ...(t ? { target: t.span } : {}), declaration: false });
        }
        break;
      }
      case "let":
        occ.push({ span: d.nameSpan, name: d.name, kind: "let", target: d.nameSpan, declaration: true });
        visitExpr(d.value, new Map());
        break;
      case "fn": {
        occ.push({ span: d.nameSpan, name: d.name, kind: "fn", target: d.nameSpan, declaration: true });
        const locals = new Map<string, Span>();
        for (const p of d.params) {
          if (p.default) visitExpr(p.default, new Map(locals));
          occ.push({ span: p.nameSpan, name: p.name, kind: "param", target: p.nameSpan, declaration: true });
          locals.set(p.name, p.nameSpan);
        }
        for (const l of d.lets) {
          visitExpr(l.value, new Map(locals));
          occ.push({ span: l.nameSpan, name: l.name, kind: "let", target: l.nameSpan, declaration: true });
          locals.set(l.name, l.nameSpan);
        }
        visitExpr(d.body, locals);
        break;
      }
      case "model":
        occ.push({ span: d.nameSpan, name: d.name, kind: "model", target: d.nameSpan, declaration: true });
        fieldsOf(d, "model");
        break;
      case "curriculum":
        occ.push({ span: d.nameSpan, name: d.name, kind: "curriculum", target: d.nameSpan, declaration: true });
        if (d.base) {
          const t = resolveTop(path, d.base.name);
          occ.push({ span: d.base.span, name: d.base.name, kind: t?.kind ?? "unknown", ...(t ? { target: t.span } : {}), declaration: false });
        }
        fieldsOf(d, "curriculum");
        break;
      case "sweep":
        for (const a of d.axes) {
          if (a.target.length === 1) {
            const t = resolveTop(path, a.target[0]!);
            if (t) occ.push({ span: { ...a.targetSpan, end: { ...a.targetSpan.start, offset: a.targetSpan.start.offset + a.target[0]!.length, column: a.targetSpan.start.column + a.target[0]!.length } }, name: a.target[0]!, kind: t.kind, target: t.span, declaration: false });
          }
          a.values.forEach((v) => visitExpr(v, new Map()));
        }
        break;
    }
  }
  return occ.sort((a, b) => a.span.start.offset - b.span.start.offset);
}

function lookupPrelude(program: LoadedProgram, path: string, name: string): boolean {
  for (let s = program.modules.get(path)?.scope.parent; s; s = s.parent) if (s.names.has(name)) return true;
  return false;
}

/** The function declared at `nameSpan`, in whichever loaded module declares it. */
export function fnDeclAt(program: LoadedProgram, nameSpan: Span): FnDecl | undefined {
  const d = declAt(program, nameSpan);
  return d?.kind === "fn" ? d : undefined;
}

/** The top-level declaration whose name is at `nameSpan`. */
export function declAt(program: LoadedProgram, nameSpan: Span): Decl | undefined {
  const ast = program.modules.get(nameSpan.file)?.ast;
  return ast?.decls.find((d) => "nameSpan" in d && d.nameSpan.start.offset === nameSpan.start.offset);
}

/** The innermost occurrence at `offset` of module `path`. */
export function occurrenceAt(occ: Occurrence[] | undefined, offset: number): Occurrence | undefined {
  return occ?.find((o) => contains(o.span, offset));
}
