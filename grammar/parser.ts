/**
 * The tcod grammar (docs/LANGUAGE.md, "Declarations" and "Expressions") as a Chevrotain parser with
 * embedded actions: each rule returns its AST node (grammar/ast.ts, built with build.ts) directly;
 * no concrete syntax tree is made.
 *
 * One instance (`tcodParser()`, made on first use) for the process: Chevrotain records the grammar once, at construction;
 * each parse only resets the input. Error recovery is on, so a file with errors still yields a usable
 * AST: a rule an error passes through returns (or hands its caller) the node of what it had parsed
 * (`TcodParser.fail`), the same node a visitor of its partial syntax tree would build.
 *
 * Conventions: each OR alternative that is more than one token is its own rule, except inside an
 * operand, where each rule call costs on every operand of a large file: binary operators are one flat
 * chain (`binaryExpression`, the tree built by precedence when the chain ends), and a primary with its
 * suffixes is read by `unary` itself. Lists with separators
 * accept one trailing comma; fields of `{}` blocks are separated by newlines or optional commas.
 * Comparisons and `..` do not chain (`a < b < c` is a syntax error rather than a silent
 * `(a < b) < c`). Field names, named arguments, members and type names may be keywords (`model: …`).
 *
 * Beyond Chevrotain's recovery (token insertion/deletion, re-sync), three errors are recorded by the
 * grammar itself so that one slip stays one error: an operator without an operand, a missing `,`
 * between two call arguments or list items on one line, and (in index.ts) a missing closer at EOF.
 * Because of the second, the railroad diagrams show the `,` of calls and lists as optional.
 */
import {
  EmbeddedActionsParser, EOF, isRecognitionException, tokenMatcher, type IParserErrorMessageProvider,
  type IRecognitionException, type IToken, type ParserMethod, type TokenType,
} from "chevrotain";
import type {
  Arg, CurriculumDecl, Decl, Expr, Field, FnDecl, ImportDecl, ImportSpec, LetDecl, ModelDecl, NumberLit, Param,
  SweepAxis, SweepDecl, TypeRef, Unit,
} from "./ast.js";
import {
  AstBuilder, endAfter, isReal, tokenEnd, type CurriculumBodyValue, type DeclStart, type FieldBlockResult,
  type FnBodyResult,
} from "./build.js";
import {
  AddOp, allTokens, And, AnyName, As, Colon, Comma, CompareOp, Curriculum, Dot, DotDot, Else, EqEq, Equals,
  Export, False, Fn, From, Greater, GreaterEq, Identifier, If, Import, LBracket, LCurly, Less, LessEq, Let,
  LParen, Minus, Model, MulOp, Not, NotEq, NumberLiteral, Or, Percent, Plus, Product, RBracket, RCurly,
  Return, RParen, Slash, Star, stringValue, StringLiteral, Sweep, Then, True, unitWords, With, Zip,
} from "./lexer.js";
import { followsFromTables, TableLookahead, tablesOf, type GrammarTables } from "./precomputed.js";
import { LineMap } from "./spans.js";

const MAX_LOOKAHEAD = 3;

/** Set by scripts/build.mjs (esbuild `define`) to the tables of this grammar; absent from sources. */
declare const TCOD_GRAMMAR_TABLES: GrammarTables | undefined;
function bakedTables(): GrammarTables | undefined {
  return typeof TCOD_GRAMMAR_TABLES === "undefined" ? undefined : TCOD_GRAMMAR_TABLES;
}

/** Where a rule expected something, the phrase a person would use ("an expression", not a token list). */
const expectedInRule: Readonly<Record<string, string>> = {
  declaration: "a declaration (import, let, fn, model, curriculum or sweep)",
  exportableDeclaration: "let, fn, model or curriculum",
  fnBody: "'=' or '{'",
  curriculumBody: "'{' or '='",
  sweepMode: "'product' or 'zip'",
  expression: "an expression",
  unary: "an expression",
  argument: "an argument",
};

/** Token expectations that read better in the context of one rule. */
const tokenInRule: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  field: { AnyName: "a field name" },
  memberSuffix: { AnyName: "a member name" },
  namedArgument: { AnyName: "an argument name" },
  typeTerm: { AnyName: "a type" },
  sweepAxis: { Identifier: "a sweep target", AnyName: "a field name" },
  importSpec: { Identifier: "an imported name" },
  importDeclaration: { StringLiteral: "a module path string" },
  param: { Identifier: "a parameter name" },
};

export function tokenLabel(tokenType: TokenType, ruleName?: string): string {
  const inRule = ruleName !== undefined ? tokenInRule[ruleName]?.[tokenType.name] : undefined;
  if (inRule !== undefined) return inRule;
  // The only place EOF is expected is after the last declaration: say what may come instead.
  if (tokenType === EOF) return ruleName === "sourceFile" ? expectedInRule["declaration"]! : "end of file";
  return tokenType.LABEL ?? tokenType.name;
}

/**
 * Error messages are the short "expected" phrase only; index.ts combines it with the found token and
 * the catalogue code. Keeping this provider free of prose keeps all message text in the catalogue.
 */
const expectedOnlyMessages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected, ruleName }) => tokenLabel(expected, ruleName),
  // After a whole file: another declaration; after an expression parsed on its own: nothing.
  buildNotAllInputParsedMessage: ({ ruleName }) => (ruleName === "expression" ? "end of input" : expectedInRule["declaration"]!),
  buildNoViableAltMessage: ({ expectedPathsPerAlt, ruleName }) =>
    expectedInRule[ruleName] ?? firstTokensPhrase(expectedPathsPerAlt.flat(), ruleName),
  buildEarlyExitMessage: ({ expectedIterationPaths, ruleName }) =>
    expectedInRule[ruleName] ?? firstTokensPhrase(expectedIterationPaths, ruleName),
};

function firstTokensPhrase(paths: TokenType[][], ruleName: string): string {
  const labels = [...new Set(paths.map((p) => p[0]).filter((t) => t !== undefined).map((t) => tokenLabel(t, ruleName)))];
  if (labels.length === 0) return "something else";
  if (labels.length > 4) return `one of ${labels.slice(0, 4).join(", ")}, …`;
  return labels.length === 1 ? labels[0]! : `${labels.slice(0, -1).join(", ")} or ${labels.at(-1)}`;
}

/**
 * Binary operators by precedence level, loosest first: `or` 0, `and` 1, comparisons 2, `..` 3,
 * `+ -` 4, `* × /` 5 (docs/LANGUAGE.md, "Expressions"). All are left-associative; levels 2 and 3 do
 * not chain. The parser reads them in one loop (`binaryExpression`) and builds the tree by these levels.
 */
export const BINARY_LEVELS = 6;
const levelOfType = new Map<TokenType, number>();
for (const [level, types] of [[0, [Or]], [1, [And]], [2, [LessEq, GreaterEq, EqEq, NotEq, Less, Greater]], [3, [DotDot]], [4, [Plus, Minus]], [5, [Star, Slash]]] as const) {
  for (const t of types) levelOfType.set(t, level);
}
export function binaryLevel(tokenType: TokenType): number | undefined {
  return levelOfType.get(tokenType);
}
const COMPARED = 1;
const RANGED = 2;
/** The flag a level sets in a chain's state when it must not chain (comparisons, `..`), else 0. */
const nonChainingFlag = [0, 0, COMPARED, RANGED, 0, 0];
/** A chain's state after an operator of `level`: a looser operator starts new comparison and `..` groups. */
function afterOperator(flags: number, level: number): number {
  if (level <= 1) return 0;
  if (level === 2) return COMPARED;
  if (level === 3) return flags | RANGED;
  return flags;
}

/** What may follow an operand of a chain in each state: the operators, loosest first, it still accepts. */
const chainFollows: readonly TokenType[][] = [0, 1, 2, 3].map((flags) =>
  [Or, And, CompareOp, DotDot, AddOp, MulOp].filter((_, level) => (flags & nonChainingFlag[level]!) === 0));

/** Chevrotain 11 recovery internals that `TcodParser` reads or extends (traits/recoverable.js, recognizer_engine.js). */
interface FollowKey { ruleName: string; idxInCallingRule: number; inRule: string; chainAt?: number }
interface ChevrotainInternals {
  RULE_STACK_IDX: number;
  RULE_STACK: number[];
  fullRuleNameToShort: Record<string, number>;
  getFollowsForInRuleRecovery(tokType: TokenType, tokIdxInRule: number): TokenType[];
  getCurrFollowKey(): FollowKey;
  buildFullFollowKeyStack(): FollowKey[];
  getFollowSetFromFollowKey(key: FollowKey): TokenType[];
}
const chevrotainRecovery = EmbeddedActionsParser.prototype as unknown as ChevrotainInternals;

