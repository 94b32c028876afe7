/**
 * The agent format of a curriculum: how an observation becomes the user message of a turn and how
 * a sampled response becomes an env action. Pure text functions; token handling is in rollout.ts.
 *
 * Choices where TCOD / AgentGym are silent or differ (documented, not hidden):
 * - `{step}` is the number of env steps already taken in the episode (replayed expert steps
 *   included), as TCOD's "Prior to this step, you have already taken {step} step(s)".
 * - `{admissible}` lists the admissible commands as `'a', 'b', 'c'` (TCOD wraps it in `[…]` in the
 *   template itself).
 * - `{admissible_lines}`: the admissible commands as the official TCOD ALFWorld prompt lists them
 *   (std/agent `alfworld_format`): quoted, joined by a newline and a space, without `help`.
 * - `{available_actions}`: the available actions as the official TCOD WebShop prompt lists them
 *   (std/agent `webshop_format`): unquoted, one per line.
 * - `{observation_compact}` (history entries): the observation on one line, its non-blank lines
 *   stripped and joined by spaces, as the official WebShop prompt's history shows it (TCOD
 *   webshop/utils.py `_compact_text`).
 * - `{action_templates}` and `{objects}`: ScienceWorld's compact action list, the official TCOD
 *   ScienceWorld prompt (std/agent `scienceworld_format`): the action templates (`open OBJ`, `look at
 *   OBJ`; without `help`) and the objects in view, each listed as `'a', 'b'` like `{admissible}`. The
 *   env supplies them (Observation/StepResult `actionTemplates`, `objects`); a format that shows them
 *   on an env that does not is refused at check (TC4502) and at the first turn (TC7003).
 * - `{history}` is the last `historyWindow` entries, each rendered with `historyEntry`
 *   (`{n}` = 1-based env step of the entry), joined by newlines.
 * - The history-free template is used while fewer than `historyWindow` earlier steps exist
 *   (TCOD: `len(history) < 2`).
 */
import { HISTORY_ENTRY_PLACEHOLDERS, TEMPLATE_PLACEHOLDERS } from "../plan/enums.js";
import { usesCompactActions } from "../plan/env-semantics.js";
export { usesCompactActions };
import type { AgentFormat } from "../plan/schema.js";

export interface HistoryEntry {
  observation: string;
  action: string;
}

export interface PromptContext {
  task: string;
  /** Every earlier (observation, action) pair of the episode, expert replay included. */
  history: readonly HistoryEntry[];
  observation: string;
  admissible: readonly string[];
  /** ScienceWorld's action templates and the objects in view, where the env supplies them. */
  actionTemplates?: readonly string[];
  objects?: readonly string[];
}

const PLACEHOLDER = new RegExp(`\\{(${[...TEMPLATE_PLACEHOLDERS, ...HISTORY_ENTRY_PLACEHOLDERS].join("|")})\\}`, "g");

/** Substitutes `{name}` placeholders; unknown names are left as written (they may be literal). */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(PLACEHOLDER, (m, name: string) => values[name] ?? m);
}

const quoted = (xs: readonly string[]): string => xs.map((a) => `'${a}'`).join(", ");

/** The user message of one turn. */
export function renderUserMessage(format: AgentFormat, ctx: PromptContext): string {
  const window = format.historyWindow;
  const shown = window > 0 ? ctx.history.slice(-window) : [];
  const first = ctx.history.length - shown.length;
  const history = shown
    .map((h, i) => fill(format.historyEntry, { n: String(first + i + 1), observation: h.observation, observation_compact: compactText(h.observation), action: h.action }))
    .join("\n");
  const useHistory = window > 0 && ctx.history.length >= window;
  if (usesCompactActions(format) && (ctx.actionTemplates === undefined || ctx.objects === undefined)) {
    // runtime/rollout.ts refuses such an env with a coded error before the first turn.
    throw new Error(`agent format '${format.name}' shows {action_templates}/{objects}, but the env supplied none`);
  }
  return fill(useHistory ? format.template : format.templateNoHistory, {
    task: ctx.task,
    step: String(ctx.history.length),
    // TCOD: "You are now at step {current_step + 1}".
    step_next: String(ctx.history.length + 1),
    history,
    history_length: String(shown.length),
    observation: ctx.observation,
    admissible: quoted(ctx.admissible),
    // The official ALFWorld prompt: "'a'\n 'b'", without "help" (TCOD alfworld TCOD_*_workflow.py).
    admissible_lines: ctx.admissible.filter((a) => a !== "help").map((a) => `'${a}'`).join("\n "),
    // The official WebShop prompt: "a\nb", unquoted (TCOD webshop/utils.py _format_available_actions).
    available_actions: ctx.admissible.join("\n"),
    action_templates: quoted(ctx.actionTemplates ?? []),
    objects: quoted(ctx.objects ?? []),
  });
}

/** Text on one line: its non-blank lines, stripped, joined by spaces (TCOD webshop/utils.py
 *  `_compact_text`: `" ".join(line.strip() for line in text.splitlines() if line.strip())`). */
