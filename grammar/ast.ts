/**
 * The typed AST of a .tcod file, built by the parser's rules directly (grammar/parser.ts). Every node
 * carries a source span.
 * See docs/LANGUAGE.md for the surface syntax each node comes from.
 */

/** 1-based line and column, 0-based offset; `end` is exclusive. */
export interface Position { offset: number; line: number; column: number }
export interface Span { file: string; start: Position; end: Position }

export type Unit =
  | "steps" | "turns" | "tokens" | "tasks" | "episodes" | "rollouts" | "%";

interface NodeBase { span: Span }

// ---- expressions -------------------------------------------------------------------------------

export interface NumberLit extends NodeBase { kind: "number"; value: number; unit?: Unit; text: string }
export interface StringLit extends NodeBase { kind: "string"; value: string }
export interface BoolLit extends NodeBase { kind: "bool"; value: boolean }
export interface NameRef extends NodeBase { kind: "name"; name: string }
export interface Member extends NodeBase { kind: "member"; object: Expr; property: string; propertySpan: Span }
export interface Arg extends NodeBase { name?: string; nameSpan?: Span; value: Expr }
export interface Call extends NodeBase { kind: "call"; callee: Expr; args: Arg[] }
export interface ListLit extends NodeBase { kind: "list"; items: Expr[] }
export interface Field extends NodeBase { name: string; nameSpan: Span; value: Expr }
export interface RecordLit extends NodeBase { kind: "record"; fields: Field[] }
export type BinaryOp = "+" | "-" | "*" | "/" | ".." | "<" | "<=" | ">" | ">=" | "==" | "!=" | "and" | "or";
export interface Binary extends NodeBase { kind: "binary"; op: BinaryOp; left: Expr; right: Expr; opSpan: Span }
export interface Unary extends NodeBase { kind: "unary"; op: "-" | "not"; operand: Expr }
export interface IfExpr extends NodeBase { kind: "if"; cond: Expr; then: Expr; else: Expr }
/** Produced by error recovery where an expression was expected; the checker skips it silently. */
export interface ErrorExpr extends NodeBase { kind: "error" }

export type Expr =
  | NumberLit | StringLit | BoolLit | NameRef | Member | Call | ListLit | RecordLit
  | Binary | Unary | IfExpr | ErrorExpr;

// ---- types as written --------------------------------------------------------------------------

/** `number`, `turns`, `tasks×rollouts`, `list<turns>`, `per_turn<number>`, `range<steps>` … */
export interface TypeRef extends NodeBase { name: string; args: TypeRef[]; text: string }

// ---- declarations ------------------------------------------------------------------------------

export interface ImportSpec extends NodeBase { name: string; alias?: string; nameSpan: Span }
export interface ImportDecl extends NodeBase {
  kind: "import"; names: ImportSpec[]; from: string; fromSpan: Span;
}
export interface LetDecl extends NodeBase {
  kind: "let"; exported: boolean; name: string; nameSpan: Span; type?: TypeRef; value: Expr; doc?: string;
}
export interface Param extends NodeBase { name: string; nameSpan: Span; type?: TypeRef; default?: Expr }
export interface FnDecl extends NodeBase {
  kind: "fn"; exported: boolean; name: string; nameSpan: Span; params: Param[]; returnType?: TypeRef;
  /** `let` bindings of a block body, in order; empty for `= EXPR` bodies. */
  lets: LetDecl[]; body: Expr; doc?: string;
}
export interface ModelDecl extends NodeBase {
  kind: "model"; exported: boolean; name: string; nameSpan: Span; fields: Field[]; doc?: string;
}
export interface CurriculumDecl extends NodeBase {
  kind: "curriculum"; exported: boolean; name: string; nameSpan: Span;
  /** `curriculum b = a with { … }`: the base curriculum's name. */
  base?: { name: string; span: Span };
  fields: Field[]; doc?: string;
}
export interface SweepAxis extends NodeBase { target: string[]; targetSpan: Span; values: Expr[] }
export interface SweepDecl extends NodeBase {
  kind: "sweep"; name: string; nameSpan: Span; mode: "product" | "zip"; axes: SweepAxis[];
}

export type Decl = ImportDecl | LetDecl | FnDecl | ModelDecl | CurriculumDecl | SweepDecl;

export interface SourceFile { path: string; text: string; decls: Decl[] }