/**
 * A token Chevrotain invented during single-token-insertion recovery: the error it recovered from
 * means "missing X" (TC1004) rather than "unexpected Y" (TC1001).
 */
export interface Insertion { expected: TokenType; error: IRecognitionException | undefined }

/** What an error carries out of each rule it passes through: that rule's node, built from what it had parsed. */
interface Carrier { partial?: unknown; hasPartial?: boolean }

/**
 * Every rule's `recoveryValueFunc`: when Chevrotain re-syncs in a rule, the rule's value is what the
 * rule had built before the error (its own catch put it on the exception, `TcodParser.fail`).
 */
const partialOf = (e: unknown): never => (e as Carrier).partial as never;
const recovering = { recoveryValueFunc: partialOf };

type ChainItem = Expr | IToken | undefined;

export class TcodParser extends EmbeddedActionsParser {
  /** Insertions of the current parse, in order; reset by `load()`. */
  insertions: Insertion[] = [];
  /** Operators of the current parse left without an operand (`batch: 16 tasks ×` ⏎): TC1004. */
  danglingOperators: IToken[] = [];
  /** Tokens after which a `,` is missing between two items on one line (`f(a: 1 b: 2)`): TC1004. */
  missingCommas: IToken[] = [];

  /** The lookahead strategy; after construction without tables, it holds the paths it computed. */
  readonly lookahead: TableLookahead;

  /** Node constructors over the current input's line table and doc comments. */
  private readonly b = new AstBuilder();

  /**
   * `tables` (precomputed.ts): lookahead paths and re-sync follows computed at build time; without
   * them Chevrotain computes both here, which is most of the CLI's start-up.
   */
  constructor(tables: GrammarTables | undefined = bakedTables()) {
    const lookahead = new TableLookahead(tables, new Map(allTokens.map((t) => [t.name, t])), MAX_LOOKAHEAD);
    super(allTokens as TokenType[], {
      recoveryEnabled: true,
      maxLookahead: MAX_LOOKAHEAD,
      lookaheadStrategy: lookahead,
      errorMessageProvider: expectedOnlyMessages,
      // The bundled CLI skips grammar validation at start-up (tests run it on the sources).
      skipValidations: process.env.TCOD_SKIP_GRAMMAR_VALIDATION === "1",
    });
    this.lookahead = lookahead;
    // With tables, Chevrotain's follow-set computation (done only when recovery is on) is skipped and
    // the baked follow sets are installed instead. `recoveryEnabled`/`resyncFollows` are Chevrotain
    // 11's fields for exactly this (traits/recoverable.js); the corpus test guards the equivalence.
    const self = this as unknown as { recoveryEnabled: boolean; resyncFollows: Record<string, TokenType[]> };
    if (tables) self.recoveryEnabled = false;
    this.performSelfAnalysis();
    if (tables) {
      self.recoveryEnabled = true;
      self.resyncFollows = followsFromTables(tables, new Map(allTokens.map((t) => [t.name, t])));
    }
  }

  /** The re-sync follow sets Chevrotain computed (for the build-time tables). */
  followSets(): Record<string, TokenType[]> {
    return (this as unknown as { resyncFollows: Record<string, TokenType[]> }).resyncFollows;
  }

  /** Starts a parse of `tokens`, whose spans `lines` gives and whose doc comments are `docs`. */
  load(tokens: IToken[], lines: LineMap, docs: readonly IToken[] = []): void {
    this.insertions = [];
    this.danglingOperators = [];
    this.missingCommas = [];
    this.chain.length = 0;
    this.anchor = 0;
    this.declStart = undefined;
    this.recordBlock = false;
    this.realCount = 0;
    this.lastRealEnd = 0;
    this.b.reset(lines, docs);
    this.input = tokens;
  }

  /** Drops the references a finished parse holds (its tokens, text and partial results). */
  release(): void {
    this.input = [];
    this.chain.length = 0;
    this.b.reset(emptyLines, []);
  }

  protected override getTokenToInsert(tokType: TokenType): IToken {
    // Chevrotain saves the mismatch error just before it tries insertion, so it is the last one.
    this.insertions.push({ expected: tokType, error: this.errors.at(-1) });
    return super.getTokenToInsert(tokType);
  }

  // ---- partial results and positions ----------------------------------------------------------

  /**
   * Real tokens consumed so far, and the end of the last one. A rule that needs the end of its last
   * real token (a `{}` block, a function body: where a declaration ends when its closer is missing)
   * notes the count when it starts.
   */
  private realCount = 0;
  private lastRealEnd = 0;

  consumeInternal(tokType: TokenType, idx: number, options: unknown): IToken {
    const t = consumeInternal.call(this, tokType, idx, options);
    if (t.isInsertedInRecovery !== true) {
      this.realCount++;
      this.lastRealEnd = t.startOffset + t.image.length;
    }
    return t;
  }

  /** The end of the last real token consumed since the count was `mark`, if any. */
  private endSince(mark: number): number | undefined {
    return this.realCount > mark ? this.lastRealEnd : undefined;
  }

  /**
   * Where a missing expression would be: set by each rule just before it calls a rule that builds an
   * expression, and read by that rule when it starts (see build.ts: the end of what came before).
   */
  private anchor = 0;
  /** Set by `exportableDeclaration` for the declaration it calls; undefined for a block's `let`. */
  private declStart: DeclStart | undefined;
  /** Set by `unary` when a `{}` block is a record literal (else it is a declaration's body). */
  private recordBlock = false;

  /**
   * The error handling of every rule: an error passing through a rule (thrown by one of its own
   * tokens, or out of a rule it called) leaves with the rule's node built from what the rule had
   * parsed (`build`, given the partial node of the called rule the error came out of, if it came out
   * of one). If Chevrotain re-syncs in this rule, that node is the rule's value (`partialOf`);
   * otherwise the caller's catch receives it in turn. A declaration that breaks off keeps what it
   * had, as its concrete syntax tree did.
   */
  private fail(e: unknown, build: (child: unknown, fromChild: boolean) => unknown): unknown {
    if (!isRecognitionException(e as Error)) return e;
    const c = e as Carrier;
    c.partial = build(c.partial, c.hasPartial === true);
    c.hasPartial = true;
    return e;
  }

  /**
   * Re-sync recovery (Chevrotain's, when a rule fails and no single token can be inserted or
   * deleted) skips to the first token that may follow some rule on the stack, and the innermost rule
   * that token may follow returns its partial node. With one rule per precedence level, an operand's
   * stack held one frame per level, each followed by its own operator, and a comparison's or a
   * `..`'s left operand only until that group had its operator. The flat `binaryExpression` has one
   * frame per chain: an operand of it may be followed by the operators that chain's state still
   * accepts, listed in the order the level frames were stacked, so re-sync picks the same token as
   * before, and the chain keeps what the level frames kept.
   */
  getFollowSetFromFollowKey(key: FollowKey): TokenType[] {
    if (key.chainAt !== undefined) return chainFollows[this.chainFlags[key.chainAt]!]!;
    return chevrotainRecovery.getFollowSetFromFollowKey.call(this, key);
  }

  getCurrFollowKey(): FollowKey {
    return this.markChainOperand(chevrotainRecovery.getCurrFollowKey.call(this), this.ruleDepth - 1);
  }

  buildFullFollowKeyStack(): FollowKey[] {
    const keys = chevrotainRecovery.buildFullFollowKeyStack.call(this);
    for (let i = 1; i < keys.length; i++) keys[i] = this.markChainOperand(keys[i]!, i - 1);
    return keys;
  }

  /**
   * Single-token insertion (in-rule recovery) inserts a missing token when the token found may follow
   * it; Chevrotain finds what may follow by walking the grammar along the rule stack, through the
   * rules that may end there. That walk reaches at most one chain (expressions nest in chains only
   * inside brackets, which end the walk): the innermost. The level rules let it reach a comparison or
   * `..` only in such a group's left operand; the flat chain's loop offers all six operators, so the
   * ones this chain's state no longer accepts are taken out again.
   */
  getFollowsForInRuleRecovery(tokType: TokenType, tokIdxInRule: number): TokenType[] {
    const follows = chevrotainRecovery.getFollowsForInRuleRecovery.call(this, tokType, tokIdxInRule);
    const internals = this as unknown as ChevrotainInternals;
    const chain = internals.fullRuleNameToShort["binaryExpression"];
    for (let depth = internals.RULE_STACK_IDX; depth >= 0; depth--) {
      if (internals.RULE_STACK[depth] !== chain) continue;
      const flags = this.chainFlags[depth]!;
      return flags === 0 ? follows : follows.filter((t) => !((flags & COMPARED && t === CompareOp) || (flags & RANGED && t === DotDot)));
    }
    return follows;
  }

