/**
 * A run folder the machine refuses to write (here the file-size limit, `ulimit -f`, which makes a
 * write fail with EFBIG as a full disk does with ENOSPC): a coded error (TC7015, exit 1) naming the
 * file and the cause, no stack trace; the partial checkpoint.tmp-PID/ is removed and the previous
 * checkpoint stays valid, so --resume continues once the limit is lifted.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");
const SRC = "examples/texthouse/tcod-f2b.tcod";
const SMALL = ["--set", "steps=3", "--set", "batch=2 tasks × 1 rollout"];
/** `tcod ARGS` under `ulimit -f BLOCKS` (1 KiB blocks in bash). */
const limited = (blocks: number, args: string[]) =>
  spawnSync("bash", ["-c", `ulimit -f ${blocks}; exec "$0" "$@"`, process.execPath, CLI, ...args], { cwd: ROOT, encoding: "utf8" });
const tcod = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: "utf8" });

describe.skipIf(process.platform === "win32")("a run folder that cannot be written", () => {
  it("EFBIG on a checkpoint: TC7015 naming the file and the cause, no temporary folder left, the last checkpoint kept", () => {
    const out = join(mkdtempSync(join(tmpdir(), "tcod-wfail-")), "run");
    expect(tcod(["run", SRC, ...SMALL, "--out", out, "-q"]).status).toBe(0);
    const before = readFileSync(join(out, "checkpoint", "state.json"), "utf8");

    const r = limited(150, ["run", "--resume", out, "-q"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("error TC7015: cannot write");
    expect(r.stderr).toContain("the file exceeds the process's file-size limit (ulimit -f) (EFBIG)");
    expect(r.stderr).toContain("hint:");
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(readdirSync(out).filter((f) => f.startsWith("checkpoint.tmp-") || f === "run.lock")).toEqual([]);
    expect(readFileSync(join(out, "checkpoint", "state.json"), "utf8")).toBe(before);
    expect(tcod(["run", "--resume", out, "-q"]).status).toBe(0);
  }, 60_000);

  it("a folder where the run writes report.html: TC7015 naming it (EISDIR; was an internal error), the checkpoint kept", () => {
    const out = join(mkdtempSync(join(tmpdir(), "tcod-wfail-")), "run");
    expect(tcod(["run", SRC, ...SMALL, "--out", out, "-q"]).status).toBe(0);
    rmSync(join(out, "report.html"));
    mkdirSync(join(out, "report.html"));
    const r = tcod(["run", "--resume", out, "-q"]);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${join(out, "report.html")} error TC7015: cannot write ${join(out, "report.html")}: a folder is in the file's place (EISDIR)`);
    expect(r.stderr).toContain("hint: Move that folder out of the way, then continue the run");
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    rmSync(join(out, "report.html"), { recursive: true });
    expect(tcod(["run", "--resume", out, "-q"]).status).toBe(0);
  }, 60_000);

  it("EFBIG on a new run's first checkpoint: TC7015, exit 1, nothing half-written left", () => {
    const out = join(mkdtempSync(join(tmpdir(), "tcod-wfail-")), "run");
    const r = limited(150, ["run", SRC, ...SMALL, "--out", out, "-q"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("TC7015");
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(existsSync(out)).toBe(true);
    expect(readdirSync(out).filter((f) => f.startsWith("checkpoint.tmp-") || f === "run.lock")).toEqual([]);
  }, 60_000);
});
