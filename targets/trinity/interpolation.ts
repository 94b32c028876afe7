/**
 * OmegaConf 2.3's escaping of interpolations in a string value (its grammar, OmegaConfGrammarLexer.g4),
 * which Trinity-RFT resolves when it loads a config: `${…}` is an interpolation; `\${` is the literal
 * text `${`; a run of backslashes right before `${` is halved (`\\${x}` is one backslash and then the
 * interpolation, `\\\${x}` one backslash and the literal `${x}`). Backslashes anywhere else, and a
 * string without `${`, are read as written.
 */
import { pythonFloatRepr } from "./yaml-scalars.js";

/** `s` written so that OmegaConf reads it back as `s` itself: each `${` after n backslashes becomes 2n+1 backslashes and `${`. */
export function escapeInterpolations(s: string): string {
  return s.includes("${") ? s.replace(/(\\*)\$\{/g, (_, bs: string) => `${bs}${bs}\\\${`) : s;
}

/** A string as OmegaConf splits it: literal text, and the expression of each interpolation (`${expr}`; no nesting). */
export type Piece = { literal: string } | { expr: string } | { unclosed: string };

/**
 * The pieces of `s` as OmegaConf reads it: escapes undone, each unescaped `${expr}` an interpolation
 * (up to the first `}`); an unescaped `${` without a closing `}` is `unclosed`, with the text
 * from it on (OmegaConf's grammar refuses it).
 */
export function splitInterpolations(s: string): Piece[] {
  const pieces: Piece[] = [];
  let text = "";
  let i = 0;
  for (const m of s.matchAll(/(\\*)\$\{/g)) {
    if (m.index < i) continue;
    const bs = m[1]!.length;
    text += s.slice(i, m.index) + "\\".repeat(Math.floor(bs / 2));
    const open = m.index + m[0].length;
    if (bs % 2 === 1) { text += "${"; i = open; continue; }
    const close = s.indexOf("}", open);
    if (close < 0) {
      if (text) pieces.push({ literal: text });
      return [...pieces, { unclosed: s.slice(m.index + bs) }];
    }
    if (text) pieces.push({ literal: text });
    text = "";
    pieces.push({ expr: s.slice(open, close) });
    i = close + 1;
  }
  text += s.slice(i);
  if (text) pieces.push({ literal: text });
  return pieces;
}

/** Whether OmegaConf would resolve anything in `s` (an unescaped `${`). */
export function hasInterpolation(s: string): boolean {
  return splitInterpolations(s).some((p) => !("literal" in p));
}

/** A copy of `v` (a config tree) with every string value escaped (escapeInterpolations); keys are not interpolated and stay. */
export function escapeTree(v: unknown): unknown {
  if (typeof v === "string") return escapeInterpolations(v);
  if (Array.isArray(v)) return v.map(escapeTree);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, escapeTree(x)]));
  return v;
}

/**
 * The key an interpolation expression names (`a.b.0` → ["a", "b", 0]), when it is an absolute key
 * path (OmegaConf trims the spaces around it); undefined for a resolver (`oc.env:…`), a relative
 * path (`.a`, `..a`), brackets (`a[0]`) or anything else.
 */
export function keyPath(expr: string): (string | number)[] | undefined {
  const t = expr.trim();
  return /^[A-Za-z_]\w*(\.\w+)*$/.test(t) ? t.split(".").map((s) => (/^\d+$/.test(s) ? Number(s) : s)) : undefined;
}

/** The expression of `s` when `s` is one interpolation and nothing else (`${a.b}`), which OmegaConf replaces by the value itself, typed. */
export function wholeInterpolation(s: string): string | undefined {
  if (!s.startsWith("${")) return undefined;
  const pieces = splitInterpolations(s);
  const only = pieces.length === 1 ? pieces[0]! : undefined;
  return only && "expr" in only ? only.expr : undefined;
}

