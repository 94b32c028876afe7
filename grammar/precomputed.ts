/**
 * Start-up cost of the parser, paid at build time instead of at every start.
 *
 * Chevrotain's `performSelfAnalysis` computes, for every OR/OPTION/MANY of the grammar, the LL(k)
 * lookahead paths, and (with recovery on) the re-sync follow sets of every rule reference. Both depend
 * only on the grammar, and were most of a cold `tcod check`. `scripts/build.mjs` computes them once
 * (`computeGrammarTables`) and bakes them into the bundle as `TCOD_GRAMMAR_TABLES`; the parser then
 * builds its lookahead functions from the tables (`TableLookahead`) and takes the follow sets as they
 * are. Run from sources (tests), no tables exist and Chevrotain computes everything as before;
 * test/grammar/precomputed.test.ts checks both parsers agree on every file of the corpus.
 *
 * Tables name token types by name, so they are plain JSON.
 */
import {
  getLookaheadPaths, LLkLookaheadStrategy, type ILookaheadStrategy, type IToken, type OptionalProductionType,
  type Rule, type TokenType,
} from "chevrotain";

export interface GrammarTables {
  /** `rule|kind|occurrence` → lookahead paths per alternative, each path a list of token names. */
  lookahead: Record<string, string[][][]>;
  /** Chevrotain's re-sync follow sets: key → token names. */
  follows: Record<string, string[]>;
}

const key = (rule: string, kind: string, occurrence: number) => `${rule}|${kind}|${occurrence}`;

/**
 * A lookahead strategy with the same decisions as Chevrotain's LL(k) one, reading its paths from
 * `tables` (or computing them with Chevrotain's public `getLookaheadPaths` and recording them, when
 * `tables` lacks a production: that is how the tables are made).
 */
export class TableLookahead implements ILookaheadStrategy {
  private readonly llk: ILookaheadStrategy;
  readonly recorded: Record<string, string[][][]> = {};

  constructor(private readonly tables: GrammarTables | undefined, private readonly tokens: ReadonlyMap<string, TokenType>, maxLookahead: number) {
    this.llk = new LLkLookaheadStrategy({ maxLookahead });
  }

  validate(options: Parameters<ILookaheadStrategy["validate"]>[0]): ReturnType<ILookaheadStrategy["validate"]> {
    return this.llk.validate(options);
  }

  private paths(rule: Rule, kind: string, occurrence: number, maxLookahead: number): TokenType[][][] {
    const k = key(rule.name, kind, occurrence);
    const stored = this.tables?.lookahead[k];
    if (stored) {
      return stored.map((alt) => alt.map((path) => path.map((name) => {
        const t = this.tokens.get(name);
        if (!t) throw new Error(`grammar tables name an unknown token '${name}': rebuild (npm run build)`);
        return t;
      })));
    }
    const computed = getLookaheadPaths({ occurrence, rule, prodType: kind as OptionalProductionType | "Alternation", maxLookahead });
    this.recorded[k] = computed.map((alt) => alt.map((path) => path.map((t) => t.name)));
    return computed;
  }

