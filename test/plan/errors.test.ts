/**
 * One base class for user errors: every kind the CLI reports as a user error extends UserError,
 * carries a code of USER_ERROR_CODES, and renders as `FILE:LINE:COL error CODE: message` + hint.
 */
import { describe, expect, it } from "vitest";
import { formatUserError, USER_ERROR_CODES, UsageError, UserError } from "../../plan/errors.js";
import { ExprError } from "../../plan/expr.js";
import { PlanError, parsePlan } from "../../plan/schema.js";
import { BackendError } from "../../runtime/backends/backend.js";
import { PlanShapeError } from "../../runtime/engine.js";
import { EnvConfigError } from "../../runtime/envs/env.js";
import { UnsupportedTermError } from "../../runtime/nodes/advantage.js";
import { TrajectoryShapeError } from "../../runtime/replay.js";
import { SignalError } from "../../runtime/signals/layout.js";
import { ExtensionError } from "../../runtime/extensions.js";
import { WandbError } from "../../runtime/sinks/wandb.js";
import { TrinityExportError } from "../../targets/trinity/export.js";
import { importTrinity, TrinityImportError } from "../../targets/trinity/import.js";

describe("UserError", () => {
  const samples: UserError[] = [
    new PlanError("bad", [{ path: "$.clock.steps", message: "Too small" }], "p.json"),
    new PlanShapeError("Rollout names env x"), new EnvConfigError("no split", "texthouse", "use train"),
    new BackendError("down", "http://x", true, "start it"), new ExprError("no var"), new UnsupportedTermError("topk"),
    new TrajectoryShapeError("empty"), new SignalError("rows"), new UsageError("no file"), new ExtensionError("no bundle"), new WandbError("no wandb", "pip install wandb"),
    new TrinityImportError("c.yaml", [{ path: "algorithm.x", line: 3, column: 5, message: "unknown", hint: "remove it" }]),
    new TrinityExportError([{ construct: "env", message: "no workflow", hint: "use alfworld" }]),
  ];

  it("every user error kind has a code of the table, each code used once", () => {
    const codes = samples.map((e) => e.code);
    for (const c of codes) expect(Object.keys(USER_ERROR_CODES)).toContain(c);
    expect(new Set(codes).size).toBe(codes.length);
    for (const e of samples) expect(e).toBeInstanceOf(UserError);
  });

  it("renders position, code, message and hint", () => {
    expect(formatUserError(samples[0]!)).toBe("p.json error TC7001: Too small (at $.clock.steps)");
    expect(formatUserError(samples[2]!, "tcod run")).toBe("tcod run error TC7003: no split\n  hint: use train");
    expect(formatUserError(samples[11]!)).toBe("c.yaml:3:5 error TC7101: unknown (at algorithm.x)\n  hint: remove it");
  });

  it("a real plan and a real Trinity config fail as user errors", () => {
    expect(() => parsePlan({ schema: "nope" })).toThrow(PlanError);
    try { importTrinity("mode: both\nalgorithm: [", "x.yaml"); } catch (e) { expect(e).toBeInstanceOf(UserError); return; }
    expect.unreachable("import of broken YAML succeeded");
  });
});
