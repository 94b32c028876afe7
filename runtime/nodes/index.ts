/**
 * The executor of every node kind, registered by kind: the engine runs a node by looking its kind
 * up here (one contract: nodes/executor.ts). A new node kind adds its ports to plan/nodes.ts, its
 * params to plan/schema.ts, and its executor here.
 */
import type { NodeKind } from "../../plan/schema.js";
import type { Executor } from "./executor.js";
import { taskSamplerExecutor } from "./task-sampler.js";
import { episodePlannerExecutor } from "./episode-planner.js";
import { depthRuleExecutor, probeExecutor } from "./probe.js";
import { rolloutExecutor } from "./rollout.js";
import { teacherScoreExecutor } from "./teacher-score.js";
import { demonstrationsExecutor } from "./demonstrations.js";
import { turnStatsExecutor } from "./turn-stats.js";
import { turnWeightsExecutor } from "./turn-weights.js";
import { groupAdvantageExecutor } from "./group-advantage.js";
import { advantageExecutor } from "./advantage.js";
import { checkpointExecutor, updateExecutor, weightSyncExecutor } from "./update.js";
import { evaluateExecutor } from "./evaluate.js";

export const EXECUTORS: { [K in NodeKind]: Executor<K> } = {
  TaskSampler: taskSamplerExecutor,
  EpisodePlanner: episodePlannerExecutor,
  Probe: probeExecutor,
  Rollout: rolloutExecutor,
  TeacherScore: teacherScoreExecutor,
  DepthRule: depthRuleExecutor,
  Demonstrations: demonstrationsExecutor,
  TurnStats: turnStatsExecutor,
  TurnWeights: turnWeightsExecutor,
  GroupAdvantage: groupAdvantageExecutor,
  Advantage: advantageExecutor,
  Update: updateExecutor,
  WeightSync: weightSyncExecutor,
  Evaluate: evaluateExecutor,
  Checkpoint: checkpointExecutor,
};