  /** A copy of `key` that names its chain, when it is an operand of the chain at rule depth `parentDepth`. */
  private markChainOperand(key: FollowKey, parentDepth: number): FollowKey {
    return key.inRule === "binaryExpression" && key.ruleName === "unary" ? { ...key, chainAt: parentDepth } : key;
  }

  /** `6 steps`, `1 turn`, `50 %`: a unit word directly after a number, unless it starts a field (`steps:`). */
  private unitFollows(): boolean {
    const next = this.LA(1);
    if (next.tokenType === Percent) return true;
    return next.tokenType === Identifier && unitWords.has(next.image) && this.LA(2).tokenType !== Colon;
  }

  /**
   * A field starts here: an identifier, or a keyword used as a name (`model: …`) when a `:` follows.
   * Without the `:` check, a missing `}` before `curriculum b {` would read `curriculum` as a field.
   */
  private fieldStarts(): boolean {
    return this.LA(1).tokenType === Identifier || this.LA(2).tokenType === Colon;
  }

  /** `name :` ahead: the next field of a `{}` block, never an operand. */
  private fieldAhead(): boolean {
    return this.LA(2).tokenType === Colon && tokenMatcher(this.LA(1), AnyName);
  }

  /**
   * `op operand`, where a missing operand is recorded rather than recovered by skipping tokens.
   * Fields are separated by newlines, so in `batch: 16 tasks ×` ⏎ `horizon: …` the operand must not
   * swallow `horizon` (that would turn one error into a cascade); the operator is reported instead.
   */
  private operatorThenOperand(op: TokenType, operand: ParserMethod<[], Expr>, name: "-" | "not"): Expr {
    const anchor = this.anchor;
    let opToken: IToken | undefined;
    let right: Expr | undefined;
    try {
      opToken = this.CONSUME9(op);
      let option = this.operandOptions.get(operand);
      if (option === undefined) this.operandOptions.set(operand, (option = { GATE: () => !this.fieldAhead(), DEF: () => this.SUBRULE9(operand) }));
      if (this.RECORDING_PHASE) {
        this.OPTION9(option);
        return undefined as never;
      }
      this.anchor = tokenEnd(opToken);
      right = this.OPTION9(option);
      if (right === undefined) this.danglingOperators.push(opToken);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.prefixed(name, opToken, fromChild ? (child as Expr) : right, anchor));
    }
    return this.prefixed(name, opToken, right, anchor);
  }

  private prefixed(op: "-" | "not", opToken: IToken | undefined, operand: Expr | undefined, anchor: number): Expr {
    const start = isReal(opToken) ? opToken.startOffset : anchor;
    const value = operand ?? this.b.errorAt(endAfter(start, opToken));
    return { kind: "unary", op, operand: value, span: this.b.span(start, value.span.end.offset) };
  }

  /** operatorThenOperand's optional operand, one per operand rule (built once, not at each operator). */
  private readonly operandOptions = new Map<ParserMethod<[], Expr>, { GATE: () => boolean; DEF: () => Expr }>();

  /** Before a `,`: true unless the comma is a trailing one, directly before `closer`. */
  private moreAfterComma(closer: TokenType): boolean {
    return this.LA(2).tokenType !== closer;
  }

  /**
   * Another item of a comma-separated list follows: after a `,` (not a trailing one), or, with the
   * comma forgotten, on the same line as the previous item. A forgotten comma across lines is not
   * guessed: there the list more likely lacks its closer (`f(a` ⏎ `next_field: …`).
   */
  private nextItemFollows(closer: TokenType): boolean {
    const next = this.LA(1);
    if (next.tokenType === Comma) return this.moreAfterComma(closer);
    if (next.tokenType === closer || next.tokenType === EOF) return false;
    const previous = this.LA(0);
    return !lineBreakIn(this.b.lines.text, previous.startOffset + previous.image.length, next.startOffset);
  }

  /** The separator before the next item; a missing one is recorded (TC1004) instead of ending the list. */
  private separatorComma(): void {
    const comma = this.OPTION8(() => this.CONSUME8(Comma));
    this.ACTION(() => {
      if (comma === undefined) this.missingCommas.push(this.LA(0));
    });
  }

  // ---- declarations ----------------------------------------------------------------------------

  sourceFile = this.RULE("sourceFile", (): Decl[] => {
    const decls: Decl[] = [];
    try {
      this.MANY(() => {
        const declaration = this.SUBRULE(this.declaration);
        if (declaration !== undefined && !this.RECORDING_PHASE) decls.push(declaration);
      });
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && child !== undefined) decls.push(child as Decl);
        return decls;
      });
    }
    return decls;
  }, recovering);

  private readonly declarationAlts = [
    { ALT: () => this.SUBRULE(this.importDeclaration) },
    { ALT: () => this.SUBRULE(this.exportableDeclaration) },
    { ALT: () => this.SUBRULE(this.sweepDeclaration) },
  ];
  declaration = this.RULE("declaration", (): Decl | undefined => {
    try {
      return this.OR<Decl | undefined>(this.declarationAlts);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => (fromChild ? child : undefined));
    }
  }, recovering);

  importDeclaration = this.RULE("importDeclaration", (): ImportDecl | undefined => {
    let keyword: IToken | undefined;
    let from: IToken | undefined;
    const names: ImportSpec[] = [];
    const add = (spec: ImportSpec | undefined) => {
      if (spec !== undefined && !this.RECORDING_PHASE) names.push(spec);
    };
    try {
      keyword = this.CONSUME(Import);
      this.CONSUME(LCurly);
      add(this.SUBRULE(this.importSpec));
      this.MANY({
        GATE: () => this.moreAfterComma(RCurly),
        DEF: () => {
          this.CONSUME(Comma);
          add(this.SUBRULE2(this.importSpec));
        },
      });
      this.OPTION(() => this.CONSUME2(Comma));
      this.CONSUME(RCurly);
      this.CONSUME(From);
      from = this.CONSUME(StringLiteral);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild) add(child as ImportSpec | undefined);
        return this.importDecl(keyword, names, from);
      });
    }
    return this.RECORDING_PHASE ? undefined : this.importDecl(keyword, names, from);
  }, recovering);

  private importDecl(keyword: IToken | undefined, names: ImportSpec[], from: IToken | undefined): ImportDecl | undefined {
    if (!isReal(from) || !isReal(keyword)) return undefined;
    return {
      kind: "import", names, from: stringValue(from), fromSpan: this.b.tokenSpan(from),
      span: this.b.span(keyword.startOffset, tokenEnd(from)),
    };
  }

  importSpec = this.RULE("importSpec", (): ImportSpec | undefined => {
    let name: IToken | undefined;
    let alias: IToken | undefined;
    try {
      name = this.CONSUME(Identifier, { LABEL: "name" });
      this.OPTION(() => {
        this.CONSUME(As);
        alias = this.CONSUME2(Identifier, { LABEL: "alias" });
      });
    } catch (e) {
      throw this.fail(e, () => this.importSpecOf(name, alias));
    }
    return this.RECORDING_PHASE ? undefined : this.importSpecOf(name, alias);
  }, recovering);

  private importSpecOf(name: IToken | undefined, alias: IToken | undefined): ImportSpec | undefined {
    if (!isReal(name)) return undefined;
    const realAlias = isReal(alias) ? alias : undefined;
    return {
      name: name.image, nameSpan: this.b.tokenSpan(name),
      ...(realAlias !== undefined ? { alias: realAlias.image } : {}),
      span: this.b.span(name.startOffset, endAfter(tokenEnd(name), realAlias)),
    };
  }

  private readonly exportableAlts = [
    { ALT: () => this.SUBRULE(this.letDeclaration) },
    { ALT: () => this.SUBRULE(this.fnDeclaration) },
    { ALT: () => this.SUBRULE(this.modelDeclaration) },
    { ALT: () => this.SUBRULE(this.curriculumDeclaration) },
  ];
  exportableDeclaration = this.RULE("exportableDeclaration", (): Decl | undefined => {
    try {
      const exportToken = this.OPTION(() => this.CONSUME(Export));
      // The declaration's first token is the one that chose it: real, and where it starts.
      if (!this.RECORDING_PHASE) {
        const exported = isReal(exportToken);
        this.declStart = { exported, start: exported ? exportToken.startOffset : this.LA(1).startOffset };
      }
      const inner = this.OR<Decl | undefined>(this.exportableAlts);
      this.declStart = undefined;
      return inner;
    } catch (e) {
      this.declStart = undefined;
      throw this.fail(e, (child, fromChild) => (fromChild ? child : undefined));
    }
  }, recovering);

  /** The `export`/start of the declaration being parsed (undefined for a `let` of a block body). */
  private takeDeclStart(): DeclStart | undefined {
    const param = this.declStart;
    this.declStart = undefined;
    return param;
  }

  letDeclaration = this.RULE("letDeclaration", (): LetDecl | undefined => {
    const param = this.takeDeclStart();
    let keyword: IToken | undefined;
    let name: IToken | undefined;
    let type = undefined as TypeRef | undefined;
    let equals: IToken | undefined;
    let value: Expr | undefined;
    let stage = 0;
    try {
      keyword = this.CONSUME(Let);
      name = this.CONSUME(Identifier);
      this.OPTION(() => {
        this.CONSUME(Colon);
        stage = 1;
        type = this.SUBRULE(this.typeRef);
        stage = 0;
      });
      equals = this.CONSUME(Equals);
      if (!this.RECORDING_PHASE) this.anchor = letAnchor(name, type, equals);
      stage = 2;
      value = this.SUBRULE(this.expression);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) type = child as TypeRef | undefined;
        if (fromChild && stage === 2) value = child as Expr;
        return this.letDecl(param, keyword, name, type, equals, value);
      });
    }
    return this.RECORDING_PHASE ? undefined : this.letDecl(param, keyword, name, type, equals, value);
  }, recovering);

  private letDecl(param: DeclStart | undefined, keyword: IToken | undefined, name: IToken | undefined, type: TypeRef | undefined, equals: IToken | undefined, value: Expr | undefined): LetDecl | undefined {
    if (!isReal(name)) return undefined;
    const start = param?.start ?? (isReal(keyword) ? keyword.startOffset : name.startOffset);
    const anchor = letAnchor(name, type, equals);
    const v = value ?? this.b.errorAt(anchor);
    const doc = this.b.docBefore(start);
    // Built key by key (the order is the AST's: optional `type` and `doc` where they belong), not
    // with spreads of optional parts: one per declaration of the file.
    const decl = { kind: "let", exported: param?.exported ?? false, name: name.image, nameSpan: this.b.tokenSpan(name) } as LetDecl;
    if (type) decl.type = type;
    decl.value = v;
    if (doc !== undefined) decl.doc = doc;
    decl.span = this.b.span(start, Math.max(v.span.end.offset, anchor));
    return decl;
  }

  fnDeclaration = this.RULE("fnDeclaration", (): FnDecl | undefined => {
    const param = this.takeDeclStart();
    let name: IToken | undefined;
    let rParen: IToken | undefined;
    let colon: IToken | undefined;
    let returnType = undefined as TypeRef | undefined;
    let body = undefined as FnBodyResult | undefined;
    const params: Param[] = [];
    const add = (p: Param | undefined) => {
      if (p !== undefined && !this.RECORDING_PHASE) params.push(p);
    };
    let stage = 0;
    try {
      this.CONSUME(Fn);
      name = this.CONSUME(Identifier);
      this.CONSUME(LParen);
      this.OPTION(() => {
        stage = 1;
        add(this.SUBRULE(this.param));
        stage = 0;
        this.MANY({
          GATE: () => this.moreAfterComma(RParen),
          DEF: () => {
            this.CONSUME(Comma);
            stage = 1;
            add(this.SUBRULE2(this.param));
            stage = 0;
          },
        });
        this.OPTION2(() => this.CONSUME2(Comma));
      });
      rParen = this.CONSUME(RParen);
      this.OPTION3(() => {
        colon = this.CONSUME(Colon);
        stage = 2;
        returnType = this.SUBRULE(this.typeRef);
        stage = 0;
      });
      if (!this.RECORDING_PHASE) this.anchor = fnAnchor(name, rParen, colon, returnType);
      stage = 3;
      body = this.SUBRULE(this.fnBody);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) add(child as Param | undefined);
        if (fromChild && stage === 2) returnType = child as TypeRef | undefined;
        if (fromChild && stage === 3) body = child as FnBodyResult;
        return this.fnDecl(param!, name, params, rParen, colon, returnType, body);
      });
    }
    return this.RECORDING_PHASE ? undefined : this.fnDecl(param!, name, params, rParen, colon, returnType, body);
  }, recovering);

  private fnDecl(param: DeclStart, name: IToken | undefined, params: Param[], rParen: IToken | undefined, colon: IToken | undefined, returnType: TypeRef | undefined, bodyResult: FnBodyResult | undefined): FnDecl | undefined {
    if (!isReal(name)) return undefined;
    const anchor = fnAnchor(name, rParen, colon, returnType);
    const lets = bodyResult?.lets ?? [];
    const body = bodyResult?.body ?? this.b.errorAt(anchor);
    const end = bodyResult !== undefined ? (bodyResult.end ?? anchor) : anchor;
    const doc = this.b.docBefore(param.start);
    const decl = { kind: "fn", exported: param.exported, name: name.image, nameSpan: this.b.tokenSpan(name), params } as FnDecl;
    if (returnType) decl.returnType = returnType;
    decl.lets = lets;
    decl.body = body;
    if (doc !== undefined) decl.doc = doc;
    decl.span = this.b.span(param.start, Math.max(end, body.span.end.offset));
    return decl;
  }

  param = this.RULE("param", (): Param | undefined => {
    let name: IToken | undefined;
    let type = undefined as TypeRef | undefined;
    let equals: IToken | undefined;
    let fallback: Expr | undefined;
    let stage = 0;
    try {
      name = this.CONSUME(Identifier);
      this.OPTION(() => {
        this.CONSUME(Colon);
        stage = 1;
        type = this.SUBRULE(this.typeRef);
        stage = 0;
      });
      this.OPTION2(() => {
        equals = this.CONSUME(Equals);
        if (!this.RECORDING_PHASE && isReal(name)) this.anchor = endAfter(type?.span.end.offset ?? tokenEnd(name), equals);
        stage = 2;
        fallback = this.SUBRULE(this.expression);
        stage = 0;
      });
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) type = child as TypeRef | undefined;
        if (fromChild && stage === 2) fallback = child as Expr;
        return this.paramOf(name, type, equals, fallback);
      });
    }
    return this.RECORDING_PHASE ? undefined : this.paramOf(name, type, equals, fallback);
  }, recovering);

  private paramOf(name: IToken | undefined, type: TypeRef | undefined, equalsToken: IToken | undefined, value: Expr | undefined): Param | undefined {
    if (!isReal(name)) return undefined;
    const equals = isReal(equalsToken) ? equalsToken : undefined;
    const fallback = equals !== undefined || value !== undefined
      ? value ?? this.b.errorAt(endAfter(type?.span.end.offset ?? tokenEnd(name), equals))
      : undefined;
    const end = Math.max(tokenEnd(name), type?.span.end.offset ?? 0, fallback?.span.end.offset ?? 0, endAfter(0, equals));
    const param = { name: name.image, nameSpan: this.b.tokenSpan(name) } as Param;
    if (type) param.type = type;
    if (fallback) param.default = fallback;
    param.span = this.b.span(name.startOffset, end);
    return param;
  }

  private readonly fnBodyAlts = [
    { ALT: () => this.SUBRULE(this.expressionBody) },
    { ALT: () => this.SUBRULE(this.blockBody) },
  ];
  fnBody = this.RULE("fnBody", (): FnBodyResult => {
    const anchor = this.anchor;
    const mark = this.realCount;
    let inner: { lets: LetDecl[]; body: Expr } | undefined;
    try {
      inner = this.OR(this.fnBodyAlts);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.fnBodyOf(fromChild ? (child as { lets: LetDecl[]; body: Expr }) : undefined, anchor, mark));
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.fnBodyOf(inner, anchor, mark);
  }, recovering);

  private fnBodyOf(inner: { lets: LetDecl[]; body: Expr } | undefined, anchor: number, mark: number): FnBodyResult {
    return { lets: inner?.lets ?? [], body: inner?.body ?? this.b.errorAt(anchor), end: this.endSince(mark) };
  }

  expressionBody = this.RULE("expressionBody", (): { lets: LetDecl[]; body: Expr } => {
    const anchor = this.anchor;
    let equals: IToken | undefined;
    let value: Expr | undefined;
    try {
      equals = this.CONSUME(Equals);
      this.anchor = endAfter(anchor, equals);
      value = this.SUBRULE(this.expression);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => ({ lets: [], body: (fromChild ? (child as Expr) : undefined) ?? this.b.errorAt(endAfter(anchor, equals)) }));
    }
    return this.RECORDING_PHASE ? (undefined as never) : { lets: [], body: value };
  }, recovering);

  blockBody = this.RULE("blockBody", (): { lets: LetDecl[]; body: Expr } => {
    const anchor = this.anchor;
    const lets: LetDecl[] = [];
    const add = (l: LetDecl | undefined) => {
      if (l !== undefined && !this.RECORDING_PHASE) lets.push(l);
    };
    let lCurly: IToken | undefined;
    let ret: IToken | undefined;
    let value: Expr | undefined;
    let stage = 0;
    const bodyAnchor = () => Math.max(endAfter(anchor, lCurly, ret), lets.at(-1)?.span.end.offset ?? 0);
    try {
      lCurly = this.CONSUME(LCurly);
      this.MANY(() => {
        stage = 1;
        add(this.SUBRULE(this.letDeclaration));
        stage = 0;
      });
      ret = this.CONSUME(Return);
      if (!this.RECORDING_PHASE) this.anchor = bodyAnchor();
      stage = 2;
      value = this.SUBRULE(this.expression);
      stage = 0;
      this.CONSUME(RCurly);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) add(child as LetDecl | undefined);
        if (fromChild && stage === 2) value = child as Expr;
        return { lets, body: value ?? this.b.errorAt(bodyAnchor()) };
      });
    }
    return this.RECORDING_PHASE ? (undefined as never) : { lets, body: value };
  }, recovering);

  modelDeclaration = this.RULE("modelDeclaration", (): ModelDecl | undefined => {
    const param = this.takeDeclStart();
    let name: IToken | undefined;
    let block: FieldBlockResult | undefined;
    try {
      this.CONSUME(Model);
      name = this.CONSUME(Identifier);
      block = this.SUBRULE(this.fieldBlock) as FieldBlockResult;
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.modelDecl(param!, name, fromChild ? (child as FieldBlockResult) : block));
    }
    return this.RECORDING_PHASE ? undefined : this.modelDecl(param!, name, block);
  }, recovering);

  private modelDecl(param: DeclStart, name: IToken | undefined, block: FieldBlockResult | undefined): ModelDecl | undefined {
    if (!isReal(name)) return undefined;
    const doc = this.b.docBefore(param.start);
    return {
      kind: "model", exported: param.exported, name: name.image, nameSpan: this.b.tokenSpan(name),
      fields: block?.fields ?? [], ...(doc !== undefined ? { doc } : {}),
      span: this.b.span(param.start, Math.max(tokenEnd(name), block?.end ?? 0)),
    };
  }

  curriculumDeclaration = this.RULE("curriculumDeclaration", (): CurriculumDecl | undefined => {
    const param = this.takeDeclStart();
    let name: IToken | undefined;
    let body: CurriculumBodyResult | undefined;
    try {
      this.CONSUME(Curriculum);
      name = this.CONSUME(Identifier);
      body = this.SUBRULE(this.curriculumBody);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.curriculumDecl(param!, name, fromChild ? (child as CurriculumBodyResult) : body));
    }
    return this.RECORDING_PHASE ? undefined : this.curriculumDecl(param!, name, body);
  }, recovering);

  private curriculumDecl(param: DeclStart, name: IToken | undefined, bodyResult: CurriculumBodyResult | undefined): CurriculumDecl | undefined {
    if (!isReal(name) || bodyResult === undefined) return undefined;
    const body = bodyResult.value;
    if (body === undefined) return undefined;
    const doc = this.b.docBefore(param.start);
    return {
      kind: "curriculum", exported: param.exported, name: name.image, nameSpan: this.b.tokenSpan(name),
      ...(body.base ? { base: body.base } : {}), fields: body.fields, ...(doc !== undefined ? { doc } : {}),
      span: this.b.span(param.start, Math.max(tokenEnd(name), bodyResult.end ?? 0)),
    };
  }

  private readonly curriculumBodyAlts = [
    { ALT: () => this.SUBRULE(this.fieldBlock) as FieldBlockResult | CurriculumBodyValue | undefined },
    { ALT: () => this.SUBRULE(this.derivedCurriculum) as FieldBlockResult | CurriculumBodyValue | undefined },
  ];
  curriculumBody = this.RULE("curriculumBody", (): CurriculumBodyResult => {
    const mark = this.realCount;
    let inner: FieldBlockResult | CurriculumBodyValue | undefined;
    let chosen = false;
    try {
      inner = this.OR(this.curriculumBodyAlts);
      chosen = true;
    } catch (e) {
      throw this.fail(e, (child, fromChild) => ({ value: fromChild ? curriculumValue(child as FieldBlockResult | CurriculumBodyValue | undefined) : undefined, end: this.endSince(mark) }));
    }
    return this.RECORDING_PHASE ? (undefined as never) : { value: chosen ? curriculumValue(inner) : undefined, end: this.endSince(mark) };
  }, recovering);

  /** `= base with { … }` */
  derivedCurriculum = this.RULE("derivedCurriculum", (): CurriculumBodyValue | undefined => {
    let base: IToken | undefined;
    let block: FieldBlockResult | undefined;
    try {
      this.CONSUME(Equals);
      base = this.CONSUME(Identifier);
      this.CONSUME(With);
      block = this.SUBRULE(this.fieldBlock) as FieldBlockResult;
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.derived(base, fromChild ? (child as FieldBlockResult) : block));
    }
    return this.RECORDING_PHASE ? undefined : this.derived(base, block);
  }, recovering);

  private derived(base: IToken | undefined, block: FieldBlockResult | undefined): CurriculumBodyValue | undefined {
    // Without its base, a derived curriculum would be checked as a full one: skip it instead.
    if (!isReal(base)) return undefined;
    return { base: { name: base.image, span: this.b.tokenSpan(base) }, fields: block?.fields ?? [] };
  }

  /**
   * `{ name: expr … }`: declaration bodies (→ `FieldBlockResult`) and, when `unary` set `recordBlock`,
   * record literals (→ a `record` expression) alike.
   */
  fieldBlock = this.RULE("fieldBlock", (): FieldBlockResult | Expr => {
    const record = this.recordBlock;
    this.recordBlock = false;
    const anchor = this.anchor;
    const mark = this.realCount;
    const fields: Field[] = [];
    const add = (f: Field | undefined) => {
      if (f !== undefined && !this.RECORDING_PHASE) fields.push(f);
    };
    let lCurly: IToken | undefined;
    try {
      lCurly = this.CONSUME(LCurly);
      this.MANY({
        GATE: () => this.fieldStarts(),
        DEF: () => {
          add(this.SUBRULE(this.field));
          this.OPTION(() => this.CONSUME(Comma));
        },
      });
      this.CONSUME(RCurly);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild) add(child as Field | undefined);
        return this.fieldBlockOf(record, fields, lCurly, anchor, mark);
      });
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.fieldBlockOf(record, fields, lCurly, anchor, mark);
  }, recovering);

  private fieldBlockOf(record: boolean, fields: Field[], lCurly: IToken | undefined, anchor: number, mark: number): FieldBlockResult | Expr {
    const end = this.endSince(mark);
    if (!record) return { fields, end };
    // A record's `{` chose it, so it is real: the block spans from it to its last real token.
    const span = end === undefined || !isReal(lCurly) ? this.b.span(anchor, anchor) : this.b.span(lCurly.startOffset, end);
    return { kind: "record", fields, span };
  }

  field = this.RULE("field", (): Field | undefined => {
    let name: IToken | undefined;
    let colon: IToken | undefined;
    let value: Expr | undefined;
    try {
      name = this.CONSUME(AnyName);
      colon = this.CONSUME(Colon);
      if (!this.RECORDING_PHASE && isReal(name)) this.anchor = endAfter(tokenEnd(name), colon);
      value = this.SUBRULE(this.expression);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.fieldOf(name, colon, fromChild ? (child as Expr) : value));
    }
    return this.RECORDING_PHASE ? undefined : this.fieldOf(name, colon, value);
  }, recovering);

  private fieldOf(name: IToken | undefined, colon: IToken | undefined, value: Expr | undefined): Field | undefined {
    if (!isReal(name)) return undefined;
    const v = value ?? this.b.errorAt(endAfter(tokenEnd(name), colon));
    return {
      name: name.image, nameSpan: this.b.tokenSpan(name), value: v,
      span: this.b.span(name.startOffset, Math.max(tokenEnd(name), v.span.end.offset)),
    };
  }

  sweepDeclaration = this.RULE("sweepDeclaration", (): SweepDecl | undefined => {
    let keyword: IToken | undefined;
    let name: IToken | undefined;
    let mode: "product" | "zip" | undefined;
    let rCurly: IToken | undefined;
    const axes: SweepAxis[] = [];
    const add = (a: SweepAxis | undefined) => {
      if (a !== undefined && !this.RECORDING_PHASE) axes.push(a);
    };
    let stage = 0;
    try {
      keyword = this.CONSUME(Sweep);
      name = this.CONSUME(Identifier);
      stage = 1;
      mode = this.SUBRULE(this.sweepMode);
      stage = 0;
      this.CONSUME(LCurly);
      this.MANY(() => {
        stage = 2;
        add(this.SUBRULE(this.sweepAxis));
        stage = 0;
        this.OPTION(() => this.CONSUME(Comma));
      });
      rCurly = this.CONSUME(RCurly);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) mode = child as "product" | "zip" | undefined;
        if (fromChild && stage === 2) add(child as SweepAxis | undefined);
        return this.sweepDecl(keyword, name, mode, axes, rCurly);
      });
    }
    return this.RECORDING_PHASE ? undefined : this.sweepDecl(keyword, name, mode, axes, rCurly);
  }, recovering);

  private sweepDecl(keyword: IToken | undefined, name: IToken | undefined, mode: "product" | "zip" | undefined, axes: SweepAxis[], rCurly: IToken | undefined): SweepDecl | undefined {
    if (!isReal(keyword) || !isReal(name) || mode === undefined) return undefined;
    const end = endAfter(Math.max(tokenEnd(name), axes.at(-1)?.span.end.offset ?? 0), rCurly);
    return {
      kind: "sweep", name: name.image, nameSpan: this.b.tokenSpan(name), mode, axes,
      span: this.b.span(keyword.startOffset, end),
    };
  }

  private readonly sweepModeAlts = [
    { ALT: () => this.CONSUME(Product) },
    { ALT: () => this.CONSUME(Zip) },
  ];
  sweepMode = this.RULE("sweepMode", (): "product" | "zip" | undefined => {
    let mode: IToken | undefined;
    try {
      mode = this.OR(this.sweepModeAlts);
    } catch (e) {
      throw this.fail(e, () => undefined);
    }
    if (!isReal(mode)) return undefined;
    return mode.tokenType === Product ? "product" : "zip";
  }, recovering);

  /** `k: [..]` or `curriculum.field: [..]` */
  sweepAxis = this.RULE("sweepAxis", (): SweepAxis | undefined => {
    let head: IToken | undefined;
    const rest: IToken[] = [];
    let list: Expr | undefined;
    try {
      head = this.CONSUME(Identifier);
      this.MANY(() => {
        this.CONSUME(Dot);
        const part = this.CONSUME(AnyName);
        if (!this.RECORDING_PHASE) rest.push(part);
      });
      this.CONSUME(Colon);
      if (!this.RECORDING_PHASE && isReal(head)) this.anchor = tokenEnd(head);
      list = this.SUBRULE(this.listLiteral);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.sweepAxisOf(head, rest, fromChild ? (child as Expr) : list));
    }
    return this.RECORDING_PHASE ? undefined : this.sweepAxisOf(head, rest, list);
  }, recovering);

  private sweepAxisOf(head: IToken | undefined, rest: IToken[], values: Expr | undefined): SweepAxis | undefined {
    // A partial target (`cur.`) or a missing value list would only produce follow-on errors.
    if (!isReal(head) || !rest.every(isReal) || values === undefined || values.kind !== "list") return undefined;
    const last = rest.at(-1) ?? head;
    return {
      target: [head.image, ...rest.map((t) => t.image)], targetSpan: this.b.span(head.startOffset, tokenEnd(last)),
      values: values.items, span: this.b.span(head.startOffset, values.span.end.offset),
    };
  }

  // ---- types -----------------------------------------------------------------------------------

  /** `number`, `tasks×rollouts`, `steps/turns`, `list<turns>`, `per_turn<number>` */
  typeRef = this.RULE("typeRef", (): TypeRef | undefined => {
    const terms: (TypeRef | undefined)[] = [];
    const ops: IToken[] = [];
    try {
      terms.push(this.SUBRULE(this.typeTerm));
      this.MANY(() => {
        ops.push(this.CONSUME(MulOp));
        terms.push(this.SUBRULE2(this.typeTerm));
      });
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild) terms.push(child as TypeRef | undefined);
        return this.b.typeRef(terms, ops);
      });
    }
    return this.RECORDING_PHASE ? undefined : this.b.typeRef(terms, ops);
  }, recovering);

  typeTerm = this.RULE("typeTerm", (): TypeRef | undefined => {
    let name: IToken | undefined;
    let greater: IToken | undefined;
    const args: (TypeRef | undefined)[] = [];
    try {
      name = this.CONSUME(AnyName);
      this.OPTION(() => {
        this.CONSUME(Less);
        args.push(this.SUBRULE(this.typeRef));
        this.MANY(() => {
          this.CONSUME(Comma);
          args.push(this.SUBRULE2(this.typeRef));
        });
        greater = this.CONSUME(Greater);
      });
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild) args.push(child as TypeRef | undefined);
        return this.b.typeTerm(name, args, greater);
      });
    }
    return this.RECORDING_PHASE ? undefined : this.b.typeTerm(name, args, greater);
  }, recovering);

  // ---- expressions ----------------------------------------------------------------------------

  // The expression rules run for every operand: their alternatives and loop bodies are built once
  // per parser (fields below), not allocated at each call (Chevrotain's own performance advice).
  private readonly expressionAlts = [
    { ALT: () => this.SUBRULE(this.ifExpression) },
    { ALT: () => this.SUBRULE(this.binaryExpression) },
  ];
  expression = this.RULE("expression", (): Expr => {
    const anchor = this.anchor;
    try {
      return this.OR(this.expressionAlts);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => (fromChild ? child : this.b.errorAt(anchor)));
    }
  }, recovering);

  ifExpression = this.RULE("ifExpression", (): Expr => {
    const anchor = this.anchor;
    let ifToken: IToken | undefined;
    let thenToken: IToken | undefined;
    let elseToken: IToken | undefined;
    let cond: Expr | undefined;
    let then: Expr | undefined;
    let otherwise: Expr | undefined;
    let stage = 0;
    try {
      ifToken = this.CONSUME(If);
      if (!this.RECORDING_PHASE) this.anchor = endAfter(isReal(ifToken) ? ifToken.startOffset : anchor, ifToken);
      stage = 1;
      cond = this.SUBRULE(this.expression, { LABEL: "cond" });
      stage = 0;
      thenToken = this.CONSUME(Then);
      if (!this.RECORDING_PHASE) this.anchor = endAfter(cond.span.end.offset, thenToken);
      stage = 2;
      then = this.SUBRULE2(this.expression, { LABEL: "then" });
      stage = 0;
      elseToken = this.CONSUME(Else);
      if (!this.RECORDING_PHASE) this.anchor = endAfter(then.span.end.offset, elseToken);
      stage = 3;
      otherwise = this.SUBRULE3(this.expression, { LABEL: "else" });
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) cond = child as Expr;
        if (fromChild && stage === 2) then = child as Expr;
        if (fromChild && stage === 3) otherwise = child as Expr;
        return this.ifOf(anchor, ifToken, cond, thenToken, then, elseToken, otherwise);
      });
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.ifOf(anchor, ifToken, cond, thenToken, then, elseToken, otherwise);
  }, recovering);

  private ifOf(anchor: number, ifToken: IToken | undefined, condition: Expr | undefined, thenToken: IToken | undefined, thenValue: Expr | undefined, elseToken: IToken | undefined, elseValue: Expr | undefined): Expr {
    const start = isReal(ifToken) ? ifToken.startOffset : anchor;
    const cond = condition ?? this.b.errorAt(endAfter(start, ifToken));
    const then = thenValue ?? this.b.errorAt(endAfter(cond.span.end.offset, thenToken));
    const otherwise = elseValue ?? this.b.errorAt(endAfter(then.span.end.offset, elseToken));
    return { kind: "if", cond, then, else: otherwise, span: this.b.span(start, otherwise.span.end.offset) };
  }

  /**
   * State of each binary-operator chain being parsed, by the depth of its `binaryExpression` frame in
   * Chevrotain's rule stack (frames nest through parentheses, calls, lists): which non-chaining
   * groups (a comparison, a `..`) already have their operator since the last looser one.
   */
  private readonly chainFlags: number[] = [];
  private get ruleDepth(): number {
    return (this as unknown as ChevrotainInternals).RULE_STACK_IDX;
  }

  /**
   * Per chain (same indexing): the tightest level the next operator may have. After an operator
   * without its operand (`a * ⏎`) only one of its level or looser may follow (with one rule per level,
   * only that level's rule and the looser ones were still running then); otherwise any.
   */
  private readonly chainLimit: number[] = [];

  /**
   * The operands and operators of the chains being parsed, in source order, innermost chain last:
   * `operand (operator operand?)*`, an operand `undefined` where it is missing. Each chain builds its
   * tree from its own part when it ends and removes that part (no array per chain).
   */
  private readonly chain: ChainItem[] = [];

  /** The operator ahead may continue the chain: not a second comparison or `..` in one group. */
  private operatorAccepted(): boolean {
    const level = binaryLevel(this.LA(1).tokenType);
    if (level === undefined) return false;
    const depth = this.ruleDepth;
    return level <= this.chainLimit[depth]! && (this.chainFlags[depth]! & nonChainingFlag[level]!) === 0;
  }

  private readonly operatorLabel = { LABEL: "chain" };
  private readonly operatorAlts = [
    { ALT: () => this.CONSUME(Or, this.operatorLabel) },
    { ALT: () => this.CONSUME2(And, this.operatorLabel) },
    { ALT: () => this.CONSUME3(CompareOp, this.operatorLabel) },
    { ALT: () => this.CONSUME4(DotDot, this.operatorLabel) },
    { ALT: () => this.CONSUME5(AddOp, this.operatorLabel) },
    { ALT: () => this.CONSUME6(MulOp, this.operatorLabel) },
  ];
  /** An operator's operand; absent (`batch: 16 tasks ×` ⏎ `horizon: …`) it is reported, see operatorThenOperand. */
  private readonly chainOperand = { GATE: () => !this.fieldAhead(), DEF: () => this.SUBRULE2(this.unary, this.operatorLabel) };
  private readonly chainTail = {
    GATE: () => this.operatorAccepted(),
    DEF: () => {
      const op = this.OR(this.operatorAlts);
      if (this.RECORDING_PHASE) {
        this.OPTION(this.chainOperand);
        return;
      }
      const level = binaryLevel(op.tokenType)!;
      const depth = this.ruleDepth;
      this.chainFlags[depth] = afterOperator(this.chainFlags[depth]!, level);
      this.chain.push(op);
      this.anchor = tokenEnd(op);
      const right = this.OPTION(this.chainOperand);
      this.chain.push(right);
      if (right === undefined) this.danglingOperators.push(op);
      this.chainLimit[depth] = right === undefined ? level : BINARY_LEVELS - 1;
    },
  };

  /**
   * `unary (operator unary)*`, flat: every binary operator in one loop, the tree built by precedence
   * (`binaryLevel`: loosest `or`, then `and`, comparisons, `..`, `+ -`, `* × /`; all
   * left-associative) when the chain ends (build.ts `chain`). One rule per operand instead of one
   * per precedence level: most of a large file's parse was Chevrotain's rule calls for the levels.
   * Comparisons and `..` do not chain: `operatorAccepted` ends the chain before a second one in one
   * group, where the grammar of one rule per level ended it too. For error recovery, see
   * `getFollowSetFromFollowKey`.
   */
  binaryExpression = this.RULE("binaryExpression", (): Expr => {
    if (this.RECORDING_PHASE) {
      this.SUBRULE(this.unary, this.operatorLabel);
      this.MANY(this.chainTail);
      return undefined as never;
    }
    const depth = this.ruleDepth;
    this.chainFlags[depth] = 0;
    this.chainLimit[depth] = BINARY_LEVELS - 1;
    const anchor = this.anchor;
    const from = this.chain.length;
    try {
      this.chain.push(this.SUBRULE(this.unary, this.operatorLabel));
      this.MANY(this.chainTail);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild) this.chain.push(child as Expr);
        return this.endChain(from, anchor);
      });
    }
    return this.endChain(from, anchor);
  }, recovering);

  private endChain(from: number, anchor: number): Expr {
    // The common case, one operand and no operator, builds nothing.
    if (this.chain.length === from + 1 && this.chain[from] !== undefined) return this.chain.pop() as Expr;
    const tree = this.b.chain(this.chain, from, anchor, levelOfOperator);
    this.chain.length = from;
    return tree;
  }

  /**
   * A prefixed operand, or a primary with its suffixes (`f(x).y`). The primary and its suffixes are
   * parsed here, not in rules of their own: one rule call per operand (re-sync and insertion see the
   * same follow sets: the suffixes may follow a primary, and nothing was left after them). Each
   * suffix rule applies itself to `target`, the primary with the suffixes before it.
   */
  private readonly unaryAlts = [
    { ALT: () => this.SUBRULE(this.negation) },
    { ALT: () => this.SUBRULE(this.logicalNot) },
    {
      ALT: (): Expr => {
        this.target = this.OR2(this.primaryAlts);
        this.MANY(this.postfixTail);
        return this.target;
      },
    },
  ];
  /** The expression the next suffix (`(…)`, `.name`) applies to. */
  private target!: Expr;
  unary = this.RULE("unary", (): Expr => {
    const anchor = this.anchor;
    try {
      return this.OR(this.unaryAlts);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => (fromChild ? child : this.b.errorAt(anchor)));
    }
  }, recovering);

  negation = this.RULE("negation", (): Expr => this.operatorThenOperand(Minus, this.unary, "-"), recovering);

  logicalNot = this.RULE("logicalNot", (): Expr => this.operatorThenOperand(Not, this.unary, "not"), recovering);

  private readonly suffixAlts = [
    { ALT: () => this.SUBRULE(this.callSuffix) },
    { ALT: () => this.SUBRULE(this.memberSuffix) },
  ];
  private readonly postfixTail = (): void => {
    const applied = this.OR3(this.suffixAlts);
    if (!this.RECORDING_PHASE) this.target = applied;
  };

  callSuffix = this.RULE("callSuffix", (): Expr => {
    const callee = this.target;
    const args: Arg[] = [];
    let open: IToken | undefined;
    let close: IToken | undefined;
    let at = 0;
    let stage = 0;
    const add = (arg: Arg) => {
      if (this.RECORDING_PHASE) return;
      args.push(arg);
      at = arg.span.end.offset;
    };
    try {
      open = this.CONSUME(LParen);
      if (!this.RECORDING_PHASE) at = endAfter(isReal(open) ? open.startOffset : callee.span.end.offset, open);
      this.OPTION(() => {
        this.anchor = at;
        stage = 1;
        add(this.SUBRULE(this.argument));
        stage = 0;
        this.MANY({
          GATE: () => this.nextItemFollows(RParen),
          DEF: () => {
            this.separatorComma();
            this.anchor = at;
            stage = 1;
            add(this.SUBRULE2(this.argument));
            stage = 0;
          },
        });
        this.OPTION2(() => this.CONSUME2(Comma));
      });
      close = this.CONSUME(RParen);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) add(child as Arg);
        return this.callOf(callee, args, endAfter(at, close));
      });
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.callOf(callee, args, endAfter(at, close));
  }, recovering);

  private callOf(callee: Expr, args: Arg[], end: number): Expr {
    return { kind: "call", callee, args, span: this.b.span(callee.span.start.offset, Math.max(end, callee.span.end.offset)) };
  }

  private readonly argumentAlts = [
    { GATE: () => this.LA(2).tokenType === Colon, ALT: () => this.SUBRULE(this.namedArgument) },
    {
      ALT: (): Arg => {
        const value = this.SUBRULE(this.expression);
        return this.RECORDING_PHASE ? (undefined as never) : { value, span: value.span };
      },
    },
  ];
  argument = this.RULE("argument", (): Arg => {
    const anchor = this.anchor;
    try {
      return this.OR(this.argumentAlts);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        // Out of namedArgument: an argument already; out of expression: its value.
        if (fromChild && !("kind" in (child as object))) return child;
        const value = fromChild ? (child as Expr) : this.b.errorAt(anchor);
        return { value, span: value.span };
      });
    }
  }, recovering);

  namedArgument = this.RULE("namedArgument", (): Arg => {
    const anchor = this.anchor;
    let name: IToken | undefined;
    let colon: IToken | undefined;
    let value: Expr | undefined;
    try {
      name = this.CONSUME(AnyName);
      colon = this.CONSUME(Colon);
      if (!this.RECORDING_PHASE) this.anchor = endAfter(isReal(name) ? name.startOffset : anchor, name, colon);
      value = this.SUBRULE(this.expression);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.namedArgumentOf(anchor, name, colon, fromChild ? (child as Expr) : value));
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.namedArgumentOf(anchor, name, colon, value);
  }, recovering);

  private namedArgumentOf(anchor: number, name: IToken | undefined, colon: IToken | undefined, value: Expr | undefined): Arg {
    const start = isReal(name) ? name.startOffset : anchor;
    const v = value ?? this.b.errorAt(endAfter(start, name, colon));
    const span = this.b.span(start, v.span.end.offset);
    return isReal(name) ? { name: name.image, nameSpan: this.b.tokenSpan(name), value: v, span } : { value: v, span };
  }

  memberSuffix = this.RULE("memberSuffix", (): Expr => {
    const object = this.target;
    let dot: IToken | undefined;
    let property: IToken | undefined;
    try {
      dot = this.CONSUME(Dot);
      property = this.CONSUME(AnyName);
    } catch (e) {
      throw this.fail(e, () => this.memberOf(object, dot, property));
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.memberOf(object, dot, property);
  }, recovering);

  private memberOf(object: Expr, dot: IToken | undefined, property: IToken | undefined): Expr {
    const from = object.span.start.offset;
    if (!isReal(property)) {
      const start = isReal(dot) ? dot.startOffset : object.span.end.offset;
      return { kind: "error", span: this.b.span(from, Math.max(endAfter(start, dot), object.span.end.offset)) };
    }
    const span = this.b.span(from, Math.max(tokenEnd(property), object.span.end.offset));
    return { kind: "member", object, property: property.image, propertySpan: this.b.tokenSpan(property), span };
  }

  /** Literals, names, lists, records and parentheses (an alternative of `unary`). */
  private readonly primaryAlts = [
    { ALT: () => this.SUBRULE(this.numberLiteral) },
    { ALT: () => this.stringOf(this.CONSUME(StringLiteral)) },
    { ALT: () => this.boolOf(this.CONSUME(True)) },
    { ALT: () => this.boolOf(this.CONSUME(False)) },
    { ALT: () => this.nameOf(this.CONSUME(Identifier)) },
    { ALT: () => this.SUBRULE(this.listLiteral) },
    {
      ALT: () => {
        this.recordBlock = true;
        return this.SUBRULE(this.fieldBlock) as Expr;
      },
    },
    { ALT: () => this.SUBRULE(this.parenthesized) },
  ];

  private stringOf(t: IToken): Expr {
    if (this.RECORDING_PHASE) return undefined as never;
    return isReal(t) ? { kind: "string", value: stringValue(t), span: this.b.tokenSpan(t) } : this.b.errorAt(this.anchor);
  }
  private boolOf(t: IToken): Expr {
    if (this.RECORDING_PHASE) return undefined as never;
    return isReal(t) ? { kind: "bool", value: t.tokenType === True, span: this.b.tokenSpan(t) } : this.b.errorAt(this.anchor);
  }
  private nameOf(t: IToken): Expr {
    if (this.RECORDING_PHASE) return undefined as never;
    return isReal(t) ? { kind: "name", name: t.image, span: this.b.tokenSpan(t) } : this.b.errorAt(this.anchor);
  }

  /** `6 steps`, `50 %`: the unit is read here (`unit`), not by a rule of its own. */
  private readonly unitLabel = { LABEL: "unit" };
  private readonly unitAlts = [
    { ALT: () => this.CONSUME2(Identifier, this.unitLabel) },
    { ALT: () => this.CONSUME(Percent, this.unitLabel) },
  ];
  private readonly unitOption = { GATE: () => this.unitFollows(), DEF: () => this.OR(this.unitAlts) };
  numberLiteral = this.RULE("numberLiteral", (): Expr => {
    const anchor = this.anchor;
    let num: IToken | undefined;
    let unit: IToken | undefined;
    try {
      num = this.CONSUME(NumberLiteral);
      unit = this.OPTION(this.unitOption);
    } catch (e) {
      throw this.fail(e, () => this.numberOf(anchor, num, unit));
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.numberOf(anchor, num, unit);
  }, recovering);

  private numberOf(anchor: number, num: IToken | undefined, unitToken: IToken | undefined): Expr {
    if (!isReal(num)) return this.b.errorAt(anchor);
    const unitReal = isReal(unitToken) ? unitToken : undefined;
    const unit: Unit | undefined = unitReal === undefined ? undefined
      : unitReal.tokenType === Percent ? "%" : unitWords.get(unitReal.image);
    const end = unit !== undefined && unitReal !== undefined ? tokenEnd(unitReal) : tokenEnd(num);
    const value = Number(num.image);
    const text = this.b.text(num.startOffset, end);
    const span = this.b.span(num.startOffset, end);
    // Two literals rather than a spread of an optional `unit`: one per number of the file.
    const lit: NumberLit = unit !== undefined ? { kind: "number", value, unit, text, span } : { kind: "number", value, text, span };
    return lit;
  }

  listLiteral = this.RULE("listLiteral", (): Expr => {
    const anchor = this.anchor;
    const items: Expr[] = [];
    let open: IToken | undefined;
    let close: IToken | undefined;
    let start = anchor;
    let at = anchor;
    let stage = 0;
    const add = (item: Expr) => {
      if (this.RECORDING_PHASE) return;
      items.push(item);
      at = item.span.end.offset;
    };
    try {
      open = this.CONSUME(LBracket);
      if (!this.RECORDING_PHASE) {
        start = isReal(open) ? open.startOffset : anchor;
        at = endAfter(start, open);
      }
      this.OPTION(() => {
        this.anchor = at;
        stage = 1;
        add(this.SUBRULE(this.expression));
        stage = 0;
        this.MANY({
          GATE: () => this.nextItemFollows(RBracket),
          DEF: () => {
            this.separatorComma();
            this.anchor = at;
            stage = 1;
            add(this.SUBRULE2(this.expression));
            stage = 0;
          },
        });
        this.OPTION2(() => this.CONSUME2(Comma));
      });
      close = this.CONSUME(RBracket);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => {
        if (fromChild && stage === 1) add(child as Expr);
        return { kind: "list", items, span: this.b.span(start, endAfter(at, close)) };
      });
    }
    return this.RECORDING_PHASE ? (undefined as never) : { kind: "list", items, span: this.b.span(start, endAfter(at, close)) };
  }, recovering);

  parenthesized = this.RULE("parenthesized", (): Expr => {
    const anchor = this.anchor;
    let open: IToken | undefined;
    let close: IToken | undefined;
    let inner: Expr | undefined;
    try {
      open = this.CONSUME(LParen);
      if (!this.RECORDING_PHASE) this.anchor = endAfter(isReal(open) ? open.startOffset : anchor, open);
      inner = this.SUBRULE(this.expression);
      close = this.CONSUME(RParen);
    } catch (e) {
      throw this.fail(e, (child, fromChild) => this.parenthesizedOf(anchor, open, fromChild ? (child as Expr) : inner, close));
    }
    return this.RECORDING_PHASE ? (undefined as never) : this.parenthesizedOf(anchor, open, inner, close);
  }, recovering);

  private parenthesizedOf(anchor: number, open: IToken | undefined, innerValue: Expr | undefined, close: IToken | undefined): Expr {
    const start = isReal(open) ? open.startOffset : anchor;
    const inner = innerValue ?? this.b.errorAt(endAfter(start, open));
    const end = endAfter(inner.span.end.offset, close);
    return { ...inner, span: this.b.span(start, end) };
  }
}

