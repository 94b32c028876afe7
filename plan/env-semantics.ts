/**
 * Episode semantics per environment kind, as data in one place: what the official TCOD workflows do
 * at the edges of an episode, which tcod's runtime (runtime/rollout.ts, the ScienceWorld bridge) and
 * the generated Trinity plugin (targets/trinity/plugin, through its spec.json and
 * tcod_runtime/core.py `check_action`) both read. Each entry defaults to the official workflow's
 * behaviour and names its public source.
 *
 * Sources (public code):
 * - TCOD (kokolerk/TCOD, the official code of the TCOD paper, a Trinity-RFT fork):
 *   trinity/common/workflows/envs/TCOD/{alfworld,webshop,scienceworld}/{OPD,TCOD_f2b,TCOD_b2f}_workflow.py
 *   and utils.py in the same folders.
 * - Trinity-RFT (agentscope-ai/Trinity-RFT), whose env workflows the TCOD ones extend:
 *   trinity/common/workflows/envs/webshop/webshop_workflow.py (`validate_action`),
 *   trinity/common/workflows/envs/sciworld/sciworld_workflow.py (`simplificationStr = "easy"`).
 * - ScienceWorld (allenai/ScienceWorld): scienceworld/scienceworld.py `load(..., simplificationStr)`,
 *   `get_possible_action_templates()`, `get_possible_objects()`.
 */
import { COMPACT_ACTION_PLACEHOLDERS } from "./enums.js";

/** What a training episode scores when the curriculum's turn cap (TCOD-f2b) cuts it before done. */
export type Truncation =
  /** The plan's fixed truncated-episode reward, EpisodePlanner.truncatedReward (ALFWorld, WebShop:
   *  the TCOD workflows leave the reward at 0, the compiler's value). */
  | { kind: "fixed" }
  /** The reward earned so far (ScienceWorld: TCOD_f2b keeps best_score / 100). */
  | { kind: "score" };

/** What the env does with an action that is not among the available ones. */
export type InvalidAction =
  /** Send it to the env as written (ALFWorld answers "Nothing happens."). */
  | { kind: "step" }
  /** WebShop: answer with an error message as the next observation, without stepping the env
   *  (the TCOD WebShop workflows' `validate_action`; `search[q]` needs the search bar and a query,
   *  `click[x]` needs x among the page's clickables, compared lower-cased). A reply with no action
   *  is the empty action there (their `parse_action` returns ""), so it gets the message too. */
  | { kind: "webshop_validate" };

export interface EpisodeSemantics {
  truncation: Truncation;
  invalidAction: InvalidAction;
  /** ScienceWorld's `simplificationStr` ("" = none; "easy" = the official workflows' default). */
  simplification: string;
  /** How the official workflow's prompt shows the available actions: every valid action in a line
   *  (`'a', 'b'`), quoted one per line without `help` (ALFWorld: `{admissible_lines}`), unquoted one
   *  per line (WebShop: `{available_actions}`), or ScienceWorld's compact action templates plus the
   *  objects in view. The env's std/envs default agent follows it (std/agent `alfworld_format`,
   *  `webshop_format`, `scienceworld_format`; test/runtime/env-semantics.test.ts checks). */
  admissible: "list" | "lines" | "unquoted_lines" | "templates_and_objects";
  /** Whether tcod's adapter and the plugin's env supply the compact action list an agent format's
   *  `{action_templates}` / `{objects}` show (ScienceWorld through tcod's bridge; not through an
   *  AgentGym server, whose protocol has no such list: check error TC4502). */
  compactActions: boolean;
  /** Whether the env's taskset rows carry expert `actions` b2f can replay (WebShop's data script
   *  writes none, so b2f there plays plain OPD episodes). "gold" = the simulator's gold path. */
  expertActions: "taskset" | "gold" | "none";
  /** Where `expertActions: "none"` comes from, for the b2f warning (compiler TC4501, `tcod run`). */
  expertActionsNote?: string;
  /** Public sources of each rule, one line each. */
  sources: string[];
}

