/**
 * Units as dimension vectors: `turns`, `steps/turns`, `tasks×rollouts`. `%` is a dimensionless
 * scale of 0.01 applied to the literal, so it never appears in a dimension.
 */
import type { Unit as LiteralUnit } from "../grammar/ast.js";

export const BASE_UNITS = ["steps", "turns", "tokens", "tasks", "episodes", "rollouts"] as const;
export type BaseUnit = (typeof BASE_UNITS)[number];

/** Exponent per base unit; absent = 0. Dimensionless = {}. */
export type Dim = Readonly<Partial<Record<BaseUnit, number>>>;

export const DIMLESS: Dim = {};

/**
 * A literal's unit: one object per unit word, shared by every literal (dims are never mutated). A
 * large file has a unit literal on most lines; a fresh `{ [u]: 1 }` each time made every dim a new
 * object, so the comparisons below could not stop at `a === b`.
 */
const literalDims = new Map<LiteralUnit, { dim: Dim; scale: number }>([
  ["%", { dim: DIMLESS, scale: 0.01 }],
  ...BASE_UNITS.map((u) => [u, { dim: { [u]: 1 }, scale: 1 }] as const),
]);

export function dimOf(u: LiteralUnit): { dim: Dim; scale: number } {
  return literalDims.get(u)!;
}

export function dimMul(a: Dim, b: Dim, sign = 1): Dim {
  if (b === DIMLESS) return a;
  if (a === DIMLESS && sign === 1) return b;
  const out: Partial<Record<BaseUnit, number>> = {};
  for (const u of BASE_UNITS) {
    const e = (a[u] ?? 0) + sign * (b[u] ?? 0);
    if (e !== 0) out[u] = e;
  }
  return out;
}

export const dimDiv = (a: Dim, b: Dim): Dim => dimMul(a, b, -1);

// Plain loops, not `every` with a closure: these run for every operator and every unit check.
export function dimEq(a: Dim, b: Dim): boolean {
  if (a === b) return true;
  for (const u of BASE_UNITS) if ((a[u] ?? 0) !== (b[u] ?? 0)) return false;
  return true;
}

export function isDimless(a: Dim): boolean {
  if (a === DIMLESS) return true;
  for (const u of BASE_UNITS) if ((a[u] ?? 0) !== 0) return false;
  return true;
}

/** "turns", "steps/turns", "tasks×rollouts", "number" for dimensionless. */
export function formatDim(a: Dim): string {
  const num: string[] = [];
  const den: string[] = [];
  for (const u of BASE_UNITS) {
    const e = a[u] ?? 0;
    const part = Math.abs(e) === 1 ? u : `${u}^${Math.abs(e)}`;
    if (e > 0) num.push(part);
    else if (e < 0) den.push(part);
  }
  if (num.length === 0 && den.length === 0) return "number";
  return (num.length ? num.join("×") : "1") + (den.length ? "/" + den.join("×") : "");
}

/** The plan's unit string: "" for dimensionless. */
export const planUnit = (a: Dim): string => (isDimless(a) ? "" : formatDim(a));

/** Parses a written unit type: `turns`, `tasks×rollouts`, `steps/turns`; undefined if not a unit. */
export function parseDim(text: string): Dim | undefined {
  if (text === "number") return DIMLESS;
  const [numPart, denPart] = text.split("/");
  const parts = (s: string | undefined) => (s ? s.split(/[×*]/).map((p) => p.trim()).filter(Boolean) : []);
  let dim: Dim = DIMLESS;
  for (const p of parts(numPart)) {
    const u = normaliseUnitWord(p);
    if (!u) return undefined;
    dim = dimMul(dim, dimOf(u).dim);
  }
  for (const p of parts(denPart)) {
    const u = normaliseUnitWord(p);
    if (!u) return undefined;
    dim = dimDiv(dim, dimOf(u).dim);
  }
  return dim;
}

export function normaliseUnitWord(w: string): BaseUnit | undefined {
  const plural = w.endsWith("s") ? w : w + "s";
  return (BASE_UNITS as readonly string[]).includes(plural) ? (plural as BaseUnit) : undefined;
}

/** A literal with a unit, for hints: `3 turns`, `1 turn`. */
export function example(value: number, a: Dim): string {
  if (isDimless(a)) return String(value);
  const f = formatDim(a);
  return `${value} ${value === 1 && !f.includes("×") && !f.includes("/") ? f.replace(/s$/, "") : f}`;
}