interface CurriculumBodyResult { value: CurriculumBodyValue | undefined; end: number | undefined }

/** A curriculum body's value from what its alternative returned (`fieldBlock` or `derivedCurriculum`). */
function curriculumValue(inner: FieldBlockResult | CurriculumBodyValue | undefined): CurriculumBodyValue | undefined {
  if (inner === undefined) return undefined;
  if ("base" in inner) return inner;
  return { fields: inner.fields };
}

/** Where a `let`'s value belongs: after its `=`, else after its type or name. */
function letAnchor(name: IToken, type: TypeRef | undefined, equals: IToken | undefined): number {
  return endAfter(type ? type.span.end.offset : tokenEnd(name), equals);
}

/** Where a function's body belongs: after its return type, `:` or `)`, else after its name. */
function fnAnchor(name: IToken, rParen: IToken | undefined, colon: IToken | undefined, returnType: TypeRef | undefined): number {
  return Math.max(endAfter(tokenEnd(name), rParen, colon), returnType?.span.end.offset ?? 0);
}

const levelOfOperator = (t: IToken): number => binaryLevel(t.tokenType)!;

/** A line ends in `text[from, to)` (tokens carry no line numbers: see lexer.ts). */
function lineBreakIn(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return true;
  }
  return false;
}

const consumeInternal = (EmbeddedActionsParser.prototype as unknown as {
  consumeInternal(this: TcodParser, tokType: TokenType, idx: number, options: unknown): IToken;
}).consumeInternal;

const emptyLines = new LineMap("", "");

let theParser: TcodParser | undefined;
/**
 * The one parser of the process, constructed on first use (the grammar recorded once): a process
 * that parses only valid files never needs it (index.ts tries the fast path of fast.ts first).
 */
export function tcodParser(): TcodParser {
  return (theParser ??= new TcodParser());
}

/** This grammar's lookahead and follow tables, for scripts/build.mjs to bake into the bundle. */
export function computeGrammarTables(): GrammarTables {
  const p = new TcodParser(undefined);
  return tablesOf(p.lookahead, p.followSets());
}
