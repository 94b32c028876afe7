/**
 * Warnings about how a run will play, found once its envs are open and before its first step
 * (RunOptions.onWarning). Each names the catalogue code of the matching check-time diagnostic.
 *
 * TC4501: a b2f prefix on an env whose official data has no expert actions (plan/env-semantics.ts
 * `expertActions: "none"`, WebShop). `tcod check` can only say "unless the rows carry actions";
 * here the training split's tasks are read, and the warning is given when none of them has any:
 * every episode then replays nothing and plays as plain OPD, in `tcod run` and on Trinity alike.
 */
import { semanticsOf } from "../plan/env-semantics.js";
import { nodeOf, type Plan } from "../plan/schema.js";
import type { EnvPool } from "./env-pool.js";

export async function preflightWarnings(plan: Plan, envs: ReadonlyMap<string, EnvPool>): Promise<string[]> {
  const out: string[] = [];
  const planner = nodeOf(plan, "EpisodePlanner"), sampler = nodeOf(plan, "TaskSampler");
  const spec = sampler ? plan.resources.envs[sampler.params.env] : undefined;
  const pool = sampler ? envs.get(sampler.params.env) : undefined;
  if (planner?.params.prefix !== undefined && spec && pool && semanticsOf(spec.kind).expertActions === "none") {
    const tasks = await pool.tasks(spec.split);
    if (!tasks.some((t) => (t.actions?.length ?? 0) > 0)) {
      out.push(`TC4501: b2f on ${spec.kind}: none of the ${tasks.length} tasks of split "${spec.split}"${spec.taskFile ? ` (${spec.taskFile})` : ""} has expert "actions", so no prefix is replayed and every episode plays as plain OPD`);
    }
  }
  return out;
}
