/**
 * A sweep point's stderr.log (bin/point-log.ts): the point's stderr itself, under a header per
 * attempt, appended across attempts; its warnings and notes counted once each; a log that cannot be written
 * says why instead of throwing.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { countLog, describeCounts, openPointLog, pointLogBlocked } from "../../bin/point-log.js";

const tmp = () => mkdtempSync(join(tmpdir(), "tcod-point-log-"));

describe("a sweep point's stderr.log", () => {
  it("the log's descriptor is the point's stderr: what is written is on disk at once; attempts append, each under its header", () => {
    const path = join(tmp(), "stderr.log");
    const first = openPointLog(path, "T1 start p");
    // The point writes through the descriptor (its stderr), not through the sweep.
    writeSync(first.fd!, "tcod run: note: a stale lock was taken over\n");
    expect(readFileSync(path, "utf8")).toBe("--- T1 start p ---\ntcod run: note: a stale lock was taken over\n");
    writeSync(first.fd!, "half a line");
    expect(first.written(8000)).toBe("tcod run: note: a stale lock was taken over\nhalf a line");
    expect(first.written(11)).toBe("half a line");
    first.close("T2 interrupted, exit 130, 1 s");
    const second = openPointLog(path, "T3 resume p");
    expect(second.written(8000)).toBe("");
    writeSync(second.fd!, "tcod run: warning TC4501: b2f on webshop: none of the 2 tasks…\n");
    second.close("T4 completed, exit 0, 2 s");
    expect(readFileSync(path, "utf8")).toBe([
      "--- T1 start p ---", "tcod run: note: a stale lock was taken over", "half a line", "--- T2 interrupted, exit 130, 1 s ---",
      "--- T3 resume p ---", "tcod run: warning TC4501: b2f on webshop: none of the 2 tasks…", "--- T4 completed, exit 0, 2 s ---", "",
    ].join("\n"));
    expect(first.failed).toBeUndefined();
    expect(second.fd).toBeUndefined();
  });

  it("an attempt whose sweep was killed (no footer, a line cut off) is followed by the next one's header on a line of its own", () => {
    const path = join(tmp(), "stderr.log");
    writeFileSync(path, "--- T1 start p ---\ntcod run: note: the sweep that started this point is gone: finishing");
    openPointLog(path, "T2 resume p").close();
    expect(readFileSync(path, "utf8")).toBe("--- T1 start p ---\ntcod run: note: the sweep that started this point is gone: finishing\n--- T2 resume p ---\n");
  });

  it("counts warnings and notes, each different line once; headers, hints, errors and other output are neither", () => {
    const path = join(tmp(), "stderr.log");
    writeFileSync(path, [
      "--- T start warning@k=1 ---",
      "tcod run: warning TC4501: b2f on webshop: no expert actions",
      "tcod run: note: rows kept aside",
      "--- T resume warning@k=1 ---",
      "tcod run: warning TC4501: b2f on webshop: no expert actions",
      "tcod run: warning: run.json is not JSON",
      "x.tcod:3:5 warning TC5008: identical points",
      "metrics.jsonl:7: note: the last line is not a whole row yet",
      "  hint: a note about nothing",
      "out/plan.json error TC7014: cannot resume",
      "worker.py:12: UserWarning: something",
      "note: a bare note",
    ].join("\n"));
    expect(countLog(path)).toEqual({ warnings: 3, notes: 3 });
    expect(describeCounts(countLog(path))).toBe("3 warnings and 3 notes");
    expect(describeCounts({ warnings: 1, notes: 0 })).toBe("1 warning");
    expect(describeCounts({ warnings: 0, notes: 0 })).toBeUndefined();
    expect(countLog(join(tmp(), "none.log"))).toBeUndefined();
  });

  it("a log that cannot be opened is not an exception: `failed` says why; a folder in its place is blocked", () => {
    const d = tmp();
    mkdirSync(join(d, "stderr.log"));
    expect(pointLogBlocked(join(d, "stderr.log"))).toBe("it is a folder, not a file");
    expect(pointLogBlocked(join(d, "other.log"))).toBeUndefined();
    const log = openPointLog(join(d, "stderr.log"), "T start p");
    // No descriptor: the sweep pipes the point's stderr and shows it.
    expect(log.fd).toBeUndefined();
    expect(log.written(8000)).toBe("");
    log.close("T done");
    expect(log.failed).toMatch(/folder/);
    expect(countLog(join(d, "stderr.log"))).toBeUndefined();
  });
});
