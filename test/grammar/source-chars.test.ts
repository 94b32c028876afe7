/**
 * `wrongEncoding` (grammar/source-chars.ts): UTF-16 and UTF-32 text read as UTF-8, wherever it starts,
 * told from UTF-8 text without false positives.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { wrongEncoding } from "../../grammar/source-chars.js";

const YAML = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");
const TCOD = readFileSync("examples/alfworld/tcod-f2b.tcod", "utf8");

/** `text` in an encoding, as readFileSync(p, "utf8") gives it back. */
function asRead(text: string, encoding: "utf8" | "utf16le" | "utf16be" | "utf32le" | "utf32be"): string {
  if (encoding === "utf8" || encoding === "utf16le") return Buffer.from(text, encoding).toString("utf8");
  if (encoding === "utf16be") return Buffer.from(text, "utf16le").swap16().toString("utf8");
  const cps = [...text].map((c) => c.codePointAt(0)!);
  const b = Buffer.alloc(4 * cps.length);
  cps.forEach((cp, i) => (encoding === "utf32le" ? b.writeUInt32LE(cp, 4 * i) : b.writeUInt32BE(cp, 4 * i)));
  return b.toString("utf8");
}

describe("wrongEncoding", () => {
  it("names a whole UTF-16 or UTF-32 file and its byte order, with or without a byte-order mark, at offset 0", () => {
    for (const text of [YAML, TCOD]) {
      for (const [enc, name] of [["utf16le", "UTF-16 (little-endian"], ["utf16be", "UTF-16 (big-endian"], ["utf32le", "UTF-32 (little-endian"], ["utf32be", "UTF-32 (big-endian"]] as const) {
        expect(wrongEncoding(asRead(text, enc)), enc).toEqual({ encoding: `${name})`, offset: 0 });
        expect(wrongEncoding(asRead("\uFEFF" + text, enc)), enc).toEqual({ encoding: `${name}, with a byte-order mark)`, offset: 0 });
      }
    }
  });

  it("a whole file whose first characters are not ASCII (were: missed, a flood of per-character errors)", () => {
    // 学 is 66 5B in UTF-16LE: "f[", no NUL. The ASCII after them tells, and the end of the file (a
    // NUL after "\n" in little-endian) the byte order.
    const starts = ["学生: 1\n", "学\n生\n"];
    for (const start of starts) {
      const text = start + YAML;
      expect(wrongEncoding(asRead(text, "utf16le")), start).toEqual({ encoding: "UTF-16 (little-endian)", offset: 0 });
      expect(wrongEncoding(asRead(text, "utf16be")), start).toEqual({ encoding: "UTF-16 (big-endian)", offset: 0 });
      expect(wrongEncoding(asRead("\uFEFF" + text, "utf16le")), start).toEqual({ encoding: "UTF-16 (little-endian, with a byte-order mark)", offset: 0 });
      expect(wrongEncoding(asRead(text, "utf32le")), start).toEqual({ encoding: "UTF-32 (little-endian)", offset: 0 });
      expect(wrongEncoding(asRead("\uFEFF" + text, "utf32le")), start).toEqual({ encoding: "UTF-32 (little-endian, with a byte-order mark)", offset: 0 });
      expect(wrongEncoding(asRead(text, "utf32be")), start).toEqual({ encoding: "UTF-32 (big-endian)", offset: 0 });
    }
    // 胃 (U+80C3) is C3 80 in UTF-16LE, valid UTF-8 for "À". (In UTF-16BE, 80 C3 reads as two U+FFFD,
    // as a byte-order mark does: taken for one.)
    expect(wrongEncoding(asRead("\u80C3: 1\n" + YAML, "utf16le"))).toEqual({ encoding: "UTF-16 (little-endian)", offset: 0 });
    // A file that does not end in ASCII: its byte order is not said.
    expect(wrongEncoding(asRead("学生: 1\nmodel: x 学", "utf16le"))).toEqual({ encoding: "UTF-16", offset: 0 });
  });

  it("UTF-16 or UTF-32 after UTF-8 text (PowerShell's `>>` onto a UTF-8 file; two files concatenated) is named from where it starts (was: missed)", () => {
    const utf8 = "a: 1\n# café 学生\nb: 2\n";
    const at = utf8.length; // in UTF-16 units, as the text read back counts them
    const appended = (tail: string) => utf8 + tail;
    expect(wrongEncoding(appended(asRead("c: 3\nd: 4\n", "utf16le")))).toEqual({ encoding: "UTF-16 from here on (UTF-8 before it)", offset: at });
    expect(wrongEncoding(appended(asRead("\uFEFFc: 3\nd: 4\n", "utf16le")))).toEqual({ encoding: "UTF-16 (little-endian, with a byte-order mark) from here on (UTF-8 before it)", offset: at });
    expect(wrongEncoding(appended(asRead("\uFEFFc: 3\nd: 4\n", "utf16be")))).toEqual({ encoding: "UTF-16 (big-endian, with a byte-order mark) from here on (UTF-8 before it)", offset: at });
    expect(wrongEncoding(appended(asRead("c: 3\nd: 4\n", "utf32le")))).toEqual({ encoding: "UTF-32 from here on (UTF-8 before it)", offset: at });
    // Big-endian without a mark is reported at the UTF-8 line break before it (its first NUL's partner is ambiguous).
    expect(wrongEncoding(appended(asRead("c: 3\nd: 4\n", "utf16be")))).toEqual({ encoding: "UTF-16 from here on (UTF-8 before it)", offset: at - 1 });
    // Non-ASCII first in the appended part: from its first run of ASCII.
    const cjk = wrongEncoding(appended(asRead("学生: 3\nd: 4\n", "utf16le")))!;
    expect(cjk.encoding).toBe("UTF-16 from here on (UTF-8 before it)");
    expect(cjk.offset).toBeGreaterThan(at);
    expect(cjk.offset).toBeLessThan(at + 8);
  });

  it("no false positive: UTF-8 text, a UTF-8 byte-order mark, and stray NULs (TC1003 each) are not UTF-16", () => {
    for (const text of [YAML, TCOD, "\uFEFF" + YAML, "# 学生 🎓 é \u0085 \u2028\n" + TCOD, "", "a", "学"]) expect(wrongEncoding(asRead(text, "utf8"))).toBeUndefined();
    for (const text of [
      "model: x\u0000\n", "a: 1\nb: \u0000\u0000\u0000\n", "a: 1\nb: x\u0000y\u0000z\u0000\n", // three ASCII written so: not four
      "a: 1\n\u0000\u0000\u0000x\u0000\u0000\u0000y\u0000\u0000\u0000\n", "a: 1\n" + "\u0000".repeat(1000), "a: 1\nb: 2\u0000",
    ]) expect(wrongEncoding(text), JSON.stringify(text)).toBeUndefined();
  });

  it("tells a long UTF-8 file at one search for a NUL", () => {
    const big = YAML.repeat(2000); // ~7 MB
    const t0 = performance.now();
    expect(wrongEncoding(big)).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(200);
  });
});
