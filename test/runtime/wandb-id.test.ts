/**
 * RUN_DIR/wandb-id, which a user may edit to continue another W&B run: wandb makes the id part of
 * folder names under RUN_DIR/wandb/, so an id that is no W&B run id (a path, `..`, a NUL, nothing) is
 * TC7011 naming the file, before the sink process starts and before anything is written.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WandbError, WandbSink } from "../../runtime/sinks/wandb.js";

/** Opens a sink on a run folder holding `id` in wandb-id, with a Python that cannot start: what fails first. */
async function openWith(id: string): Promise<unknown> {
  const runDir = mkdtempSync(join(tmpdir(), "tcod-wandb-id-"));
  writeFileSync(join(runDir, "wandb-id"), id);
  try {
    await WandbSink.open({ project: "p", runDir, name: "n", config: {}, python: "/nonexistent/python" });
    return undefined;
  } catch (e) {
    expect(readdirSync(runDir)).toEqual(["wandb-id"]);
    expect(readFileSync(join(runDir, "wandb-id"), "utf8")).toBe(id);
    return e;
  }
}

describe("RUN_DIR/wandb-id", () => {
  it.each(["../../elsewhere", "a/b", "/tmp/x", "..", "a..b", "a\u0000b", "", "\n", "x y", "-".repeat(129), "a\\b"])("%j: TC7011 naming the file (was: passed to wandb as the run id)", async (id) => {
    const e = await openWith(id);
    expect(e).toBeInstanceOf(WandbError);
    expect((e as WandbError).code).toBe("TC7011");
    expect((e as WandbError).message).toContain("not a W&B run id");
    expect((e as WandbError).where?.file).toMatch(/wandb-id$/);
  });

  it.each(["0123456789ab", "abc123xy", "run_2-b.c"])("%j: taken (the sink then fails only for want of Python)", async (id) => {
    const e = await openWith(`${id}\n`);
    expect((e as Error).message).toContain("W&B logging did not start");
  });
});