/**
 * What `${oc.env:VAR,default}` gives when VAR is unset, as OmegaConf 2.3 reads the default (its
 * grammar, then the resolver's str()): `null` is None; `true`/`false` (any case) 'True'/'False';
 * an integer (`1_000`) its digits ('1000'); a float Python's repr of it (`1e-6` → '1e-06',
 * `1.50` → '1.5'); a quoted string its text; other plain text itself, spaces around it trimmed.
 * Undefined for what tcod does not read the same way for certain (a list, a mapping, a nested
 * interpolation, escapes, quotes or brackets inside plain text).
 */
export function envDefault(text: string): { value: string | null } | undefined {
  const t = text.trim();
  const quoted = /^'([^'\\]*)'$|^"([^"\\]*)"$/.exec(t);
  if (quoted) return (quoted[1] ?? quoted[2]!).includes("${") ? undefined : { value: quoted[1] ?? quoted[2]! };
  if (/^null$/i.test(t)) return { value: null };
  if (/^(?:true|false)$/i.test(t)) return { value: /^true$/i.test(t) ? "True" : "False" };
  const int = String.raw`(?:0|[1-9](?:_?\d)*)`;
  const digits = String.raw`\d(?:_?\d)*`;
  if (new RegExp(`^[-+]?${int}$`).test(t)) return { value: BigInt(t.replace(/_/g, "")).toString() };
  const exponent = `[eE][-+]?${digits}`;
  const point = `(?:${int}?\\.${digits}|${int}\\.)`;
  if (new RegExp(`^[-+]?(?:${point}(?:${exponent})?|${int}${exponent})$`).test(t)) return { value: pythonFloatRepr(Number(t.replace(/_/g, ""))) };
  if (/^[-+]?(?:inf|nan)$/i.test(t)) return { value: /nan/i.test(t) ? "nan" : t.startsWith("-") ? "-inf" : "inf" };
  return /^[\w/.\-+:~@%*?| ]*$/.test(t) ? { value: t } : undefined;
}

/**
 * The interpolations of `s` as OmegaConf's grammar nests them (`${oc.select:a,${b}}` holds `${b}`,
 * which OmegaConf resolves first): the text of each outermost `${…}`, escapes as splitInterpolations
 * reads them, quotes inside one skipped over; or the text from a `${` never closed.
 */
export function nestedInterpolations(s: string): { exprs: string[] } | { unclosed: string } {
  const exprs: string[] = [];
  let i = 0;
  for (const m of s.matchAll(/(\\*)\$\{/g)) {
    if (m.index < i || m[1]!.length % 2 === 1) continue;
    const open = m.index + m[0].length;
    let depth = 1;
    let j = open;
    for (let quote = ""; j < s.length && depth > 0; j++) {
      const c = s[j]!;
      if (quote) { if (c === quote) quote = ""; continue; }
      if (c === "'" || c === '"') quote = c;
      else if (c === "$" && s[j + 1] === "{" && s[j - 1] !== "\\") { depth++; j++; }
      else if (c === "}") depth--;
    }
    if (depth > 0) return { unclosed: s.slice(m.index + m[1]!.length) };
    exprs.push(s.slice(open, j - 1));
    i = j;
  }
  return { exprs };
}

/**
 * The key an interpolation expression names as OmegaConf's grammar reads one: absolute (`a.b.0`,
 * `a.b[0]`) or relative to the node holding it (`.y`, a sibling; `..x`, a key of its parent's
 * parent; `up`: how many levels up from that node). Keys may hold `-` and start with digits; spaces
 * around are trimmed. Undefined for anything else (a resolver, a key with spaces).
 */
export function anyKeyPath(expr: string): { up: number; path: (string | number)[] } | undefined {
  const m = /^(\.*)([\w-]+(?:\.[\w-]+|\[[\w-]+\])*)?$/.exec(expr.trim());
  if (!m || (m[1] === "" && m[2] === undefined)) return undefined;
  const path = (m[2] ?? "").replace(/\[([\w-]+)\]/g, ".$1").split(".").filter((s) => s !== "").map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  return { up: m[1]!.length, path };
}
