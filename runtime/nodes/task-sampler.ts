/**
 * TaskSampler: `tasksPerStep` tasks per step, each rolled out `rolloutsPerTask` times.
 * Tasks are drawn epoch by epoch from a seeded permutation of the split (every task once per epoch,
 * as a shuffled dataloader), indexed by the step: stateless, so a resumed run draws the same tasks.
 */
import type { NodeOf } from "../../plan/schema.js";
import type { TaskRef } from "../envs/env.js";
import { mixSeed, permutation, SEED_PURPOSE } from "../seeds.js";
import type { RunContext } from "./context.js";
import type { Executor } from "./executor.js";

export interface SampledTask { task: TaskRef; group: number }

export const taskSamplerExecutor: Executor<"TaskSampler"> = {
  async run(node, _inputs, ctx) {
    return { tasks: { env: node.params.env, rolloutsPerTask: node.params.rolloutsPerTask, tasks: await runTaskSampler(node, ctx, ctx.step) } };
  },
};

export async function runTaskSampler(node: NodeOf<"TaskSampler">, ctx: RunContext, step: number): Promise<SampledTask[]> {
  const spec = ctx.plan.resources.envs[node.params.env];
  const pool = ctx.envs.get(node.params.env);
  if (!spec || !pool) throw new Error(`TaskSampler: env ${node.params.env} is not in the plan's resources`);
  const all = await pool.tasks(spec.split);
  if (all.length === 0) throw new Error(`env ${node.params.env} (${spec.kind}) has no tasks in split "${spec.split}"`);
  const n = node.params.tasksPerStep;
  const out: SampledTask[] = [];
  let cachedEpoch = -1;
  let perm: number[] = [];
  for (let j = 0; j < n; j++) {
    const i = (step - 1) * n + j;
    const epoch = Math.floor(i / all.length);
    if (epoch !== cachedEpoch) {
      perm = permutation(all.length, mixSeed(ctx.seed, node.params.seed, SEED_PURPOSE.tasks, epoch));
      cachedEpoch = epoch;
    }
    out.push({ task: all[perm[i % all.length]!]!, group: j });
  }
  return out;
}
