/**
 * Where the Python bridges live and which Python runs them. `TCOD_BRIDGES_DIR` and `TCOD_PYTHON`
 * override; otherwise the folder `bridges/` is found by walking up from this module (it sits beside
 * `runtime/` in the source tree and beside `dist/` in the package).
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageFile } from "../../../plan/package-files.js";
import { EnvConfigError } from "../env.js";

export function bridgesDir(): string {
  const fromEnv = process.env.TCOD_BRIDGES_DIR;
  if (fromEnv) {
    // Checked here: the bridge runs with this folder as its cwd, and a missing cwd makes spawn say the
    // interpreter was not found.
    if (!existsSync(join(fromEnv, "tcod_bridges", "__init__.py"))) {
      throw new EnvConfigError(`TCOD_BRIDGES_DIR=${fromEnv} has no tcod_bridges/__init__.py`, "bridge",
        "set TCOD_BRIDGES_DIR to the bridges/ folder of the tcod source tree, or unset it to use the bridges tcod ships");
    }
    return fromEnv;
  }
  const init = packageFile(join("bridges", "tcod_bridges", "__init__.py"));
  if (init) return dirname(dirname(init));
  throw new EnvConfigError("cannot find the bridges/ folder (tcod_bridges) above the tcod install", "bridge",
    "set TCOD_BRIDGES_DIR to the bridges/ folder of the tcod source tree");
}

export function pythonCommand(override?: string): string {
  return override || process.env.TCOD_PYTHON || "python3";
}

/** The environment of a bridge process: PYTHONPATH gains the bridges folder. */
export function bridgeEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const dir = bridgesDir();
  const path = process.env.PYTHONPATH ? `${dir}:${process.env.PYTHONPATH}` : dir;
  return { ...process.env, PYTHONPATH: path, PYTHONUNBUFFERED: "1", ...extra };
}
