/**
 * `TexthouseWorld`: the synchronous texthouse core (reset / step / admissible / optimal), used directly
 * by the embedded backend and the benchmarks, and wrapped by the async `TexthouseEnv` adapter.
 */
import { compileWorld, type WorldModel, type WorldSpec } from "./model.js";
import { ObservableExpert, type ExpertDecision } from "./observable-expert.js";
import { Planner, type Plan } from "./planner.js";
import {
  applyAction, cloneState, commandText, goalSatisfied, initialState, legalActions, roomOverview,
  type PlaceGrammar, type WorldState,
} from "./rules.js";

/** ALFWorld Hmax as TCOD and AgentGym use it (max_env_steps / max_rounds = 30). */
export const TEXTHOUSE_MAX_TURNS = 30;
export const NOTHING_HAPPENS = "Nothing happens.";

// Bounded so thousands of cached tasks stay within a few hundred MB even in long runs.
const ADMISSIBLE_CACHE_LIMIT = 512;
/** Compiled models and planners per spec object, so repeated episodes of a task share their caches. */
const modelCache = new WeakMap<WorldSpec, WorldModel>();
const plannerCache = new WeakMap<WorldModel, Planner>();
const admissibleCache = new WeakMap<WorldModel, Map<string, { texts: readonly string[]; codes: readonly number[] }>>();

export interface WorldReset {
  /** The goal sentence ("put a clean mug in coffeemachine"). */
  task: string;
  /** Room overview, a blank line, then "Your task is to: …" (ALFWorld's first observation minus the banner). */
  text: string;
  admissible: string[];
}

export interface WorldStep {
  observation: string;
  /** 1 on the step that achieves the goal, else 0 (ALFWorld's float(won)). */
  reward: number;
  /** The goal holds, or the turn limit was reached. */
  done: boolean;
  won: boolean;
  /** The commands admissible now; empty once the episode is over. */
  admissible: string[];
}

export interface WorldOptions {
  /** Episode turn limit; the step that reaches it ends the episode (done, not won). Default 30. */
  maxTurns?: number;
  /** "put" (ALFWorld 0.3.x, default: `put O in/on R`) or "move" (ALFWorld ≥ 0.4: `move O to R`). */
  grammar?: PlaceGrammar;
}

/**
 * Normalizes a command: trims, lowercases, collapses whitespace, and rewrites the other ALFWorld
 * version's placing command into `grammar`'s spelling (so both are understood, one is listed).
 */
export function normalizeCommand(command: string, grammar: PlaceGrammar = "put"): string {
  const plain = command.trim().toLowerCase().replace(/\s+/g, " ");
  if (grammar === "put") {
    const move = /^move (.+?) to (.+)$/.exec(plain);
    return move ? `put ${move[1]} in/on ${move[2]}` : plain;
  }
  const put = /^put (.+?) (?:in\/on|in|on) (.+)$/.exec(plain);
  return put ? `move ${put[1]} to ${put[2]}` : plain;
}

export class TexthouseWorld {
  readonly model: WorldModel;
  readonly maxTurns: number;
  readonly grammar: PlaceGrammar;
  private plannerInstance: Planner | undefined;
  private state: WorldState;
  private codes: readonly number[] = [];
  private texts: readonly string[] = [];
  private admissibleFresh = false;
  private turnCount = 0;
  private isDone = false;
  private isWon = false;
  /** The episode's observations (the first one included), for the observable expert. */
  private observations: string[] = [];
  private expertState: { expert: ObservableExpert; seen: number } | undefined;

