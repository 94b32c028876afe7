/** The built-in texthouse environment (ALFWorld-like); see README.md in this folder. */
export { TexthouseEnv, TEXTHOUSE_EXPERTS, type TexthouseEnvOptions, type TexthouseExpert } from "./adapter.js";
export {
  ObservableExpert, decide as decideObservable, decideFromHistory, initialBelief, observe as observeBelief, parseGoal,
  type ExpertBelief, type ExpertDecision,
} from "./observable-expert.js";
export {
  TexthouseWorld, TEXTHOUSE_MAX_TURNS, NOTHING_HAPPENS, normalizeCommand,
  type WorldOptions, type WorldReset, type WorldStep,
} from "./world.js";
export { texthouseVocabulary, texthouseWords } from "./vocabulary.js";
export {
  SPLITS, SPLIT_SIZES, HARD_MIN_PLAN_LENGTH, generateTask, parseTaskId, taskId, type Split,
} from "./generate.js";
export {
  TASK_TYPES, HELD_OUT_COMBOS, HELD_OUT_TEMPLATES, comboKey, type Combo, type TaskType,
} from "./catalog.js";
export { goalSentence, type GoalSpec, type WorldSpec } from "./model.js";
export type { PlaceGrammar } from "./rules.js";
