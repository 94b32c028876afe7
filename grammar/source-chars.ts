/**
 * Characters a source file may not hold anywhere, strings and comments included, the encodings it
 * may not be in, and a file's bytes decoded with where those that are not UTF-8 stood (`decodeSource`).
 * Imports nothing: fast.ts (which must not load Chevrotain) and lexer.ts share it, plan/read-file.ts
 * decodes sources with it, and `tcod import trinity` uses `wrongEncoding` for YAML.
 *
 * Telling UTF-16 or UTF-32 text that was read as UTF-8 (`decodeSource`, readFileSync(p, "utf8"),
 * the CLI's readTextFile, or an editor that guessed UTF-8): those encodings write each ASCII character (a
 * keyword, `//`, `#`, a YAML key, indentation, a line break) with one NUL (UTF-16) or three (UTF-32)
 * beside it, and a byte-order mark (FF FE, FE FF, FF FE 00 00, 00 00 FE FF), where there is one,
 * reads as two U+FFFD. Their other characters read as anything (é as U+FFFD and a NUL, 学 as "f["),
 * so what tells them is the NULs around the ASCII, wherever it first comes: at the start, after a
 * first line of Chinese, or after UTF-8 text that UTF-16 was appended to (Windows PowerShell's `>>`
 * appends UTF-16 to a UTF-8 file). A UTF-8 file holds no NUL (one is TC1003), so one without any is
 * never taken for UTF-16, and stray NULs are not either: it takes four ASCII characters in a row,
 * written so, anywhere but at the file's very start (where the first character written so is enough,
 * as a NUL there is an error in any case). The lexer reports it as TC1009, once, instead of one TC1003
 * per NUL.
 */

/** Where a text is UTF-16 or UTF-32 read as UTF-8, and how to name it. */
export interface WrongEncoding {
  /**
   * "UTF-16 (little-endian, with a byte-order mark)", "UTF-32 (big-endian)", "UTF-16" (byte order
   * unknown); for text after UTF-8 text, "UTF-16 from here on (UTF-8 before it)".
   */
  encoding: string;
  /** Where to report it: 0 for a whole file, else where the UTF-16 or UTF-32 text starts. */
  offset: number;
}

const NUL = "\u0000";
const BOM = "\uFFFD\uFFFD";
/** In a row, the ASCII characters written as UTF-16 or UTF-32 that tell such text after the start. */
const RUN = 4;

/** When `text` holds UTF-16 or UTF-32 text decoded as UTF-8, where and which; else undefined. Pure. */
export function wrongEncoding(text: string): WrongEncoding | undefined {
  const atStart = encodingAtStart(text);
  if (atStart) return { encoding: atStart, offset: 0 };
  // No NUL, no UTF-16 or UTF-32 of ASCII: a UTF-8 file (the usual case) is told at this one search.
  for (let j = text.indexOf(NUL); j !== -1; j = text.indexOf(NUL, j + 1)) {
    const width = run(text, j, 32) ? 32 : run(text, j, 16) ? 16 : 0;
    if (width === 0) continue;
    // j is the first NUL of the run; little-endian text starts a character before it (its low byte),
    // as Windows writes it. After a UTF-16 byte-order mark, the mark's place says which.
    const pad = width === 32 ? 3 : 1;
    let start = Math.max(0, j - 1);
    let order = "";
    if (width === 16 && j >= 2 && text.startsWith(BOM, j - 2)) { start = j - 2; order = " (big-endian, with a byte-order mark)"; }
    else if (width === 16 && j >= 3 && text.startsWith(BOM, j - 3)) { start = j - 3; order = " (little-endian, with a byte-order mark)"; }
    const before = text.slice(0, start);
    // The whole file, when nothing before the run is a line of UTF-8 text: the run is on the first
    // line, or a line break before it is UTF-16 or UTF-32 itself, with its NULs (after a first line
    // of Chinese, which reads as anything).
    if (!/[\n\r]/.test(before) || before.includes(NUL)) {
      // The whole file's byte order from its end: little-endian text ends in its last character's
      // high byte(s), a NUL for ASCII ("\n\0"); big-endian text in its low byte. (Its byte-order
      // mark, read as two U+FFFD either way, does not say which.)
      const bom = text.startsWith(BOM) || text.startsWith(NUL + NUL + BOM) ? ", with a byte-order mark" : "";
      const end = text.endsWith(NUL.repeat(pad)) ? "little-endian" : text.endsWith(NUL.repeat(pad), text.length - 1) ? "big-endian" : undefined;
      return { encoding: `UTF-${width}${end ? ` (${end}${bom})` : bom ? ` (${bom.slice(2)})` : ""}`, offset: 0 };
    }
    return { encoding: `UTF-${width}${order} from here on (UTF-8 before it)`, offset: start };
  }
  return undefined;
}

/**
 * The encoding of a text that starts as UTF-16 or UTF-32 of ASCII (its first character or two,
 * after a byte-order mark where there is one), named with its byte order; else undefined.
 */
function encodingAtStart(text: string): string | undefined {
  if (text.startsWith(NUL + NUL + BOM)) return "UTF-32 (big-endian, with a byte-order mark)";
  const bom = text.startsWith(BOM);
  const t = bom ? text.slice(2, 6) : text.slice(0, 4);
  const nul = (i: number) => t[i] === NUL;
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
 * Whether RUN characters written as UTF-`width` start at the NUL at `j`: each a NUL (UTF-16) or three
 * (UTF-32) then a character that is not one, which both byte orders show once past their first unit.
 */
function run(text: string, j: number, width: 16 | 32): boolean {
  const nuls = width === 16 ? 1 : 3;
  for (let k = 0; k < RUN; k++) {
    const at = j + k * (nuls + 1);
    for (let z = 0; z < nuls; z++) if (text[at + z] !== NUL) return false;
    const c = text[at + nuls];
    if (c === undefined || c === NUL) return false;
  }
  return true;
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
