/**
 * OmegaConf 2.3's escaping of interpolations in a string value (its grammar, OmegaConfGrammarLexer.g4),
 * which Trinity-RFT resolves when it loads a config: `${…}` is an interpolation; `\${` is the literal
 * text `${`; a run of backslashes right before `${` is halved (`\\${x}` is one backslash and then the
 * interpolation, `\\\${x}` one backslash and the literal `${x}`). Backslashes anywhere else, and a
 * string without `${`, are read as written.
 */

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
