/**
 * Characters a source file may not hold anywhere, strings and comments included, the encodings it
 * may not be in, and a file's bytes decoded with where those that are not UTF-8 stood (`decodeSource`).
 * Imports nothing: fast.ts (which must not load Chevrotain) and lexer.ts share it, plan/read-file.ts
 * decodes sources with it, and `tcod import trinity` uses `wrongEncoding` for YAML.
 *
 * Telling a UTF-16 or UTF-32 file that was read as UTF-8 (`decodeSource`, readFileSync(p, "utf8"),
 * or an editor that guessed UTF-8): such a file starts with ASCII (a keyword, `//`,
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
 * (TC1003), a bidi control (TC1010) or, unless the text was decoded from bytes (`decodeSource`; then
 * its bad bytes are listed and a U+FFFD is the character U+FFFD), U+FFFD (TC1008). One scan; fast.ts
 * gives up on such a text (its comment and string scanning passes over them), and lexer.ts reports each.
 */
const REFUSED = new RegExp(`[${CONTROL_CHARS}${BIDI_CHARS}\\uFFFD]`);
const REFUSED_BUT_FFFD = new RegExp(`[${CONTROL_CHARS}${BIDI_CHARS}]`);
export const hasRefusedChar = (text: string, fromBytes = false): boolean => (fromBytes ? REFUSED_BUT_FFFD : REFUSED).test(text);

/**
 * A byte sequence of a file that is not UTF-8: where the decoded text holds the U+FFFD that stands for
 * it (an offset in UTF-16 code units), and the bytes ([0xE9]; [0xF0, 0x9F, 0x98], a character cut short).
 */
export interface BadBytes { readonly offset: number; readonly bytes: readonly number[] }

/**
 * A source's text and, when it was decoded from a file's bytes (`decodeSource`), the bytes in it that
 * were not UTF-8 (none: `[]`). A text that did not come from bytes (an editor's buffer, which arrives
 * already decoded; a `--set` value) has no `badBytes`: there a U+FFFD cannot be told from one that
 * replaced such bytes, so the lexer refuses every U+FFFD of it (TC1008).
 */
export interface SourceText { readonly text: string; readonly badBytes?: readonly BadBytes[] }

/**
 * The text of a source file's bytes, decoded as UTF-8 as Node.js's `readFileSync(p, "utf8")` and
 * `TextDecoder` do (each invalid sequence, WHATWG's "maximal subpart", one U+FFFD; a byte-order mark
 * kept), with where each invalid sequence stood. The lexer names those bytes (TC1008) and takes any
 * other U+FFFD as the character the file holds (the bytes EF BF BD).
 */
export function decodeSource(bytes: Uint8Array): SourceText {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const whole = decoder.decode(bytes);
  if (!whole.includes("\uFFFD")) return { text: whole, badBytes: [] };
  // Some U+FFFD: the text again, valid runs decoded and each bad sequence one U+FFFD, so that each
  // offset is where its U+FFFD is by construction.
  const parts: string[] = [];
  const badBytes: BadBytes[] = [];
  let length = 0;
  let run = 0;
  for (let i = 0; i < bytes.length; ) {
    const n = utf8At(bytes, i);
    if (n > 0) { i += n; continue; }
    if (i > run) { const t = decoder.decode(bytes.subarray(run, i)); parts.push(t); length += t.length; }
    badBytes.push({ offset: length, bytes: Array.from(bytes.subarray(i, i - n)) });
    parts.push("\uFFFD");
    length++;
    i -= n;
    run = i;
  }
  if (run < bytes.length) parts.push(decoder.decode(bytes.subarray(run)));
  return { text: parts.join(""), badBytes };
}

/**
 * At `bytes[i]`: n > 0, a valid UTF-8 character of n bytes; -n, an invalid sequence of n bytes (the
 * longest start of a valid character there, at least one byte: what one U+FFFD replaces).
 */
function utf8At(bytes: Uint8Array, i: number): number {
  const b = bytes[i]!;
  if (b < 0x80) return 1;
  let need: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b >= 0xc2 && b <= 0xdf) need = 1;
  else if (b >= 0xe0 && b <= 0xef) { need = 2; if (b === 0xe0) lo = 0xa0; else if (b === 0xed) hi = 0x9f; }
  else if (b >= 0xf0 && b <= 0xf4) { need = 3; if (b === 0xf0) lo = 0x90; else if (b === 0xf4) hi = 0x8f; }
  else return -1;
  for (let k = 1; k <= need; k++) {
    const c = bytes[i + k];
    if (c === undefined || c < lo || c > hi) return -k;
    lo = 0x80;
    hi = 0xbf;
  }
  return need + 1;
}

/** Whether two sources are the same text read alike: both without a list of bad bytes, or with the same list. */
export function sameSource(a: SourceText, b: SourceText): boolean {
  if (a.text !== b.text) return false;
  const x = a.badBytes, y = b.badBytes;
  if (x === undefined || y === undefined) return x === y;
  return x.length === y.length && x.every((e, k) => e.offset === y[k]!.offset && e.bytes.join() === y[k]!.bytes.join());
}

/** "0xE9", "0xF0 0x9F 0x98": bytes as TC1008 names them. */
export const hexBytes = (bytes: readonly number[]): string => bytes.map((b) => `0x${b.toString(16).toUpperCase().padStart(2, "0")}`).join(" ");
