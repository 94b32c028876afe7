/**
 * The runtime's error classes as catalogue messages (TC70xx). Imported by the commands that run
 * plans, so commands that only compile never load the runtime.
 */
import { d } from "../compiler/diagnostics/index.js";
import { ExprError } from "../plan/expr.js";
import { PlanError } from "../plan/schema.js";
import { BackendError } from "../runtime/backends/backend.js";
import { PlanShapeError } from "../runtime/engine.js";
import { EnvConfigError, EnvError } from "../runtime/envs/env.js";
import { ExtensionError } from "../runtime/extensions.js";
import { UnsupportedTermError } from "../runtime/nodes/advantage.js";
import { TrajectoryShapeError } from "../runtime/replay.js";
import { SignalError } from "../runtime/signals/layout.js";
import { WandbError } from "../runtime/sinks/wandb.js";
import { registerErrorClass } from "./errors.js";

const BACKEND_HINT = "Check that the server is running and reachable, and that the model spec names it (docs: runtime/backends/openai/README.md).";

registerErrorClass(PlanError, (e) => d.invalidPlan({ file: "the plan", detail: e.message }));
registerErrorClass(ExtensionError, (e) => d.extensionError({ detail: e.message }));
registerErrorClass(ExprError, (e) => (/^TypeScript extension /.test(e.message) ? d.extensionError({ detail: e.message }) : d.runtimeValue({ detail: e.message })));
registerErrorClass(PlanShapeError, (e) => d.planNotRunnable({ detail: e.message, hint: "The plan was not made by this version of tcod, or was edited by hand: compile the .tcod file again." }));
registerErrorClass(UnsupportedTermError, (e) => d.planNotRunnable({ detail: e.message, hint: "Use a loss term this backend supports (docs/RUNTIME.md)." }));
registerErrorClass(TrajectoryShapeError, (e) => d.planNotRunnable({ detail: e.message, hint: "Use rows: \"turn\", or an agent format whose turns can be joined (docs/LANGUAGE.md)." }));
registerErrorClass(SignalError, (e) => d.planNotRunnable({ detail: e.message, hint: "Check the loss terms and their coefficients with `tcod explain`." }));
registerErrorClass(EnvConfigError, (e) => d.environmentError({ detail: e.message, hint: e.hint ?? "Check the env's split, task file and server in the curriculum." }));
registerErrorClass(EnvError, (e) => d.environmentError({ detail: e.message, hint: "The environment failed repeatedly; check its server or bridge, then continue with --resume." }));
registerErrorClass(BackendError, (e) => d.backendError({ detail: e.message, hint: e.hint ?? BACKEND_HINT }));
registerErrorClass(WandbError, (e) => d.metricsSinkError({ detail: e.message, hint: e.hint }));
