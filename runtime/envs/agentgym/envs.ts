/**
 * The four AgentGym env servers, each exactly as reference §1.2 documents its routes.
 *  - alfworld: /create → {id}; /reset {id, game, world_type:"Text"}; /step {id, action}; no /close.
 *    reward = float(won) (0/1); admissible = available_actions (or the "AVAILABLE ACTIONS:" suffix).
 *  - webshop: key env_idx; /create → bare int; /reset {env_idx, session_id} → [observation, null];
 *    /step → {state, reward, done, info}; admissible from GET /available_actions; no /close.
 *  - sciworld: /create → {id} (one JVM); /reset {id, data_idx}; /step → {observation, reward, score, done};
 *    /close {id}. The AgentGym client uses `score` (cumulative, 0..100) as the reward; here each step's
 *    reward is the rise of the best score / 100 so an episode's rewards sum to best_score / 100 (TCOD).
 *    The server lists no valid actions, so `admissible` is [].
 *  - textcraft: /create {} → {id, observation, …}; /reset {id, data_idx}; /step; /close {id}; reward 1 on the goal.
 */
import { EnvConfigError, EnvError, type Observation, type StepResult, type TaskRef } from "../env.js";
import { AgentGymEnv } from "./adapter.js";
import { preview } from "./http.js";
import {
  AlfworldReset, AlfworldStep, CreateAnswer, parseAnswer, SciworldReset, SciworldStep, TextcraftReset, TextcraftStep,
  WebshopAvailable, WebshopReset, WebshopStep,
} from "./schemas.js";
import {
  alfworldOfficialFirst, alfworldTask, splitAvailableActions, textcraftGoal, webshopActions, webshopInstruction, webshopRichText, webshopTaskOf, WebshopSession, type WebshopPage,
} from "./observation.js";

/** How `tcod run` shows ALFWorld's first observation through an AgentGym server: "official"
 *  (default), as the official TCOD ALFWorld workflows see it (observation.ts `alfworldOfficialFirst`:
 *  the TextWorld intro put back, paragraphs "\n\n" apart); "server", as the server sends it. */
export const ALFWORLD_FIRST_OBSERVATIONS = ["official", "server"] as const;
export type AlfworldFirstObservation = (typeof ALFWORLD_FIRST_OBSERVATIONS)[number];

export class AlfworldAgentGym extends AgentGymEnv {
  /** Set by agentGymFromSpec from `params.first_observation`. */
  firstObservation: AlfworldFirstObservation = "official";

  protected async create(): Promise<number> {
    const r = await this.http.post<unknown>("/create", {}, this.timeouts.resetMs);
    return parseAnswer(this.http, "/create", CreateAnswer, r).id;
  }

  protected async resetOn(id: number, game: number, task: TaskRef): Promise<Observation> {
    const r = parseAnswer(this.http, "/reset", AlfworldReset, await this.http.post<unknown>("/reset", { id, game, world_type: "Text" }, this.timeouts.resetMs));
    const raw = r.observation;
    const served = r.task_type;
    if (task.id.includes("/") && typeof served === "string" && served !== task.id) {
      throw new EnvConfigError(`alfworld: game index ${game} of the server is "${served}", but the task file asks for "${task.id}"`, this.kind,
        "the mappings file does not match the server's configs/mappings_*.json; pass the server's own files as params.mappings");
    }
    const { observation, actions } = splitAvailableActions(raw);
    const text = this.firstObservation === "official" ? alfworldOfficialFirst(observation) : observation;
    return { task: alfworldTask(observation) ?? observation, text, admissible: r.available_actions ?? actions ?? [] };
  }

  protected async stepOn(id: number, action: string): Promise<StepResult> {
    const { reward, done, ...r } = parseAnswer(this.http, "/step", AlfworldStep, await this.http.post<unknown>("/step", { id, action }, this.timeouts.stepMs));
    const { observation, actions } = splitAvailableActions(r.observation);
    return { observation, reward, done, won: reward >= 1, admissible: r.available_actions ?? actions ?? [] };
  }
}

/** How `tcod run` shows a WebShop page: "text_rich" (default), the multi-line page text the
 *  official TCOD WebShop workflows see, rebuilt from the server's [SEP] form (observation.ts
 *  `webshopRichText`); "text", the AgentGym server's [SEP]-joined line as it comes. */
export const WEBSHOP_PAGE_TEXTS = ["text_rich", "text"] as const;
export type WebshopPageText = (typeof WEBSHOP_PAGE_TEXTS)[number];

export class WebshopAgentGym extends AgentGymEnv {
  /** Set by agentGymFromSpec from `params.page_text`. */
  pageText: WebshopPageText = "text_rich";
  private readonly session = new WebshopSession();
  /** The page the next step is taken on (its [SEP] text and clickables). */
  private page: WebshopPage | undefined;

