/**
 * The composition root: the runtime's registries filled with the backends and environments this
 * build ships, and the process-wide concerns (environment variables, exit and signal handling) wired
 * in here rather than inside a factory. The commands that run plans call `composeRuntime()` before
 * `runPlan`; tests that run plans through the registries call it too. runtime/ itself registers
 * nothing, and no backend imports another.
 */
import { createEmbeddedModels } from "../runtime/backends/embedded/models.js";
import { createRemoteModels } from "../runtime/backends/openai/models.js";
import { registerModels } from "../runtime/backends/registry.js";
import { agentGymFromSpec } from "../runtime/envs/agentgym/index.js";
import { bridgeVocabulary } from "../runtime/envs/bridge/vocabulary.js";
import { registerEnv } from "../runtime/envs/registry.js";
import { scienceWorldFromSpec } from "../runtime/envs/scienceworld/index.js";
import { TexthouseEnv, texthouseVocabulary, type PlaceGrammar, type TexthouseExpert } from "../runtime/envs/texthouse/index.js";
import { textWorldExpressFromSpec } from "../runtime/envs/twx/index.js";
import { onProcessEnd } from "./process-guard.js";

let composed = false;

/** Registers every backend pairing and env kind (once per process). */
export function composeRuntime(): void {
  if (composed) return;
  composed = true;

  // ---- backends: (student kind, teacher kind) → models ----
  registerModels("embedded", "embedded", createEmbeddedModels);
  for (const s of ["worker", "openai"]) {
    for (const t of ["worker", "openai"]) {
      registerModels(s, t, (setup) => createRemoteModels(setup, {
        workerArgs: process.env.TCOD_WORKER_ARGS, trainerUrl: process.env.TCOD_TRAINER_URL, maxBodyMb: process.env.TCOD_MAX_BODY_MB, onProcessEnd,
      }));
    }
  }

  // ---- environments ----
  registerEnv("texthouse", {
    create: (spec) => new TexthouseEnv({
      maxTurns: spec.maxTurns,
      ...(spec.params.expert !== undefined ? { expert: spec.params.expert as TexthouseExpert } : {}),
      ...(spec.params.grammar !== undefined ? { grammar: spec.params.grammar as PlaceGrammar } : {}),
    }),
    vocabulary: () => texthouseVocabulary(),
  });
  // Real environments (runtime/envs/{scienceworld,twx,agentgym}; bridges/ holds their Python side).
  // scienceworld with a `server` goes through an AgentGym sciworld server instead of the stdio bridge.
  registerEnv("scienceworld", {
    create: (spec) => (spec.server ? agentGymFromSpec("sciworld", spec) : scienceWorldFromSpec(spec)),
    vocabulary: () => bridgeVocabulary("scienceworld"),
  });
  registerEnv("textworld_express", { create: (spec) => textWorldExpressFromSpec(spec), vocabulary: () => bridgeVocabulary("textworld_express") });
  registerEnv("alfworld", { create: (spec) => agentGymFromSpec("alfworld", spec) });
  registerEnv("webshop", { create: (spec) => agentGymFromSpec("webshop", spec) });
  registerEnv("sciworld", { create: (spec) => agentGymFromSpec("sciworld", spec) });
  registerEnv("textcraft", { create: (spec) => agentGymFromSpec("textcraft", spec) });
}
