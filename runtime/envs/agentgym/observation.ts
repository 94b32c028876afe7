/** Observation formats of AgentGym envs (reference §1.2–1.3). Pure functions. */

const AVAILABLE = /\n?AVAILABLE ACTIONS:\s*([^\n]*)\s*$/;

/**
 * Splits AgentGym ALFWorld's `observe()` form "{observation}\nAVAILABLE ACTIONS: {a1,a2,...}" into the
 * observation and the action list (braces optional; actions are comma-separated: ALFWorld commands
 * contain no commas). Text without the suffix comes back whole, with `actions` undefined.
 */
export function splitAvailableActions(text: string): { observation: string; actions?: string[] } {
  const m = AVAILABLE.exec(text);
  if (!m) return { observation: text };
  const list = m[1]!.trim().replace(/^\{/, "").replace(/\}$/, "");
  const actions = list.split(",").map((a) => a.trim()).filter((a) => a.length > 0);
  return { observation: text.slice(0, m.index).trimEnd(), actions };
}

/** The first paragraph of every ALFWorld game's first observation (alfworld's TextWorld intro). */
export const ALFWORLD_INTRO = "-= Welcome to TextWorld, ALFRED! =-";

/**
 * ALFWorld's first observation as the official TCOD ALFWorld workflows see it, from an AgentGym
 * server's /reset. textworld gives "-= Welcome to TextWorld, ALFRED! =-\n\n<room>\n\nYour task is
 * to: <task>" (the official workflows strip it and show it whole); AgentGym's server (agentenv-alfworld
 * env_wrapper.py `reset`) sends `"\n".join(ob.split("\n\n")[1:])`, without the intro and with its
 * paragraphs one "\n" apart. The paragraphs of a first observation are single lines, so putting the
 * intro back and the paragraphs "\n\n" apart is exact. A text that already starts with the intro
 * comes back as it is.
 */
export function alfworldOfficialFirst(server: string): string {
  if (server.startsWith(ALFWORLD_INTRO)) return server;
  return [ALFWORLD_INTRO, ...server.split("\n")].join("\n\n");
}

/** ALFWorld's goal line, "Your task is to: put a clean plate in fridge." → "put a clean plate in fridge." */
export function alfworldTask(observation: string): string | undefined {
  const m = /Your task is to:\s*(.+)$/m.exec(observation);
  return m ? m[1]!.trim() : undefined;
}

/** TextCraft's first observation ends "Goal: craft X." → "craft X." */
export function textcraftGoal(observation: string): string | undefined {
  const m = /^Goal:\s*(.+)$/m.exec(observation);
  return m ? m[1]!.trim() : undefined;
}

/** WebShop's instruction inside "WebShop [SEP] Instruction: [SEP] Find me … [SEP] Search". */
export function webshopInstruction(observation: string): string | undefined {
  const parts = observation.split(" [SEP] ").map((p) => p.trim());
  const i = parts.findIndex((p) => p === "Instruction:");
  return i >= 0 && i + 1 < parts.length ? parts[i + 1] : undefined;
}

/** WebShop's admissible actions from /available_actions, as the official TCOD WebShop workflows list
 *  them (kokolerk/TCOD webshop/utils.py `_format_available_actions`): the search form when the page
 *  has the search bar, then click[value] for every clickable (the search page's `search` button
 *  too: their `validate_action` accepts `click[search]`). */
export function webshopActions(available: { has_search_bar?: boolean; clickables?: string[] }): string[] {
  const out = available.has_search_bar ? [WEBSHOP_SEARCH_TEMPLATE] : [];
  for (const c of available.clickables ?? []) out.push(`click[${c}]`);
  return out;
}

/** The search form's entry in the admissible list: the agent fills the brackets with its query. */
export const WEBSHOP_SEARCH_TEMPLATE = "search[<query>]";

