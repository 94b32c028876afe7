/**
 * EXPERT_POLICY_KINDS (plan/env-semantics.ts) lets `tcod check` refuse DART demonstrations
 * (`sft(noise: p)`, TC4503) on envs whose expert cannot act from any state. It must name exactly the
 * env kinds whose adapters implement EnvAdapter.expertAction, so check and run agree.
 */
import { describe, expect, it } from "vitest";
import { composeRuntime } from "../../bin/compose.js";
import { EXPERT_POLICY_KINDS } from "../../plan/env-semantics.js";
import { createEnv, envKinds } from "../../runtime/envs/registry.js";

describe("EXPERT_POLICY_KINDS", () => {
  it("names exactly the env kinds whose adapters have expertAction", () => {
    composeRuntime();
    const kinds = envKinds();
    expect(kinds.length).toBeGreaterThan(4);
    const withPolicy = kinds.filter((kind) => {
      // Adapters start their process or connection lazily, so creating one runs nothing.
      const env = createEnv({ kind, split: "train", maxTurns: 30, pool: 1, params: {}, server: "http://127.0.0.1:9" }, { seed: 1, instance: 0 });
      return typeof env.expertAction === "function";
    });
    expect(withPolicy).toEqual([...EXPERT_POLICY_KINDS].sort());
  });
});