export function compactText(text: string): string {
  return splitLines(text).map((l) => pyStrip(l)).filter((l) => l.length > 0).join(" ");
}

/** Python's str.splitlines (\n, \r\n, \r and the other line boundaries it knows), without a trailing empty line. */
function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Python's whitespace (str.isspace): JavaScript's \s has \ufeff and lacks \x1c-\x1f, \x85. */
const PY_SPACE = "\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "g");

/** Python's str.strip() with no argument. */
function pyStrip(s: string): string {
  return s.replace(PY_STRIP, "");
}

/**
 * The action a response names, or null when the response does not parse (no action, or an empty one).
 *
 * `format.actionPick` (plan/schema.ts) says which action of a reply naming several:
 * - "last" (absent; tcod's default): the last complete `<tag>…</tag>` pair (a model may draft one
 *   inside its thinking); a react parser reads after the last prefix.
 * - "first": the official TCOD workflows' `parse_action` (kokolerk/TCOD
 *   trinity/common/workflows/envs/TCOD/{alfworld,webshop,scienceworld}/utils.py, as upstream
 *   Trinity-RFT's alfworld_workflow.py):
 *   `response.split("<action>")[1].split("</action>")[0].strip()`, i.e. the text after the first
 *   `<tag>` up to the next `</tag>` or `<tag>`, or to the end of the reply when neither follows (an
 *   unclosed tag still names an action); a react parser reads after the first prefix.
 * What an unparsed reply does is `format.onInvalid` (the official workflows: `"empty"`, since their
 * `parse_action` returns "" and the workflow sends it).
 */
export function parseAction(format: AgentFormat, response: string): string | null {
  const p = format.parser;
  const first = format.actionPick === "first";
  switch (p.kind) {
    case "tags": {
      const open = `<${p.tag}>`;
      const close = `</${p.tag}>`;
      if (first) {
        const at = response.indexOf(open);
        if (at < 0) return null;
        let rest = response.slice(at + open.length);
        const next = rest.indexOf(open);
        if (next >= 0) rest = rest.slice(0, next);
        const end = rest.indexOf(close);
        if (end >= 0) rest = rest.slice(0, end);
        const action = pyStrip(rest);
        return action.length > 0 ? action : null;
      }
      // The last complete <tag>…</tag> pair wins (a model may draft one inside its thinking).
      const end = response.lastIndexOf(close);
      if (end < 0) return null;
      const start = response.lastIndexOf(open, end);
      if (start < 0) return null;
      return nonEmpty(response.slice(start + open.length, end));
    }
    case "react": {
      const at = first ? response.indexOf(p.prefix) : response.lastIndexOf(p.prefix);
      if (at < 0) return null;
      const rest = response.slice(at + p.prefix.length);
      return nonEmpty(rest.split("\n")[0] ?? "");
    }
    case "raw":
      return nonEmpty(response);
  }
}

function nonEmpty(s: string): string | null {
  const t = s.trim();
  return t.length > 0 ? t : null;
}

/** Think delimiters, when a response of this format opens with a think block (tags parser that reads thinking, a thinking format). */
export function thinkMarkers(format: AgentFormat): { open: string; close: string } | null {
  const p = format.parser;
  return p.kind === "tags" && p.think && format.thinking ? { open: "<think>", close: "</think>" } : null;
}

/** The response text an expert gives for an action (SFT demonstrations, b2f prefixes, the embedded oracle teacher: tags `<think></think><tag>A</tag>` where the format thinks, react `PREFIX A`, raw `A`); parses back to it. */
export function renderAction(format: AgentFormat, action: string): string {
  const p = format.parser;
  switch (p.kind) {
    case "tags": {
      const think = thinkMarkers(format);
      return (think ? think.open + think.close : "") + `<${p.tag}>${action}</${p.tag}>`;
    }
    case "react":
      return `${p.prefix} ${action}`;
    case "raw":
      return action;
  }
}

// ---- what a tokenizer needs of the format (the embedded tokenizer, a worker's vocabulary file) ----

/** Multi-character markers of the format that should be single tokens. */
export function agentLiterals(agent: AgentFormat): string[] {
  const p = agent.parser;
  switch (p.kind) {
    case "tags":
      return [`<${p.tag}>`, `</${p.tag}>`, ...(p.think ? ["<think>", "</think>"] : [])];
    case "react":
      return p.prefix.length > 1 ? [p.prefix] : [];
    case "raw":
      return [];
  }
}

/** Words of the format's fixed texts (system prompt, templates, invalid-action feedback). */
export function agentWords(agent: AgentFormat): string[] {
  const strip = (s: string) => s.replace(/\{[a-z_]+\}/g, " ");
  const texts = [agent.system, agent.template, agent.templateNoHistory, agent.historyEntry];
  if (agent.onInvalid.kind === "feedback") texts.push(agent.onInvalid.text);
  return texts.map(strip);
}