  /** `shared` is for fork(): the copy reuses the compiled model and the planner (and its memo). */
  constructor(spec: WorldSpec, options: WorldOptions = {}, shared?: { model: WorldModel; planner: Planner }) {
    let model = shared?.model ?? modelCache.get(spec);
    if (!model) modelCache.set(spec, (model = compileWorld(spec)));
    this.model = model;
    this.maxTurns = options.maxTurns ?? TEXTHOUSE_MAX_TURNS;
    this.grammar = options.grammar ?? "put";
    if (this.grammar !== "put" && this.grammar !== "move") {
      throw new Error(`texthouse: grammar must be "put" (ALFWorld 0.3) or "move" (ALFWorld 0.4+), got ${JSON.stringify(this.grammar)}`);
    }
    if (!(this.maxTurns >= 1)) throw new Error(`texthouse: maxTurns must be at least 1, got ${this.maxTurns}`);
    this.plannerInstance = shared?.planner;
    this.state = initialState(this.model);
  }

  get turns(): number { return this.turnCount; }
  get done(): boolean { return this.isDone; }
  get won(): boolean { return this.isWon; }
  get goal(): string { return this.model.goalText; }

  /** Created on first use: most worlds in training never ask for a plan. */
  private get planner(): Planner {
    if (!this.plannerInstance) {
      let planner = plannerCache.get(this.model);
      if (!planner) plannerCache.set(this.model, (planner = new Planner(this.model)));
      this.plannerInstance = planner;
    }
    return this.plannerInstance;
  }

  /** A copy of the current state (for tests and tools; mutating it does not affect the world). */
  snapshot(): WorldState { return cloneState(this.state); }

  /** An independent copy of this world in its current state and turn count (for look-ahead and tests). */
  fork(): TexthouseWorld {
    const copy = new TexthouseWorld(this.model.spec, { maxTurns: this.maxTurns, grammar: this.grammar }, { model: this.model, planner: this.planner });
    copy.state = cloneState(this.state);
    copy.turnCount = this.turnCount;
    copy.isDone = this.isDone;
    copy.isWon = this.isWon;
    copy.observations = this.observations.slice();
    return copy;
  }

  reset(): WorldReset {
    this.state = initialState(this.model);
    this.turnCount = 0;
    this.isDone = false;
    this.isWon = false;
    this.admissibleFresh = false;
    const text = `${roomOverview(this.model)}\n\nYour task is to: ${this.model.goalText}.`;
    this.observations = [text];
    this.expertState = undefined;
    return { task: this.model.goalText, text, admissible: this.admissible() };
  }

  /** The admissible commands of the current state, sorted (a fresh array; computed once per state). */
  admissible(): string[] {
    this.refreshAdmissible();
    return this.texts.slice();
  }

  /**
   * The admissible list depends only on the agent's local situation (where it is, what it holds,
   * whether the receptacle there is open, what lies in it), so sorted lists are cached per situation
   * and shared by every world of the same model (forks included).
   */
  private refreshAdmissible(): void {
    if (this.admissibleFresh) return;
    const m = this.model, s = this.state;
    let key = `${this.grammar}|${s.loc}|${s.held}|${s.loc >= 0 ? s.open[s.loc] : 0}|`;
    if (s.loc >= 0) for (let o = 0; o < m.nObj; o++) if (s.objAt[o] === s.loc) key += `${o},`;
    let cache = admissibleCache.get(m);
    if (!cache) admissibleCache.set(m, (cache = new Map()));
    let entry = cache.get(key);
    if (!entry) {
      const codes: number[] = [];
      legalActions(m, s, codes);
      const pairs = codes.map((code) => [commandText(m, code, this.grammar), code] as const);
      pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      entry = { texts: pairs.map((p) => p[0]), codes: pairs.map((p) => p[1]) };
      if (cache.size >= ADMISSIBLE_CACHE_LIMIT) cache.clear();
      cache.set(key, entry);
    }
    this.texts = entry.texts;
    this.codes = entry.codes;
    this.admissibleFresh = true;
  }