// ---- WebShop's multi-line page text (observation_mode "text_rich") from the server's [SEP] form ----
//
// The official TCOD WebShop workflows (kokolerk/TCOD trinity/common/workflows/envs/TCOD/webshop/utils.py
// `_create_webshop_env`) make web_agent_site's `WebAgentTextEnv` with observation_mode="text_rich";
// AgentGym's server (agentenv-webshop environment.py) makes it with "text". Both come from
// `convert_html_to_text` (princeton-nlp/WebShop web_agent_site/envs/web_agent_text_env.py) over the
// same visible text nodes t of the page (BeautifulSoup collapses a whitespace-only node to "\n",
// which both skip, or to " "):
//   text:      " [SEP] ".join(t.strip())
//   text_rich: one line per node: "[button] t [button_]" (a button's text), "  [button] t [button_]" or
//              "  [clicked button] t [clicked button_]" (an option's label, clicked when the page URL
//              holds "t" in quotes, i.e. it is a selected option, each such also prepending
//              "You have clicked t.\n" to the whole text), "\n[button] t [button_]" or
//              "\n[clicked button] t [clicked button_]" (a product link, clicked when the session
//              visited that product), else t itself.
// So the rich form is rebuilt from the segments, the page's clickables (GET /available_actions: the
// lower-cased button and product-link texts and the option values) and what the episode clicked.
// Exact, except: (1) a plain text node's own leading/trailing whitespace, which the [SEP] form strips
// (e.g. the search page's "Instruction: " ends in a space in text_rich); (2) a segment whose text is
// a clickable's (case-insensitively) but is plain text on the page would become a button line; (3)
// a text that itself contains " [SEP] " splits in two lines. The page itself is the server's: an
// AgentGym server runs its vendored web_agent_site, whose templates may differ from the one the
// official workflow runs (princeton-nlp/WebShop).

/** The texts of web_agent_site's buttons (class "btn"), lower-cased as /available_actions lists them. */
export const WEBSHOP_BUTTONS: ReadonlySet<string> = new Set([
  "search", "back to search", "< prev", "next >", "< back to results", "description", "features", "reviews", "attributes", "buy now",
]);

/** A WebShop page as the server sent it: the `text` form and its clickables. */
export interface WebshopPage { text: string; clickables: readonly string[] }

/** The [SEP] segments of a `text` observation ("" = a node BeautifulSoup collapsed to " "). */
export function webshopSegments(text: string): string[] {
  return text.split(" [SEP] ");
}