const TCOD = "github.com/kokolerk/TCOD";
const TRINITY = "github.com/agentscope-ai/Trinity-RFT";

export const EPISODE_SEMANTICS: Readonly<Record<string, EpisodeSemantics>> = {
  alfworld: {
    truncation: { kind: "fixed" },
    invalidAction: { kind: "step" },
    simplification: "",
    admissible: "lines",
    compactActions: false,
    expertActions: "taskset",
    sources: [
      `${TCOD} trinity/common/workflows/envs/TCOD/alfworld/TCOD_f2b_workflow.py: reward 1.0 when done, else 0 (a capped episode scores 0)`,
      `${TCOD} trinity/common/workflows/envs/TCOD/alfworld/utils.py: ALFWORLD_TEMPLATE(_NO_HIS), the admissible commands one per line ("\\n ".join) without "help", no system message; every parsed action is sent to the env`,
      `${TCOD} TCOD_examples/alfworld/alfworld_data/train_expert.jsonl: rows carry expert "actions" (b2f)`,
    ],
  },
  webshop: {
    truncation: { kind: "fixed" },
    invalidAction: { kind: "webshop_validate" },
    simplification: "",
    admissible: "unquoted_lines",
    compactActions: false,
    expertActions: "none",
    expertActionsNote: "TCOD's get_webshop_data.py writes rows {task_id, target} only",
    sources: [
      `${TCOD} trinity/common/workflows/envs/TCOD/webshop/TCOD_f2b_workflow.py: the env reward at done; a capped episode scores 0`,
      `${TCOD} trinity/common/workflows/envs/TCOD/webshop/utils.py validate_action (used by its OPD, f2b and b2f workflows): an unavailable action, or none (parse_action returns ""), gets an error message without stepping the env`,
      `${TCOD} trinity/common/workflows/envs/TCOD/webshop/utils.py: WEBSHOP_TEMPLATE(_NO_HIS), the available actions unquoted one per line (_format_available_actions: "search[<query>]" with the search bar, then "click[x]" for every clickable), history observations on one line (_compact_text), the task from the first page's Instruction lines (_extract_task_description), observations stripped (format_observation), no system message`,
      `${TCOD} get_webshop_data.py: rows are {"task_id", "target"}, no "actions" (b2f falls back to plain OPD episodes)`,
    ],
  },
  scienceworld: {
    truncation: { kind: "score" },
    invalidAction: { kind: "step" },
    simplification: "easy",
    admissible: "templates_and_objects",
    compactActions: true,
    expertActions: "gold",
    sources: [
      `${TCOD} trinity/common/workflows/envs/TCOD/scienceworld/TCOD_f2b_workflow.py: a capped episode keeps best_score / 100`,
      `${TRINITY} trinity/common/workflows/envs/sciworld/sciworld_workflow.py: env.load(task_name, var_num, "easy", generateGoldPath=True)`,
      `${TCOD} trinity/common/workflows/envs/TCOD/scienceworld/utils.py: SCIWORLD_TEMPLATE(_NO_HIS) show get_possible_actions() without "help" and get_possible_objects() (_get_compact_action_info), observations stripped (format_observation); the workflows start the chat with no system message`,
      `${TCOD} trinity/common/workflows/envs/TCOD/scienceworld/TCOD_b2f_workflow.py: b2f replays get_gold_action_sequence()`,
    ],
  },
};
/** Does an agent format list the admissible commands one per line, as the official ALFWorld prompt? */
export function usesAdmissibleLines(format: { template: string; templateNoHistory: string }): boolean {
  return [format.template, format.templateNoHistory].some((t) => t.includes("{admissible_lines}"));
}

/** Does an agent format list the available actions unquoted one per line, as the official WebShop prompt? */
export function usesAvailableActions(format: { template: string; templateNoHistory: string }): boolean {
  return [format.template, format.templateNoHistory].some((t) => t.includes("{available_actions}"));
}

