// Reading the JSON files of a bench output folder without a stack trace and without dropping anything
// unsaid: a line that is not JSON (or not the shape the script needs) is left out, with one warning
// per file on stderr naming its first such line and counting them; the counts are kept per file
// (`unread`) so a summary can record them. An unterminated last line that is not JSON (a run killed
// while writing it) is left out with a note. Shared by learn-summary.mjs and summarize.mjs.
import { existsSync, readFileSync } from "node:fs";

/**
 * A reader for script `tool` (its name prefixes every message). `lines(f, check)`: the rows of JSONL
 * file `f` (none when it is missing); `check(row)` says what is wrong with a parsed row ("is not a …"),
 * or nothing. `json(f)`: a whole JSON file, null when missing or not JSON (warned about).
 */
export function jsonReader(tool) {
  const unread = {};
  const lines = (f, check) => {
    if (!existsSync(f)) return [];
    const text = readFileSync(f, "utf8").split("\n");
    const bad = [];
    const out = text.flatMap((l, i) => {
      if (!l) return [];
      let row;
      try { row = JSON.parse(l); } catch {
        if (i === text.length - 1) console.error(`${tool}: note: ${f}:${i + 1}: the last line is cut off (a run killed while writing it); it is left out`);
        else bad.push({ line: i + 1, why: "is not JSON" });
        return [];
      }
      const why = check?.(row);
      if (why) { bad.push({ line: i + 1, why }); return []; }
      return [row];
    });
    if (bad.length) {
      const [first] = bad;
      const all = bad.map((b) => b.line);
      console.error(`${tool}: warning: ${f}:${first.line}: line ${first.line} ${first.why}${bad.length > 1 ? `; ${bad.length} lines in all (${all.slice(0, 10).join(", ")}${all.length > 10 ? ", …" : ""})` : ""}; left out of the summary`);
      unread[f] = bad.length;
    }
    return out;
  };
  const json = (f) => {
    if (!existsSync(f)) return null;
    try { return JSON.parse(readFileSync(f, "utf8")); } catch (e) {
      console.error(`${tool}: warning: ${f}: not JSON (${e.message}); left out of the summary`);
      return null;
    }
  };
  return { lines, json, unread };
}
