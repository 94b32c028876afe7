/**
 * Characters a source file may not hold anywhere, strings and comments included, and the encodings
 * it may not be in. Imports nothing: fast.ts (which must not load Chevrotain) and lexer.ts share it,
 * and `tcod import trinity` uses `wrongEncoding` for YAML.
 *
 * Telling a UTF-16 or UTF-32 file that was read as UTF-8 (readFileSync(p, "utf8"), the CLI's
 * readTextFile, or an editor that guessed UTF-8): such a file starts with ASCII (a keyword, `//`,
 * `#`, a YAML key), which those encodings write with NUL bytes beside each character, and its
 * byte-order mark (FF FE, FE FF, FF FE 00 00, 00 00 FE FF), where there is one, is read as two U+FFFD.
 * The lexer reports it as TC1009, once, instead of one TC1003 per NUL.
 */

/**
 * "UTF-16 (little-endian, with a byte-order mark)", "UTF-32 (big-endian)"… when `text` is a UTF-16 or
 * UTF-32 file decoded as UTF-8, else undefined. Looks at the first few characters only: a UTF-8
 * file that starts so has a NUL there, an error in any case.
 */
export function wrongEncoding(text: string): string | undefined {
  if (text.startsWith("\u0000\u0000\uFFFD\uFFFD")) return "UTF-32 (big-endian, with a byte-order mark)";
  const bom = text.startsWith("\uFFFD\uFFFD");
  const t = bom ? text.slice(2, 6) : text.slice(0, 4);
  const nul = (i: number) => t[i] === "\u0000";
  const char = (i: number) => t[i] !== undefined && !nul(i);
  const withBom = bom ? ", with a byte-order mark" : "";
  if (nul(0) && nul(1) && nul(2) && char(3)) return `UTF-32 (big-endian${withBom})`;
  if (char(0) && nul(1) && nul(2) && nul(3)) return `UTF-32 (little-endian${withBom})`;
  // (UTF-32 little-endian's mark is FF FE 00 00: two NULs, then its first character.)
  if (bom && nul(0) && nul(1) && char(2) && nul(3)) return "UTF-32 (little-endian, with a byte-order mark)";
  if (nul(0) && char(1)) return `UTF-16 (big-endian${withBom})`;
  if (char(0) && nul(1)) return `UTF-16 (little-endian${withBom})`;
  return undefined;
}

/**
 * Control characters (Unicode category Cc) but the whitespace of the lexer's `WhiteSpace` (tab,
 * line feed, vertical tab, form feed, carriage return): TC1003 wherever they stand.
 */
export const CONTROL_CHARS = "\\u0000-\\u0008\\u000E-\\u001F\\u007F-\\u009F";

/**
 * The bidirectional embeddings, overrides and isolates of "Trojan Source" (CVE-2021-42574), with their
 * Unicode names: TC1010 wherever they stand. In a comment or string they reorder how editors and
 * terminals show the rest of the line, so code can read differently than it runs; right-to-left text
 * shows as such without any of them.
 */
export const BIDI_CONTROLS: ReadonlyMap<string, string> = new Map([
  ["\u202A", "LEFT-TO-RIGHT EMBEDDING"], ["\u202B", "RIGHT-TO-LEFT EMBEDDING"], ["\u202C", "POP DIRECTIONAL FORMATTING"],
  ["\u202D", "LEFT-TO-RIGHT OVERRIDE"], ["\u202E", "RIGHT-TO-LEFT OVERRIDE"], ["\u2066", "LEFT-TO-RIGHT ISOLATE"],
  ["\u2067", "RIGHT-TO-LEFT ISOLATE"], ["\u2068", "FIRST STRONG ISOLATE"], ["\u2069", "POP DIRECTIONAL ISOLATE"],
]);
export const BIDI_CHARS = "\\u202A-\\u202E\\u2066-\\u2069";

/**
 * Whether `text` holds a character that is an error wherever it stands: a control character
 * (TC1003), a bidi control (TC1010) or U+FFFD (TC1008). One scan; fast.ts gives up on such a text
 * (its comment and string scanning passes over them), and lexer.ts reports each.
 */
const REFUSED = new RegExp(`[${CONTROL_CHARS}${BIDI_CHARS}\\uFFFD]`);
export const hasRefusedChar = (text: string): boolean => REFUSED.test(text);
