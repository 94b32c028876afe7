/**
 * Where and why `JSON.parse` refused a text a user can edit (a plan .json, a run folder's files,
 * sweep.json, a metrics or task line, a model's or a checkpoint's .json): the one reading of V8's
 * SyntaxError for every reader, so each reports a line and a column.
 *
 * V8's messages name the place in three ways, by Node.js version and kind of error: "… in JSON at
 * position N" (Node 20, most errors), "… (line L column C)" appended (Node 22 and later), or not at
 * all: "Unexpected end of JSON input" (the end of the text) and "Unexpected token 'x', "…" is not
 * valid JSON" (Node 20, a character no value starts with), whose place is found by scanning the text
 * (`jsonErrorOffset`). The message comes back without the place and without the excerpt of the
 * text V8 quotes (it can span lines), as the place is given apart.
 */

/** A JSON syntax error: V8's description, and its 1-based line and column (UTF-16 code units, as an editor counts). */
export interface JsonSyntaxError { message: string; line: number; column: number }

/**
 * `e` (thrown by `JSON.parse(text)`) as a JsonSyntaxError; undefined for anything but a SyntaxError.
 * `start`: where `text` begins in its file, for a line of a JSON-lines file (its line, and the column
 * of its first character when the line was trimmed before parsing).
 */
export function jsonSyntaxError(e: unknown, text: string, start: { line: number; column?: number } = { line: 1 }): JsonSyntaxError | undefined {
  if (!(e instanceof SyntaxError)) return undefined;
  const stated = /\(line (\d+) column (\d+)\)/.exec(e.message);
  let at: { line: number; column: number };
  if (stated) {
    at = { line: Number(stated[1]), column: Number(stated[2]) };
  } else {
    const pos = /at position (\d+)/.exec(e.message);
    const offset = pos ? Number(pos[1]) : /Unexpected end of JSON input/.test(e.message) ? text.length : jsonErrorOffset(text) ?? text.length;
    at = lineColumn(text, Math.min(offset, text.length));
  }
  const line = start.line + at.line - 1;
  const column = at.line === 1 ? (start.column ?? 1) + at.column - 1 : at.column;
  return { message: describe(e.message), line, column };
}

/** V8's message without the place (said apart) and the quoted excerpt of the text. */
function describe(message: string): string {
  const token = /^Unexpected token (.*?), (?:\.\.\.)?".*" is not valid JSON$/s.exec(message);
  if (token) {
    // The token as V8 quotes it ('x'); a line break or another invisible character as its code point.
    const quoted = token[1]!;
    const ch = quoted.length >= 3 && quoted.startsWith("'") && quoted.endsWith("'") ? quoted.slice(1, -1) : quoted;
    const shown = /^[\u0000-\u001F\u007F-\u009F\u2028\u2029\uFEFF]$/.test(ch) ? `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}` : `'${ch}'`;
    return `Unexpected token ${shown}`;
  }
  return message.replace(/ \(line \d+ column \d+\)$/, "").replace(/ at position \d+$/, "").replace(/ in JSON$/, "");
}

/** The 1-based line and column of `offset` in `text` (lines end at LF; a CR before it counts as a column). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1, lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) { line++; lineStart = i + 1; }
  return { line, column: offset - lineStart + 1 };
}

const WS = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const DIGIT = (c: number) => c >= 0x30 && c <= 0x39;
const HEX = /^[0-9A-Fa-f]{4}$/;

/**
 * The offset of the first character at which `text` stops being JSON as JSON.parse reads it (RFC
 * 8259: whitespace is space, tab, LF and CR only; no byte-order mark), `text.length` where it ends too
 * early; undefined for a text that is JSON. Without recursion: nesting costs no stack.
 */
export function jsonErrorOffset(text: string): number | undefined {
  const n = text.length;
  const open: number[] = []; // the containers around the value: 0x5b `[`, 0x7b `{`
  let i = 0;
  const skip = () => { while (i < n && WS(text.charCodeAt(i))) i++; };
  /** Scans a string from its opening quote at i; the offset of its error, or undefined (i past it). */
  const string = (): number | undefined => {
    i++;
    for (;;) {
      if (i >= n) return n;
      const c = text.charCodeAt(i);
      if (c === 0x22) { i++; return undefined; }
      if (c < 0x20) return i;
      if (c === 0x5c) {
        const esc = text[i + 1];
        if (esc === undefined) return n;
        if (esc === "u") {
          if (!HEX.test(text.slice(i + 2, i + 6))) return i + 2 + Math.max(0, [...text.slice(i + 2, i + 6)].findIndex((h) => !/[0-9A-Fa-f]/.test(h)));
          i += 6;
        } else if ('"\\/bfnrt'.includes(esc)) i += 2;
        else return i + 1;
      } else i++;
    }
  };
  /** Scans a value at i: undefined once it is whole, "open" where it opens a container with items to come, or the offset of its error. */
  const value = (): number | "open" | undefined => {
    skip();
    if (i >= n) return n;
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      i++;
      skip();
      if (text.charCodeAt(i) === (c === 0x7b ? 0x7d : 0x5d)) { i++; return undefined; }
      open.push(c);
      return "open";
    }
    if (c === 0x22) return string();
    if (c === 0x2d || DIGIT(c)) {
      if (c === 0x2d) i++;
      if (i >= n) return n;
      if (text.charCodeAt(i) === 0x30) i++;
      else if (DIGIT(text.charCodeAt(i))) while (i < n && DIGIT(text.charCodeAt(i))) i++;
      else return i;
      if (text.charCodeAt(i) === 0x2e) {
        i++;
        if (!DIGIT(text.charCodeAt(i))) return Math.min(i, n);
        while (i < n && DIGIT(text.charCodeAt(i))) i++;
      }
      if (text.charCodeAt(i) === 0x65 || text.charCodeAt(i) === 0x45) {
        i++;
        if (text.charCodeAt(i) === 0x2b || text.charCodeAt(i) === 0x2d) i++;
        if (!DIGIT(text.charCodeAt(i))) return Math.min(i, n);
        while (i < n && DIGIT(text.charCodeAt(i))) i++;
      }
      return undefined;
    }
    for (const word of ["true", "false", "null"]) {
      if (text[i] !== word[0]) continue;
      for (let k = 0; k < word.length; k++, i++) if (text[i] !== word[k]) return i;
      return undefined;
    }
    return i;
  };
  /** A member's key and its colon (its value follows); the offset of an error, or undefined. */
  const key = (): number | undefined => {
    skip();
    if (text.charCodeAt(i) !== 0x22) return Math.min(i, n);
    const bad = string();
    if (bad !== undefined) return bad;
    skip();
    if (text.charCodeAt(i) !== 0x3a) return Math.min(i, n);
    i++;
    return undefined;
  };
  // A loop, not recursion: what comes next is a key or a value; a whole value is followed by a comma,
  // the close of its container, or (at the top) the end.
  let wantKey = false;
  for (;;) {
    if (wantKey) {
      const bad = key();
      if (bad !== undefined) return bad;
      wantKey = false;
      continue;
    }
    const r = value();
    if (typeof r === "number") return r;
    if (r === "open") { wantKey = open[open.length - 1] === 0x7b; continue; }
    for (;;) {
      skip();
      const top = open[open.length - 1];
      if (top === undefined) return i < n ? i : undefined;
      const c = text.charCodeAt(i);
      if (c === 0x2c) { i++; wantKey = top === 0x7b; break; }
      if (c !== (top === 0x7b ? 0x7d : 0x5d)) return Math.min(i, n);
      i++;
      open.pop();
    }
  }
}