/** Python's json.dumps of a str (ensure_ascii): the page URL holds the selected options this way. */
function pyJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || c > 0x7e) out += c === 0x7f ? ch : `\\u${c.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return out + '"';
}

/**
 * What a WebShop session has clicked, as web_agent_site's SimServer keeps it (the session's
 * keywords, result page, selected options and visited products), so that the rich form marks the
 * same buttons as clicked. Follows SimServer.receive for each step action on the page it was taken on.
 */
export class WebshopSession {
  private kind: "index" | "results" | "item" | "sub" | "done" = "index";
  private keywords: string[] = [];
  private page = 1;
  private readonly options = new Map<string, string>();
  private readonly asins = new Set<string>();

  reset(): void {
    this.kind = "index";
    this.keywords = [];
    this.page = 1;
    this.options.clear();
    this.asins.clear();
  }

  /** The server steps with `action` on `page` (the page before the step): WebAgentTextEnv.step. */
  step(action: string, page: WebshopPage): void {
    // web_agent_site engine.parse_action: re.match(r'(.+)\[(.+)\]'), `.` matching all but \n.
    const m = /^([^\n]+)\[([^\n]+)\]/.exec(action);
    const name = m ? m[1]! : action;
    const arg = m ? m[2]!.toLowerCase() : null;
    if (name === "search" && arg !== null && arg !== "") {
      this.kind = "results";
      this.keywords = arg.split(" ");
      this.page = 1;
      this.options.clear();
      return;
    }
    if (name !== "click" || arg === null || arg === "search" || !page.clickables.includes(arg)) return;
    const from = this.kind;
    if (arg === "buy now") this.kind = "done";
    else if (arg === "back to search") this.reset();
    else if ((arg === "next >" || arg === "< prev") && from === "results") {
      this.page += arg === "next >" ? 1 : -1;
      this.options.clear();
    }
    else if (arg === "< prev" && from === "sub") this.kind = "item";
    else if (arg === "< prev" && from === "item") {
      this.kind = "results";
      this.options.clear();
    }
    else if (["description", "features", "reviews", "attributes"].includes(arg)) this.kind = "sub";
    else {
      this.kind = "item";
      if (from === "results" && !WEBSHOP_BUTTONS.has(arg)) this.asins.add(arg.toUpperCase()); // a product link
      else if (from === "item" && !WEBSHOP_BUTTONS.has(arg)) {
        // An option: the radio input's name is the plain text heading its values.
        const option = optionNameOf(arg, page);
        if (option !== undefined) this.options.set(option, arg);
      }
    }
  }

  /** Is an option label shown as clicked: `"t"` in the item page's URL (keywords, page, json.dumps(options)). */
  labelClicked(t: string): boolean {
    const json = `{${[...this.options].map(([k, v]) => `${pyJsonString(k)}: ${pyJsonString(v)}`).join(", ")}}`;
    return `${this.keywords.join("+")}/${this.page}/${json}`.includes(`"${t}"`);
  }

  productVisited(t: string): boolean {
    return this.asins.has(t);
  }
}

/** The option an item page's value belongs to: the nearest plain segment before it. */
function optionNameOf(value: string, page: WebshopPage): string | undefined {
  const segs = webshopSegments(page.text);
  const at = segs.findIndex((s) => s.toLowerCase() === value && !WEBSHOP_BUTTONS.has(value));
  for (let i = at - 1; i >= 0; i--) {
    const s = segs[i]!;
    if (!page.clickables.includes(s.toLowerCase())) return s.toLowerCase();
  }
  return undefined;
}

/** The `text_rich` observation of a page from its `text` form (see above), stripped as the official
 *  workflows' `format_observation` strips it. */
export function webshopRichText(page: WebshopPage, session: WebshopSession): string {
  const itemPage = page.clickables.includes("buy now");
  let observation = "";
  for (const t of webshopSegments(page.text)) {
    const key = t.toLowerCase();
    let line: string;
    if (t === "") line = " ";
    else if (!page.clickables.includes(key)) line = t;
    else if (WEBSHOP_BUTTONS.has(key)) line = `[button] ${t} [button_]`;
    else if (itemPage) {
      if (session.labelClicked(t)) {
        line = `  [clicked button] ${t} [clicked button_]`;
        observation = `You have clicked ${t}.\n` + observation;
      } else line = `  [button] ${t} [button_]`;
    } else line = session.productVisited(t) ? `\n[clicked button] ${t} [clicked button_]` : `\n[button] ${t} [button_]`;
    observation += line + "\n";
  }
  return pyStripText(observation);
}

/** Python's str.strip() (the workflows' format_observation). */
function pyStripText(s: string): string {
  return s.replace(/^[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, "");
}

/** The task of a WebShop episode from its first page as the official workflows read it
 *  (webshop/utils.py `_extract_task_description`): the lines after "Instruction:" up to the first
 *  "[button]" line, else the page on one line. */
export function webshopTaskOf(observation: string): string {
  const lines = observation.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/).map(pyStripText);
  const compact = lines.filter((l) => l.length > 0).join(" ");
  const at = lines.indexOf("Instruction:");
  if (at < 0) return compact;
  const task: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (l === "") continue;
    if (l.startsWith("[button]")) break;
    task.push(l);
  }
  return pyStripText(task.join(" ")) || compact;
}
