/**
 * The AST's expressions in source order: an expression's direct children, and the expressions a
 * declaration holds. Visitors recurse by calling `forEachChild` from their callback, or use `walk`,
 * which keeps its own stack: a chain of binary operators is a tree as deep as the chain is long
 * (`1+1+…+1`, 200 000 terms, parses and compiles), deeper than the call stack.
 */
import type { Decl, Expr } from "./ast.js";

export function forEachChild(e: Expr, f: (e: Expr) => void): void {
  switch (e.kind) {
    case "member": f(e.object); break;
    case "call": f(e.callee); e.args.forEach((x) => f(x.value)); break;
    case "list": e.items.forEach(f); break;
    case "record": e.fields.forEach((x) => f(x.value)); break;
    case "binary": f(e.left); f(e.right); break;
    case "unary": f(e.operand); break;
    case "if": f(e.cond); f(e.then); f(e.else); break;
    default: break;
  }
}

export function forEachDeclExpr(d: Decl, f: (e: Expr) => void): void {
  switch (d.kind) {
    case "let": f(d.value); break;
    case "fn": d.params.forEach((p) => p.default && f(p.default)); d.lets.forEach((l) => f(l.value)); f(d.body); break;
    case "model": case "curriculum": d.fields.forEach((x) => f(x.value)); break;
    case "sweep": d.axes.forEach((a) => a.values.forEach(f)); break;
    default: break;
  }
}

/** Every expression of the declarations, each before its children, in source order, without recursion. */
export function walk(decls: readonly Decl[], f: (e: Expr) => void): void {
  const roots: Expr[] = [];
  for (const d of decls) forEachDeclExpr(d, (e) => roots.push(e));
  const stack = roots.reverse();
  const children: Expr[] = [];
  while (stack.length > 0) {
    const e = stack.pop()!;
    f(e);
    children.length = 0;
    forEachChild(e, (c) => children.push(c));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

/** Every expression of `kind` in the declarations, in source order. */
export function exprsOfKind<K extends Expr["kind"]>(decls: readonly Decl[], kind: K): Extract<Expr, { kind: K }>[] {
  const out: Extract<Expr, { kind: K }>[] = [];
  walk(decls, (e) => { if (e.kind === kind) out.push(e as Extract<Expr, { kind: K }>); });
  return out;
}
