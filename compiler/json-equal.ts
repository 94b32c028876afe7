/**
 * Whether two values have the same JSON (`JSON.stringify(a) === JSON.stringify(b)`) without writing
 * it: walked side by side, stopping at the first difference, and at once where both hold the same
 * object (plans of sweep points share their unchanged parts). For plain data, as plans are: an
 * object with `toJSON` is compared through JSON.stringify.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return same(json(a, false), json(b, false));
}

/** Marks a value that JSON leaves out (undefined, a function, a symbol) in an object or at the top. */
const ABSENT = Symbol("absent");

/** A value as JSON sees it: primitives normalised (NaN and ±Infinity are null; −0 is 0), objects as they are. */
function json(v: unknown, inArray: boolean): unknown {
  switch (typeof v) {
    case "number": return Number.isFinite(v) ? (v === 0 ? 0 : v) : null;
    case "undefined": case "function": case "symbol": return inArray ? null : ABSENT;
    default: return v;
  }
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (hasToJson(a) || hasToJson(b)) return JSON.stringify(a === ABSENT ? undefined : a) === JSON.stringify(b === ABSENT ? undefined : b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  const arr = Array.isArray(a);
  if (arr !== Array.isArray(b)) return false;
  if (arr) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!same(json(x[i], true), json(y[i], true))) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  let i = 0;
  let j = 0;
  for (;;) {
    // The next key each side writes (JSON leaves out keys whose values it leaves out).
    while (i < kx.length && json(x[kx[i]!], false) === ABSENT) i++;
    while (j < ky.length && json(y[ky[j]!], false) === ABSENT) j++;
    if (i === kx.length || j === ky.length) return i === kx.length && j === ky.length;
    if (kx[i] !== ky[j] || !same(json(x[kx[i]!], false), json(y[ky[j]!], false))) return false;
    i++;
    j++;
  }
}

const hasToJson = (v: unknown): boolean => v !== null && typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON === "function";
