/**
 * ScienceWorld through the Python bridge (bridges/tcod_bridges/scienceworld_bridge.py): one bridge
 * process and one JVM per instance. Task ids are "<task name>:<variation>"; splits are the package's
 * train/dev/test variation getters; per-step reward sums to best_score / 100 (TCOD), `score` is the
 * raw 0–100 score, `won` is score = 100; gold paths back expertPath() and optimalActions().
 *
 * EnvSpec params: tasks (list of task names or ids, empty = all 30), simplification (the package's
 * simplificationStr; default "easy", the official TCOD/Trinity ScienceWorld workflows' setting,
 * plan/env-semantics.ts; "" = none), step_limit (envStepLimit, default max(100, 2·maxTurns)), python
 * (interpreter), start_timeout_s / reset_timeout_s / step_timeout_s.
 */
import type { EnvSpec } from "../../../plan/schema.js";
import { EnvConfigError } from "../env.js";
import { semanticsOf } from "../../../plan/env-semantics.js";
import { BridgeEnv, type BridgeTimeouts, type FixedTasks } from "../bridge/adapter.js";
import { readTaskFile } from "../taskfile/index.js";
import { bridgeEnv, bridgesDir, pythonCommand } from "../bridge/locate.js";
import { stepLimitFromParams, timeoutsFromParams } from "../bridge/params.js";

export const SCIENCEWORLD_INSTALL_HINT =
  "pip install scienceworld==1.2.3 (Java >= 11 must be on PATH); bridges/ci-install.sh does both";

export interface ScienceWorldOptions {
  tasks?: string[];
  simplification?: string;
  stepLimit?: number;
  python?: string;
  timeouts?: BridgeTimeouts;
  /** Tasks from a Trinity task file (see scienceWorldTaskFile). */
  fixed?: FixedTasks;
}

/**
 * TCOD's ScienceWorld taskset rows (get_sciworld_data.py): {"task_desc": "{\"task_name\": …,
 * \"var_num\": …, \"jar_path\": …}", "targe": ""}, optionally with "actions". Ids become
 * "<task_name>:<var_num>"; the file is the split (no package split check).
 */
export function scienceWorldTaskFile(path: string, split: string): FixedTasks {
  const kind = "scienceworld";
  const tasks = readTaskFile(path, kind, split).map((row) => {
    let desc: unknown;
    try {
      desc = JSON.parse(row.taskDesc ?? "");
    } catch {
      desc = undefined;
    }
    const d = desc as { task_name?: unknown; var_num?: unknown } | undefined;
    if (!d || typeof d.task_name !== "string" || !Number.isInteger(d.var_num)) {
      throw new EnvConfigError(`scienceworld: task file ${path}:${row.line}: task_desc must be JSON with task_name and var_num`, kind,
        "TCOD's get_sciworld_data.py writes {\"task_desc\": json.dumps({task_name, var_num, jar_path})}");
    }
    return { id: `${d.task_name}:${d.var_num as number}`, split, ...(row.actions ? { actions: row.actions } : {}) };
  });
  return { path, split, tasks };
}

export function createScienceWorld(opts: ScienceWorldOptions = {}): BridgeEnv {
  const kind = "scienceworld";
  return new BridgeEnv(kind, {
    kind, command: pythonCommand(opts.python), args: ["-m", "tcod_bridges.scienceworld_bridge"], cwd: bridgesDir(),
    env: bridgeEnv({ TCOD_SW_STEP_LIMIT: String(opts.stepLimit ?? 100), TCOD_SW_SIMPLIFICATION: opts.simplification ?? "" }),
    installHint: SCIENCEWORLD_INSTALL_HINT,
  }, opts.timeouts, { tasks: opts.tasks ?? [] }, opts.fixed);
}

function stringList(kind: string, key: string, v: unknown): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
    throw new EnvConfigError(`${kind}: param ${key} must be a list of strings, got ${JSON.stringify(v)}`, kind);
  }
  return v as string[];
}

function optionalString(kind: string, key: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new EnvConfigError(`${kind}: param ${key} must be a string, got ${JSON.stringify(v)}`, kind);
  return v;
}

export function scienceWorldFromSpec(spec: EnvSpec): BridgeEnv {
  const p = spec.params;
  const stepLimit = stepLimitFromParams("scienceworld", p, Math.max(100, 2 * spec.maxTurns));
  const python = optionalString("scienceworld", "python", p.python);
  const simplification = optionalString("scienceworld", "simplification", p.simplification);
  return createScienceWorld({
    tasks: stringList("scienceworld", "tasks", p.tasks),
    stepLimit,
    timeouts: timeoutsFromParams("scienceworld", p),
    ...(spec.taskFile ? { fixed: scienceWorldTaskFile(spec.taskFile, spec.split) } : {}),
    simplification: simplification ?? semanticsOf("scienceworld").simplification,
    ...(python !== undefined ? { python } : {}),
  });
}

export { optionalString, stringList };