  buildLookaheadForAlternation(options: { prodOccurrence: number; rule: Rule; maxLookahead: number; hasPredicates: boolean }): (orAlts?: { GATE?: () => boolean }[]) => number | undefined {
    const alts = this.paths(options.rule, "Alternation", options.prodOccurrence, options.maxLookahead).map(compile);
    if (!options.hasPredicates && alts.every((alt) => alt.single !== undefined)) {
      // One token decides: a table from token type index to alternative (first alternative wins).
      const choice: (number | undefined)[] = [];
      alts.forEach((alt, i) => {
        alt.single!.forEach((yes, idx) => {
          if (yes && choice[idx] === undefined) choice[idx] = i;
        });
      });
      return function (this: Parser) {
        return choice[this.LA(1).tokenTypeIdx!];
      };
    }
    // Only the alternatives with a path that LA(1) can start are tried (in order, gate first, as
    // Chevrotain does; the gates only read tokens): a call's argument, for one, would otherwise test
    // the sixty-odd two-token paths of a positional one at every argument.
    const predicates = options.hasPredicates;
    const candidates: number[][] = [];
    const always: number[] = [];
    alts.forEach((alt, i) => {
      if (alt.root.end) always.push(i);
      alt.root.next.forEach((next, idx) => {
        if (next !== undefined) (candidates[idx] ??= []).push(i);
      });
    });
    if (always.length > 0) candidates.forEach((list, idx) => { candidates[idx] = [...new Set([...list, ...always])].sort((a, b) => a - b); });
    return function (this: Parser, orAlts?: { GATE?: () => boolean }[]) {
      const tried = candidates[this.LA(1).tokenTypeIdx!] ?? always;
      for (let c = 0; c < tried.length; c++) {
        const i = tried[c]!;
        if (predicates) {
          const gate = orAlts?.[i]?.GATE;
          if (gate !== undefined && gate.call(this) === false) continue;
        }
        if (alts[i]!.test(this)) return i;
      }
      return undefined;
    };
  }

  buildLookaheadForOptional(options: { prodOccurrence: number; rule: Rule; maxLookahead: number; prodType: OptionalProductionType }): () => boolean {
    // Chevrotain's paths for an optional production: [inside, after]; only "inside" enters it.
    const [inside = []] = this.paths(options.rule, options.prodType, options.prodOccurrence, options.maxLookahead);
    const enter = compile(inside);
    return function (this: Parser) {
      return enter.test(this);
    };
  }
}

interface Parser { LA(i: number): IToken }

/**
 * The paths of one alternative as a test of the tokens ahead: a trie by token type index (a category
 * stands for each of its token types), walked one token ahead at a time. `single` is set when every
 * path is one token long (the common case): then the root's table decides.
 */
interface CompiledPaths { single: boolean[] | undefined; root: PathNode; test(parser: Parser): boolean }
/** A node of a paths trie: `end` where a path is complete, `next` by the type index of the next token. */
interface PathNode { end: boolean; next: (PathNode | undefined)[] }

function compile(paths: TokenType[][]): CompiledPaths {
  const root: PathNode = { end: false, next: [] };
  for (const path of paths) {
    let at = [root];
    for (const t of path) {
      const idxs = [t.tokenTypeIdx!, ...(t.categoryMatches ?? [])];
      at = at.flatMap((node) => idxs.map((idx) => (node.next[idx] ??= { end: false, next: [] })));
    }
    for (const node of at) node.end = true;
  }
  const single = paths.every((p) => p.length === 1) ? root.next.map((n) => n !== undefined) : undefined;
  return {
    single, root,
    test(parser) {
      // Same answer as matching each path token by token (some path matches the tokens ahead), in
      // one walk: the tokens ahead pick one branch at each depth.
      let node = root;
      for (let i = 1; !node.end; i++) {
        const next = node.next[parser.LA(i).tokenTypeIdx!];
        if (next === undefined) return false;
        node = next;
      }
      return true;
    },
  };
}

/** The tables to bake in, from a parser constructed without tables (its strategy recorded every path). */
export function tablesOf(strategy: TableLookahead, follows: Record<string, TokenType[]>): GrammarTables {
  return {
    lookahead: Object.fromEntries(Object.entries(strategy.recorded).sort(([a], [b]) => a.localeCompare(b))),
    follows: Object.fromEntries(Object.entries(follows).sort(([a], [b]) => a.localeCompare(b)).map(([k, ts]) => [k, ts.map((t) => t.name)])),
  };
}

export function followsFromTables(tables: GrammarTables, tokens: ReadonlyMap<string, TokenType>): Record<string, TokenType[]> {
  return Object.fromEntries(Object.entries(tables.follows).map(([k, names]) => [k, names.map((n) => tokens.get(n)!)]));
}