/** Does an agent format show the compact action list (`{action_templates}` / `{objects}`), which the env must supply? */
export function usesCompactActions(format: { template: string; templateNoHistory: string }): boolean {
  return [format.template, format.templateNoHistory].some((t) => COMPACT_ACTION_PLACEHOLDERS.some((p) => t.includes(`{${p}}`)));
}

/** Env kinds whose expert is a policy: it acts from any state (EnvAdapter.expertAction), which DART
 *  demonstrations (`sft(noise: p)`, p > 0) need. The others replay recorded expert paths only, so
 *  `sft(noise: p)` on them is check error TC4503 (test/runtime/expert-policy.test.ts keeps this set
 *  equal to the adapters that implement expertAction). */
export const EXPERT_POLICY_KINDS: ReadonlySet<string> = new Set(["texthouse"]);

/** Env kinds with another name for the same env. */
const ALIASES: Record<string, string> = { sciworld: "scienceworld" };

/** Envs without an official workflow: what tcod has always done (cap → 0, send every action, list them). */
export const DEFAULT_SEMANTICS: EpisodeSemantics = {
  truncation: { kind: "fixed" },
  invalidAction: { kind: "step" },
  simplification: "",
  admissible: "list",
  compactActions: false,
  expertActions: "taskset",
  sources: [],
};

export function semanticsOf(kind: string): EpisodeSemantics {
  return EPISODE_SEMANTICS[ALIASES[kind] ?? kind] ?? DEFAULT_SEMANTICS;
}

/** The reward of an episode the cap cut before done: the reward so far (score), else the plan's reward. */
export function cappedReward(s: EpisodeSemantics, planReward: number, rewardSoFar: number): number {
  return s.truncation.kind === "score" ? rewardSoFar : planReward;
}

/** Is `action` available, given the listed actions? null = yes; else the env's feedback message. */
export function checkAction(s: EpisodeSemantics, action: string, admissible: readonly string[]): string | null {
  if (s.invalidAction.kind === "step") return null;
  // WebShop: the TCOD WebShop workflows' validate_action (kokolerk/TCOD
  // trinity/common/workflows/envs/TCOD/webshop/utils.py) over the listed actions ("search[<query>]"
  // when the page has the search bar, "click[x]" per clickable), with its messages word for word.
  // Its pattern, re.match(r"(.+)\[(.+)\]"): anchored at the start only, greedy, Python's `.` matching
  // everything but \n (JavaScript's `.` also stops at \r, \u2028 and \u2029).
  const m = /^([^\n]+)\[([^\n]+)\]/.exec(action);
  const name = m ? m[1]! : action;
  const arg = m ? m[2]!.toLowerCase() : null;
  const hasSearch = admissible.some((a) => a.startsWith("search["));
  if (name === "search" && arg !== null && arg !== "" && hasSearch) return null;
  if (name === "click" && arg !== null && admissible.includes(`click[${arg}]`)) return null;
  if (name === "search") {
    return arg === null || arg === ""
      ? "Invalid action, please type in the query you want to search in the square brackets here."
      : "Can not perform search action without search bar. Please click the Back to Search button first.";
  }
  if (name === "click") {
    const clickables = admissible.filter((a) => a.startsWith("click[")).map((a) => a.slice(6, -1));
    return `Incorrect action format, make sure you have the correct button name that is within the current page. The buttons you can click now are: ${pyList(clickables)}`;
  }
  return "Invalid action. You should wrap your action with the <action> </action> tag and follow the action format.";
}

/** A list of strings as Python's repr prints it (the workflow formats its clickables that way). */
function pyList(xs: readonly string[]): string {
  return `[${xs.map((x) => (x.includes("'") && !x.includes('"') ? `"${x}"` : `'${x.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`)).join(", ")}]`;
}