  protected async create(): Promise<number> {
    const r = await this.http.post<unknown>("/create", {}, this.timeouts.resetMs);
    if (typeof r !== "number" || !Number.isFinite(r)) throw new EnvConfigError(`webshop server: /create answered ${preview(r)}, not a bare env index`, this.kind,
      "is this an AgentGym webshop server? (sciworld/alfworld answer {\"id\": …})");
    if (!Number.isSafeInteger(r)) {
      throw new EnvError(`webshop server ${this.http.base}: /create answered ${preview(r)}, not an integer env index`, this.kind);
    }
    return r as number;
  }

  private async available(envIdx: number): Promise<{ has_search_bar: boolean; clickables: string[] }> {
    const a = parseAnswer(this.http, "/available_actions", WebshopAvailable, await this.http.get<unknown>("/available_actions", { env_idx: envIdx }, this.timeouts.stepMs));
    return { has_search_bar: a.has_search_bar ?? false, clickables: a.clickables ?? [] };
  }

  /** The page as the agent sees it: the rich form (rebuilt) or the server's text. */
  private show(text: string, clickables: string[]): string {
    this.page = { text, clickables };
    return this.pageText === "text_rich" ? webshopRichText(this.page, this.session) : text;
  }

  protected async resetOn(envIdx: number, session: number): Promise<Observation> {
    const r = parseAnswer(this.http, "/reset", WebshopReset, await this.http.post<unknown>("/reset", { env_idx: envIdx, session_id: session }, this.timeouts.resetMs));
    const a = await this.available(envIdx);
    this.session.reset();
    const text = this.show(r[0], a.clickables);
    // The task as the official workflows read it off the first page (_extract_task_description).
    const task = this.pageText === "text_rich" ? webshopTaskOf(text) : webshopInstruction(text) ?? text;
    return { task, text, admissible: webshopActions(a) };
  }

  protected async stepOn(envIdx: number, action: string): Promise<StepResult> {
    const { state, reward, done } = parseAnswer(this.http, "/step", WebshopStep, await this.http.post<unknown>("/step", { env_idx: envIdx, action }, this.timeouts.stepMs));
    if (this.page) this.session.step(action, this.page);
    const a = done ? { has_search_bar: false, clickables: [] } : await this.available(envIdx);
    const observation = this.show(state, a.clickables);
    return { observation, reward, done, won: done && reward === 1, score: reward, admissible: done ? [] : webshopActions(a) };
  }
}

export class SciworldAgentGym extends AgentGymEnv {
  private best = 0;

  protected async create(): Promise<number> {
    const r = await this.http.post<unknown>("/create", {}, this.timeouts.resetMs);
    return parseAnswer(this.http, "/create", CreateAnswer, r).id;
  }

  protected async resetOn(id: number, dataIdx: number): Promise<Observation> {
    const r = parseAnswer(this.http, "/reset", SciworldReset, await this.http.post<unknown>("/reset", { id, data_idx: dataIdx }, this.timeouts.resetMs));
    this.best = 0;
    return { task: r.task_description, text: r.observation, admissible: [] };
  }

  protected async stepOn(id: number, action: string): Promise<StepResult> {
    const { observation, score, done } = parseAnswer(this.http, "/step", SciworldStep, await this.http.post<unknown>("/step", { id, action }, this.timeouts.stepMs));
    const gain = Math.max(0, score - this.best);
    this.best += gain;
    return { observation, reward: gain / 100, score, won: score >= 100, done, admissible: [] };
  }

  protected override async closeOn(id: number): Promise<void> {
    await this.http.post("/close", { id }, this.timeouts.stepMs);
  }
}

export class TextcraftAgentGym extends AgentGymEnv {
  protected async create(): Promise<number> {
    const r = await this.http.post<unknown>("/create", {}, this.timeouts.resetMs);
    return parseAnswer(this.http, "/create", CreateAnswer, r).id;
  }

  protected async resetOn(id: number, dataIdx: number): Promise<Observation> {
    const text = parseAnswer(this.http, "/reset", TextcraftReset, await this.http.post<unknown>("/reset", { id, data_idx: dataIdx }, this.timeouts.resetMs)).observation;
    return { task: textcraftGoal(text) ?? text, text, admissible: [] };
  }

  protected async stepOn(id: number, action: string): Promise<StepResult> {
    const { observation, reward, done } = parseAnswer(this.http, "/step", TextcraftStep, await this.http.post<unknown>("/step", { id, action }, this.timeouts.stepMs));
    return { observation, reward, won: reward >= 1, done, admissible: [] };
  }

  protected override async closeOn(id: number): Promise<void> {
    await this.http.post("/close", { id }, this.timeouts.stepMs);
  }
}
