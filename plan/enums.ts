/**
 * Every closed set of names a plan can hold, written once. The plan schema (schema.ts) builds its
 * `z.enum`s and discriminated unions from these lists; the compiler (compiler/builtins.ts) checks
 * source arguments against them; the runtime and the Trinity target switch over them. Adding a value
 * here is the first step of adding a feature; the type checker then points at every switch to extend.
 */

/** Terms of a loss (std/loss: opd, grpo, sft, gkd). */
export const LOSS_KINDS = ["opd", "grpo", "sft", "gkd"] as const;
export type LossKind = (typeof LOSS_KINDS)[number];

/** How per-token advantages are averaged into one loss (`opd(aggregate: …)`). */
export const AGGREGATES = ["token_mean", "seq_mean_token_mean", "turn_mean", "progressive"] as const;
export type AggregateKind = (typeof AGGREGATES)[number];

/** KL estimators of the OPD term: the sampled token (k1), the teacher's top-k, or the full vocabulary. */
export const ESTIMATORS = ["k1", "topk", "full"] as const;
export type Estimator = (typeof ESTIMATORS)[number];

/**
 * Where the noise commands of DART demonstrations come from (`sft(noise_from: …)`): a uniformly
 * drawn admissible command, a stale one (offered at an earlier turn, not now: inadmissible), a
 * guess (a command naming what the observation does not show, e.g. `take` of an object the
 * receptacle at hand does not hold: inadmissible, from the env's guessedActions), or the student's
 * own sampled reply (which may be inadmissible).
 */
export const NOISE_SOURCES = ["admissible", "stale", "guess", "student"] as const;
export type NoiseSource = (typeof NOISE_SOURCES)[number];

/** Policy losses of the update (`adam(loss_fn: …)`). */
export const LOSS_FNS = ["ppo", "importance_sampling"] as const;
export type LossFn = (typeof LOSS_FNS)[number];

/** Wire dialects of an OpenAI-compatible server (`openai(dialect: …)`). */
export const DIALECTS = ["vllm", "sglang", "worker"] as const;
export type Dialect = (typeof DIALECTS)[number];

/** Backends a model can be served by (`serve: embedded() | openai(…) | worker(…)`). */
export const BACKEND_KINDS = ["embedded", "openai", "worker"] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** Experience rows: one per turn (Trinity) or one per trajectory with env tokens masked (tinker). */
export const ROW_SHAPES = ["turn", "trajectory"] as const;
export type RowShape = (typeof ROW_SHAPES)[number];

/** Chat memory across turns (`agent_format(memory: …)`). */
export const MEMORY_KINDS = ["accumulate", "window"] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** Action parsers (`agent_format(parser: …)`). */
export const PARSER_KINDS = ["tags", "react", "raw"] as const;
export type ParserKind = (typeof PARSER_KINDS)[number];

/** What happens to a response no action can be parsed from (`agent_format(on_invalid: …)`):
 *  feedback (answer with a fixed text, no env step), pass (send the whole reply), end (stop the
 *  episode), empty (send the empty action "", as the official TCOD workflows' `parse_action` does). */
export const ON_INVALID_KINDS = ["feedback", "pass", "end", "empty"] as const;
export type OnInvalidKind = (typeof ON_INVALID_KINDS)[number];

/** Which action of a reply that names several (`agent_format(action_pick: …)`): the first (the
 *  official TCOD workflows' `parse_action`: the text after the first `<action>`) or the last complete
 *  one (tcod's default: a model may draft an action inside its thinking). runtime/agent-format.ts. */
export const ACTION_PICKS = ["first", "last"] as const;
export type ActionPick = (typeof ACTION_PICKS)[number];

/** TurnOPD adaptive-depth rules (std/turnopd: coverage, divergence). */
export const DEPTH_RULES = ["coverage", "divergence"] as const;
export type DepthRule = (typeof DEPTH_RULES)[number];

/** Placeholders the runtime fills in prompt templates (runtime/agent-format.ts). `admissible_lines`
 *  lists the admissible commands as the official ALFWorld prompt does (one per line, without
 *  `help`); `available_actions` as the official WebShop prompt does (unquoted, one per line).
 *  `action_templates`
 *  and `objects` are ScienceWorld's compact action list (its action templates and the objects in
 *  view); only envs whose semantics say they supply them can fill them (plan/env-semantics.ts). */
export const TEMPLATE_PLACEHOLDERS = ["task", "step", "step_next", "history", "history_length", "observation", "admissible", "admissible_lines", "available_actions", "action_templates", "objects"] as const;
/** The placeholders of the compact action list, which the env must supply. */
export const COMPACT_ACTION_PLACEHOLDERS = ["action_templates", "objects"] as const;
/** Placeholders the runtime fills in one history entry. `observation_compact` is the observation on
 *  one line (its non-blank lines stripped and joined by spaces), as the official WebShop prompt's
 *  history shows it. */
export const HISTORY_ENTRY_PLACEHOLDERS = ["n", "observation", "observation_compact", "action"] as const;