  step(command: string): WorldStep {
    if (this.isDone) throw new Error(`texthouse ${this.model.spec.id}: the episode is over (${this.isWon ? "won" : "turn limit"}); call reset() before stepping again`);
    this.refreshAdmissible();
    let index = this.texts.indexOf(command);
    if (index < 0) index = this.texts.indexOf(normalizeCommand(command, this.grammar));
    this.turnCount++;
    let observation = NOTHING_HAPPENS;
    if (index >= 0) {
      observation = applyAction(this.model, this.state, this.codes[index]!, true, this.grammar);
      this.admissibleFresh = false;
    }
    this.observations.push(observation);
    this.isWon = index >= 0 && goalSatisfied(this.model, this.state);
    this.isDone = this.isWon || this.turnCount >= this.maxTurns;
    return {
      observation, reward: this.isWon ? 1 : 0, done: this.isDone, won: this.isWon,
      admissible: this.isDone ? [] : this.admissible(),
    };
  }

  /** The current plan: shortest length to the goal and every optimal first action code. */
  plan(): Plan { return this.planner.plan(this.state); }

  /** Every optimal next command in the current state, sorted; empty when the goal already holds. */
  optimal(): string[] {
    return this.plan().firstActions.map((code) => commandText(this.model, code, this.grammar)).sort();
  }

  /**
   * The observable expert's decision in the current episode (observable-expert.ts): computed from
   * the episode's observation texts alone, never from the state. Empty optimal set once won.
   */
  observableDecision(): ExpertDecision {
    if (this.isWon) return { optimal: [], action: "", phase: "plan" };
    if (!this.expertState) this.expertState = { expert: new ObservableExpert(this.observations[0]!, this.grammar), seen: 1 };
    const st = this.expertState;
    for (; st.seen < this.observations.length; st.seen++) st.expert.observe(this.observations[st.seen]!);
    return st.expert.decide();
  }

  /** Every observably optimal next command (the observable expert's optimal set), sorted. */
  observableOptimal(): string[] { return this.observableDecision().optimal; }

  /**
   * One whole trajectory of the observable expert from the initial state (its documented choices),
   * at most `maxTurns` commands. Does not disturb the current episode.
   */
  observableExpertPath(): string[] {
    const w = new TexthouseWorld(this.model.spec, { maxTurns: this.maxTurns, grammar: this.grammar });
    w.reset();
    const path: string[] = [];
    while (!w.done) {
      const action = w.observableDecision().action;
      w.step(action);
      path.push(action);
    }
    return path;
  }

  /** Length of a shortest plan from the current state. */
  optimalLength(): number { return this.plan().length; }

  /**
   * The `take`s an agent that guesses what a receptacle holds, instead of reading it, would try
   * here, none of which the world offers: where the agent stands at a receptacle whose contents show
   * (open, or not openable) with empty hands, `take O from R` for each object O of the goal's type
   * that R does not hold (the goal type where R holds none, another instance where it holds one).
   * Empty elsewhere. Sorted. The SFT teachers' evaluations fail this way (`In it, you see a book 3.`
   * → `take cellphone 3 from drawer 3`, repeated); `sft(noise_from: "guess")` runs these as noise.
   */
  guessedTakes(): string[] {
    const m = this.model, s = this.state;
    if (this.isDone || s.loc < 0 || s.held >= 0 || (m.recOpenable[s.loc] && !s.open[s.loc])) return [];
    const out: string[] = [];
    for (let o = 0; o < m.nObj; o++) {
      if (m.objRelevant[o] && s.objAt[o] !== s.loc) out.push(`take ${m.objName[o]} from ${m.recName[s.loc]}`);
    }
    return out.sort();
  }

  /**
   * One whole optimal trajectory of the privileged planner from the initial state (it sees inside
   * closed receptacles): at each step the alphabetically first optimal command (deterministic).
   * Does not disturb the current episode.
   */
  expertPath(): string[] {
    const s = initialState(this.model);
    const path: string[] = [];
    for (let plan = this.planner.plan(s); plan.length > 0; plan = this.planner.plan(s)) {
      const best = plan.firstActions.map((code) => [commandText(this.model, code, this.grammar), code] as const)
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))[0]!;
      applyAction(this.model, s, best[1], false);
      path.push(best[0]);
    }
    return path;
  }
}
