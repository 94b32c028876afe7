/**
 * TextWorldExpress through the Python bridge (bridges/tcod_bridges/twx_bridge.py): one process and one
 * JVM per instance, one game per env. Task ids are "<game>:<seed>", a split's seeds are the package's
 * getValidSeedsTrain/Dev/Test(); gold paths (without the initial "look around") back expertPath() and
 * optimalActions(); reward is the package's per-step reward (sums to its 0..1 score), won = tasksuccess.
 *
 * EnvSpec params: game (cookingworld | twc | coin | mapreader | arithmetic | sorting | simonsays |
 * peckingorder), game_params ("numLocations=3,includeDoors=1"), step_limit, python,
 * start_timeout_s / reset_timeout_s / step_timeout_s.
 */
import type { EnvSpec } from "../../../plan/schema.js";
import { EnvConfigError } from "../env.js";
import { BridgeEnv, type BridgeTimeouts } from "../bridge/adapter.js";
import { bridgeEnv, bridgesDir, pythonCommand } from "../bridge/locate.js";
import { stepLimitFromParams, timeoutsFromParams } from "../bridge/params.js";
import { optionalString } from "../scienceworld/index.js";

export const TWX_INSTALL_HINT =
  "pip install textworld-express==1.1.0 (Java >= 11 must be on PATH); bridges/ci-install.sh does both";

export interface TwxOptions {
  game?: string;
  gameParams?: string;
  stepLimit?: number;
  python?: string;
  timeouts?: BridgeTimeouts;
}

export function createTextWorldExpress(opts: TwxOptions = {}): BridgeEnv {
  const kind = "textworld_express";
  return new BridgeEnv(kind, {
    kind, command: pythonCommand(opts.python), cwd: bridgesDir(), env: bridgeEnv(), installHint: TWX_INSTALL_HINT,
    args: ["-m", "tcod_bridges.twx_bridge", "--game", opts.game ?? "cookingworld", "--params", opts.gameParams ?? "",
      "--step-limit", String(opts.stepLimit ?? 100)],
  }, opts.timeouts);
}

export function textWorldExpressFromSpec(spec: EnvSpec): BridgeEnv {
  const kind = "textworld_express";
  const p = spec.params;
  const stepLimit = stepLimitFromParams(kind, p, Math.max(100, 2 * spec.maxTurns));
  const game = optionalString(kind, "game", p.game);
  const gameParams = optionalString(kind, "game_params", p.game_params);
  const python = optionalString(kind, "python", p.python);
  return createTextWorldExpress({
    stepLimit,
    timeouts: timeoutsFromParams(kind, p),
    ...(game !== undefined ? { game } : {}),
    ...(gameParams !== undefined ? { gameParams } : {}),
    ...(python !== undefined ? { python } : {}),
  });
}
