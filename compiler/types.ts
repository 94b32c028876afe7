/**
 * The type representation: what a written type (`turns`, `list<steps>`, `per_turn<number>`,
 * `tasks×rollouts`, `tasks|tasks×rollouts`) means, parsed once into a `Type` that the checker
 * (check.ts) matches values against. Parsing never reports: an unknown name is a `Type` of kind
 * "unknown", reported by the checker where a value meets it (the same place a mismatch is reported).
 *
 * Every `Type` keeps the text it was written as (whitespace removed), which is what messages show.
 */
import type { TypeRef } from "../grammar/ast.js";
import { DIMLESS, parseDim, type Dim } from "./units.js";
import type { ObjType } from "./values.js";

/** Values of these kinds match a bare structural type name (`loss`, `record`, `list`, `range`). */
export type StructuralKind = "loss" | "record" | "list" | "range";

export type Type =
  | { kind: "any"; text: string }
  | { kind: "bool"; text: string }
  | { kind: "string"; text: string }
  /** Any number, whatever its unit. */
  | { kind: "quantity"; text: string }
  /** A number of one unit: `number` (dimensionless), `turns`, `tasks×rollouts`, `steps/turns`. */
  | { kind: "unit"; dim: Dim; text: string }
  | { kind: "structural"; of: StructuralKind; text: string }
  | { kind: "object"; of: ObjType; text: string }
  | { kind: "function"; text: string }
  | { kind: "list"; item: Type; text: string }
  | { kind: "range"; item: Type; text: string }
  /** A scalar known per turn at the latest: `per_turn<number>`. */
  | { kind: "per_turn"; item: Type; text: string }
  /** `a|b`: the first alternative that fits; mismatches are reported against the first. */
  | { kind: "union"; alternatives: Type[]; text: string }
  /** A name that is no type: `generic` for `foo<…>` with an unknown outer name. */
  | { kind: "unknown"; generic: boolean; text: string };

const OBJECT_TYPES: readonly ObjType[] = ["model", "env", "agent", "optimizer", "eval", "depth", "depth_rule", "backend", "curriculum"];
const STRUCTURAL: readonly StructuralKind[] = ["loss", "record", "list", "range"];

/**
 * Types by written text, parsed once each: one table per compilation (compiler/index.ts's
 * SourceCache holds it, every evaluator of the compilation reads through it), so what an editor's
 * session or a long `tcod check` parses goes with the compilation that parsed it. `|` only appears
 * in the compiler's own field tables (the grammar has no union types), never inside `<…>`.
 */
export class TypeTable {
  private readonly byText = new Map<string, Type>();

  /** The type a text denotes (whitespace is insignificant). */
  of = (written: string): Type => {
    // Looked up as written first (the compiler's tables ask for the same texts on every call).
    let t = this.byText.get(written);
    if (t !== undefined) return t;
    const text = written.replace(/\s+/g, "");
    t = this.byText.get(text);
    if (t === undefined) { t = parse(text, this); this.byText.set(text, t); }
    this.byText.set(written, t);
    return t;
  };

  /**
   * The type of a written type annotation (`let x: turns = …`, a parameter's or a result's type): by
   * its text. (Not a WeakMap per annotation: a large file has one on most functions, and a weak table
   * that size costs the garbage collector more than the lookup saves.)
   */
  ofRef(ref: TypeRef): Type {
    return this.of(ref.text);
  }

  /** Distinct texts held (as written and without whitespace). */
  get size(): number {
    return this.byText.size;
  }
}

/** The type a text denotes, parsed afresh: for a one-off outside a compilation, which keeps nothing. */
export function parseType(written: string): Type {
  return new TypeTable().of(written);
}

function parse(text: string, table: TypeTable): Type {
  if (text.includes("|")) {
    const alternatives = text.split("|").map(table.of);
    return alternatives.length === 1 ? alternatives[0]! : { kind: "union", alternatives, text };
  }
  const generic = /^(\w+)<(.+)>$/.exec(text);
  if (generic) {
    const [, outer, inner] = generic as unknown as [string, string, string];
    if (outer === "list" || outer === "range" || outer === "per_turn") return { kind: outer, item: table.of(inner), text };
    return { kind: "unknown", generic: true, text };
  }
  switch (text) {
    case "any": case "bool": case "string": case "quantity": case "function":
      return { kind: text, text };
  }
  if ((STRUCTURAL as readonly string[]).includes(text)) return { kind: "structural", of: text as StructuralKind, text };
  if ((OBJECT_TYPES as readonly string[]).includes(text)) return { kind: "object", of: text as ObjType, text };
  const dim = parseDim(text);
  return dim ? { kind: "unit", dim, text } : { kind: "unknown", generic: false, text };
}

/** A scalar type: `bool`, a unit, or `per_turn<unit>` (a number known per turn). */
export interface ScalarType { type: "number" | "bool"; dim: Dim; perTurn: boolean }

/** The scalar a type describes, when it describes one (`per_turn<bool>` and `quantity` do not). */
export function scalarType(t: Type | undefined): ScalarType | undefined {
  if (!t) return undefined;
  if (t.kind === "bool") return { type: "bool", dim: DIMLESS, perTurn: false };
  if (t.kind === "unit") return { type: "number", dim: t.dim, perTurn: false };
  if (t.kind === "per_turn" && t.item.kind === "unit") return { type: "number", dim: t.item.dim, perTurn: true };
  return undefined;
}
