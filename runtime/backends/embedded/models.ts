/** The embedded student and oracle teacher of a run (the "embedded/embedded" pairing; bin/compose.ts registers it). */
import { EMBEDDED_DEFAULTS } from "../../../plan/defaults.js";
import { BackendError } from "../backend.js";
import type { Models, ModelsSetup } from "../registry.js";
import { createEmbedded } from "./index.js";

export async function createEmbeddedModels(s: ModelsSetup): Promise<Models> {
  if (s.student.backend.kind !== "embedded" || s.teacher.backend.kind !== "embedded") {
    throw new BackendError("the embedded pairing was asked for a served model", "embedded", false);
  }
  if (!s.vocabulary) {
    throw new BackendError("the embedded backend needs an env with a closed vocabulary (e.g. texthouse)", "embedded", false,
      "use an env that declares its vocabulary, or serve the models with openai(…)/worker(…)");
  }
  const { student, teacher, tokenizer } = createEmbedded(
    { kind: "embedded", features: s.student.backend.features, smoothing: s.teacher.backend.smoothing },
    {
      vocabulary: s.vocabulary, agent: s.agent, seed: s.seed,
      student: { candidateLogOdds: s.student.backend.candidateLogOdds ?? EMBEDDED_DEFAULTS.candidateLogOdds },
    },
  );
  return { student, teacher, tokenizer };
}
