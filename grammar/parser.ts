/**
 * The tcod grammar (docs/LANGUAGE.md, "Declarations" and "Expressions") as a Chevrotain CstParser.
 *
 * One instance (`tcodParser`) for the process: Chevrotain records the grammar once, at construction;
 * each parse only resets the input. Error recovery is on, so a file with errors still yields a CST
 * (with `recoveredNode` parts) that cst-to-ast.ts turns into a usable AST.
 *
 * Conventions: each OR alternative that is more than one token is its own rule (so the CST says which
 * alternative was taken), except inside an operand, where each rule call costs on every operand of a
 * large file: binary operators are one flat chain (`binaryExpression`, the tree built by precedence in
 * cst-to-ast.ts), and a primary with its suffixes is read by `unary` itself. Lists with separators
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
  CstParser, EOF, tokenMatcher, type CstNode, type IParserErrorMessageProvider, type IRecognitionException,
  type IToken, type ParserMethod, type TokenType,
} from "chevrotain";
import {
  AddOp, allTokens, And, AnyName, As, Colon, Comma, CompareOp, Curriculum, Dot, DotDot, Else, EqEq, Equals,
  Export, False, Fn, From, Greater, GreaterEq, Identifier, If, Import, LBracket, LCurly, Less, LessEq, Let,
  LParen, Minus, Model, MulOp, Not, NotEq, NumberLiteral, Or, Percent, Plus, Product, RBracket, RCurly,
  Return, RParen, Slash, Star, StringLiteral, Sweep, Then, True, unitWords, With, Zip,
} from "./lexer.js";
import { followsFromTables, TableLookahead, tablesOf, type GrammarTables } from "./precomputed.js";

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
 * not chain. The parser reads them in one loop (`binaryExpression`); cst-to-ast.ts builds the tree.
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
const chevrotainRecovery = CstParser.prototype as unknown as ChevrotainInternals;

/**
 * A token Chevrotain invented during single-token-insertion recovery: the error it recovered from
 * means "missing X" (TC1004) rather than "unexpected Y" (TC1001).
 */
export interface Insertion { expected: TokenType; error: IRecognitionException | undefined }

export class TcodParser extends CstParser {
  /** Insertions of the current parse, in order; reset by `load()`. */
  insertions: Insertion[] = [];
  /** Operators of the current parse left without an operand (`batch: 16 tasks ×` ⏎): TC1004. */
  danglingOperators: IToken[] = [];
  /** Tokens after which a `,` is missing between two items on one line (`f(a: 1 b: 2)`): TC1004. */
  missingCommas: IToken[] = [];

  /** The lookahead strategy; after construction without tables, it holds the paths it computed. */
  readonly lookahead: TableLookahead;

  /**
   * `tables` (precomputed.ts): lookahead paths and re-sync follows computed at build time; without
   * them Chevrotain computes both here, which is most of the CLI's start-up.
   */
  constructor(tables: GrammarTables | undefined = bakedTables()) {
    const lookahead = new TableLookahead(tables, new Map(allTokens.map((t) => [t.name, t])), MAX_LOOKAHEAD);
    super(allTokens as TokenType[], {
      recoveryEnabled: true,
      nodeLocationTracking: "onlyOffset",
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

  load(tokens: IToken[]): void {
    this.insertions = [];
    this.danglingOperators = [];
    this.missingCommas = [];
    this.input = tokens;
  }

  protected override getTokenToInsert(tokType: TokenType): IToken {
    // Chevrotain saves the mismatch error just before it tries insertion, so it is the last one.
    this.insertions.push({ expected: tokType, error: this.errors.at(-1) });
    return super.getTokenToInsert(tokType);
  }

  /**
   * Re-sync recovery (Chevrotain's, when a rule fails and no single token can be inserted or
   * deleted) skips to the first token that may follow some rule on the stack, and the innermost rule
   * that token may follow returns its partial CST. With one rule per precedence level, an operand's
   * stack held one frame per level, each followed by its own operator, and a comparison's or a
   * `..`'s left operand only until that group had its operator. The flat `binaryExpression` has one
   * frame per chain: an operand of it may be followed by the operators that chain's state still
   * accepts, listed in the order the level frames were stacked, so re-sync picks the same token as
   * before; cst-to-ast.ts then drops what the level frame that recovered would have dropped.
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
  private operatorThenOperand(op: TokenType, operand: ParserMethod<[], CstNode>): void {
    const opToken = this.CONSUME9(op);
    let option = this.operandOptions.get(operand);
    if (option === undefined) this.operandOptions.set(operand, (option = { GATE: () => !this.fieldAhead(), DEF: () => this.SUBRULE9(operand) }));
    const right = this.OPTION9(option);
    this.ACTION(() => {
      if (right === undefined) this.danglingOperators.push(opToken);
    });
  }

  /** operatorThenOperand's optional operand, one per operand rule (built once, not at each operator). */
  private readonly operandOptions = new Map<ParserMethod<[], CstNode>, { GATE: () => boolean; DEF: () => CstNode }>();

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
    if (this.LA(1).tokenType === Comma) return this.moreAfterComma(closer);
    const previous = this.LA(0);
    return this.LA(1).tokenType !== closer && this.LA(1).startLine === (previous.endLine ?? previous.startLine);
  }

  /** The separator before the next item; a missing one is recorded (TC1004) instead of ending the list. */
  private separatorComma(): void {
    const comma = this.OPTION8(() => this.CONSUME8(Comma));
    this.ACTION(() => {
      if (comma === undefined) this.missingCommas.push(this.LA(0));
    });
  }

  // ---- declarations ----------------------------------------------------------------------------

  /**
   * Called with each top-level declaration's CST as soon as it is parsed (grammar/index.ts builds its
   * AST there and drops the CST), so a parse holds one declaration's CST at a time, not the file's.
   */
  onDeclaration: ((cst: CstNode) => void) | undefined;

  sourceFile = this.RULE("sourceFile", () => {
    this.MANY(() => {
      const declaration = this.SUBRULE(this.declaration);
      this.ACTION(() => this.onDeclaration?.(declaration));
    });
  });

  declaration = this.RULE("declaration", () => {
    this.OR([
      { ALT: () => this.SUBRULE(this.importDeclaration) },
      { ALT: () => this.SUBRULE(this.exportableDeclaration) },
      { ALT: () => this.SUBRULE(this.sweepDeclaration) },
    ]);
  });

  importDeclaration = this.RULE("importDeclaration", () => {
    this.CONSUME(Import);
    this.CONSUME(LCurly);
    this.SUBRULE(this.importSpec);
    this.MANY({
      GATE: () => this.moreAfterComma(RCurly),
      DEF: () => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.importSpec);
      },
    });
    this.OPTION(() => this.CONSUME2(Comma));
    this.CONSUME(RCurly);
    this.CONSUME(From);
    this.CONSUME(StringLiteral);
  });

  importSpec = this.RULE("importSpec", () => {
    this.CONSUME(Identifier, { LABEL: "name" });
    this.OPTION(() => {
      this.CONSUME(As);
      this.CONSUME2(Identifier, { LABEL: "alias" });
    });
  });

  exportableDeclaration = this.RULE("exportableDeclaration", () => {
    this.OPTION(() => this.CONSUME(Export));
    this.OR([
      { ALT: () => this.SUBRULE(this.letDeclaration) },
      { ALT: () => this.SUBRULE(this.fnDeclaration) },
      { ALT: () => this.SUBRULE(this.modelDeclaration) },
      { ALT: () => this.SUBRULE(this.curriculumDeclaration) },
    ]);
  });

  letDeclaration = this.RULE("letDeclaration", () => {
    this.CONSUME(Let);
    this.CONSUME(Identifier);
    this.OPTION(() => {
      this.CONSUME(Colon);
      this.SUBRULE(this.typeRef);
    });
    this.CONSUME(Equals);
    this.SUBRULE(this.expression);
  });

  fnDeclaration = this.RULE("fnDeclaration", () => {
    this.CONSUME(Fn);
    this.CONSUME(Identifier);
    this.CONSUME(LParen);
    this.OPTION(() => {
      this.SUBRULE(this.param);
      this.MANY({
        GATE: () => this.moreAfterComma(RParen),
        DEF: () => {
          this.CONSUME(Comma);
          this.SUBRULE2(this.param);
        },
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RParen);
    this.OPTION3(() => {
      this.CONSUME(Colon);
      this.SUBRULE(this.typeRef);
    });
    this.SUBRULE(this.fnBody);
  });

  param = this.RULE("param", () => {
    this.CONSUME(Identifier);
    this.OPTION(() => {
      this.CONSUME(Colon);
      this.SUBRULE(this.typeRef);
    });
    this.OPTION2(() => {
      this.CONSUME(Equals);
      this.SUBRULE(this.expression);
    });
  });

  fnBody = this.RULE("fnBody", () => {
    this.OR([
      { ALT: () => this.SUBRULE(this.expressionBody) },
      { ALT: () => this.SUBRULE(this.blockBody) },
    ]);
  });

  expressionBody = this.RULE("expressionBody", () => {
    this.CONSUME(Equals);
    this.SUBRULE(this.expression);
  });

  blockBody = this.RULE("blockBody", () => {
    this.CONSUME(LCurly);
    this.MANY(() => this.SUBRULE(this.letDeclaration));
    this.CONSUME(Return);
    this.SUBRULE(this.expression);
    this.CONSUME(RCurly);
  });

  modelDeclaration = this.RULE("modelDeclaration", () => {
    this.CONSUME(Model);
    this.CONSUME(Identifier);
    this.SUBRULE(this.fieldBlock);
  });

  curriculumDeclaration = this.RULE("curriculumDeclaration", () => {
    this.CONSUME(Curriculum);
    this.CONSUME(Identifier);
    this.SUBRULE(this.curriculumBody);
  });

  curriculumBody = this.RULE("curriculumBody", () => {
    this.OR([
      { ALT: () => this.SUBRULE(this.fieldBlock) },
      { ALT: () => this.SUBRULE(this.derivedCurriculum) },
    ]);
  });

  /** `= base with { … }` */
  derivedCurriculum = this.RULE("derivedCurriculum", () => {
    this.CONSUME(Equals);
    this.CONSUME(Identifier);
    this.CONSUME(With);
    this.SUBRULE(this.fieldBlock);
  });

  /** `{ name: expr … }`: declaration bodies and record literals alike. */
  fieldBlock = this.RULE("fieldBlock", () => {
    this.CONSUME(LCurly);
    this.MANY({
      GATE: () => this.fieldStarts(),
      DEF: () => {
        this.SUBRULE(this.field);
        this.OPTION(() => this.CONSUME(Comma));
      },
    });
    this.CONSUME(RCurly);
  });

  field = this.RULE("field", () => {
    this.CONSUME(AnyName);
    this.CONSUME(Colon);
    this.SUBRULE(this.expression);
  });

  sweepDeclaration = this.RULE("sweepDeclaration", () => {
    this.CONSUME(Sweep);
    this.CONSUME(Identifier);
    this.SUBRULE(this.sweepMode);
    this.CONSUME(LCurly);
    this.MANY(() => {
      this.SUBRULE(this.sweepAxis);
      this.OPTION(() => this.CONSUME(Comma));
    });
    this.CONSUME(RCurly);
  });

  sweepMode = this.RULE("sweepMode", () => {
    this.OR([
      { ALT: () => this.CONSUME(Product) },
      { ALT: () => this.CONSUME(Zip) },
    ]);
  });

  /** `k: [..]` or `curriculum.field: [..]` */
  sweepAxis = this.RULE("sweepAxis", () => {
    this.CONSUME(Identifier);
    this.MANY(() => {
      this.CONSUME(Dot);
      this.CONSUME(AnyName);
    });
    this.CONSUME(Colon);
    this.SUBRULE(this.listLiteral);
  });

  // ---- types -----------------------------------------------------------------------------------

  /** `number`, `tasks×rollouts`, `steps/turns`, `list<turns>`, `per_turn<number>` */
  typeRef = this.RULE("typeRef", () => {
    this.SUBRULE(this.typeTerm);
    this.MANY(() => {
      this.CONSUME(MulOp);
      this.SUBRULE2(this.typeTerm);
    });
  });

  typeTerm = this.RULE("typeTerm", () => {
    this.CONSUME(AnyName);
    this.OPTION(() => {
      this.CONSUME(Less);
      this.SUBRULE(this.typeRef);
      this.MANY(() => {
        this.CONSUME(Comma);
        this.SUBRULE2(this.typeRef);
      });
      this.CONSUME(Greater);
    });
  });

  // ---- expressions ----------------------------------------------------------------------------

  // The expression rules run for every operand: their alternatives and loop bodies are built once
  // per parser (fields below), not allocated at each call (Chevrotain's own performance advice).
  private readonly expressionAlts = [
    { ALT: () => this.SUBRULE(this.ifExpression) },
    { ALT: () => this.SUBRULE(this.binaryExpression) },
  ];
  expression = this.RULE("expression", () => {
    this.OR(this.expressionAlts);
  });

  ifExpression = this.RULE("ifExpression", () => {
    this.CONSUME(If);
    this.SUBRULE(this.expression, { LABEL: "cond" });
    this.CONSUME(Then);
    this.SUBRULE2(this.expression, { LABEL: "then" });
    this.CONSUME(Else);
    this.SUBRULE3(this.expression, { LABEL: "else" });
  });

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
      const op = this.OR(this.operatorAlts) as IToken;
      if (this.RECORDING_PHASE) {
        this.OPTION(this.chainOperand);
        return;
      }
      const level = binaryLevel(op.tokenType)!;
      const depth = this.ruleDepth;
      this.chainFlags[depth] = afterOperator(this.chainFlags[depth]!, level);
      const right = this.OPTION(this.chainOperand);
      if (right === undefined) this.danglingOperators.push(op);
      this.chainLimit[depth] = right === undefined ? level : BINARY_LEVELS - 1;
    },
  };

  /**
   * `unary (operator unary)*`, flat: every binary operator in one loop, the tree built by
   * cst-to-ast.ts from `binaryLevel` (loosest `or`, then `and`, comparisons, `..`, `+ -`, `* × /`;
   * all left-associative). One rule per operand instead of one per precedence level: most of a
   * large file's parse was Chevrotain's rule calls and CST nodes for the levels. Comparisons and `..`
   * do not chain: `operatorAccepted` ends the chain before a second one in one group, where the
   * grammar of one rule per level ended it too. The operands and operators share the CST key
   * `chain`, so their order is kept. For error recovery, see `getFollowSetFromFollowKey`.
   */
  binaryExpression = this.RULE("binaryExpression", () => {
    if (!this.RECORDING_PHASE) {
      this.chainFlags[this.ruleDepth] = 0;
      this.chainLimit[this.ruleDepth] = BINARY_LEVELS - 1;
    }
    this.SUBRULE(this.unary, this.operatorLabel);
    this.MANY(this.chainTail);
  });

  /**
   * A prefixed operand, or a primary with its suffixes (`f(x).y`). The primary and its suffixes are
   * parsed here, not in rules of their own: one rule call per operand (re-sync and insertion see the
   * same follow sets: the suffixes may follow a primary, and nothing was left after them).
   */
  private readonly unaryAlts = [
    { ALT: () => this.SUBRULE(this.negation) },
    { ALT: () => this.SUBRULE(this.logicalNot) },
    {
      ALT: () => {
        this.OR2(this.primaryAlts);
        this.MANY(this.postfixTail);
      },
    },
  ];
  unary = this.RULE("unary", () => {
    this.OR(this.unaryAlts);
  });

  negation = this.RULE("negation", () => {
    this.operatorThenOperand(Minus, this.unary);
  });

  logicalNot = this.RULE("logicalNot", () => {
    this.operatorThenOperand(Not, this.unary);
  });

  private readonly suffixAlts = [
    { ALT: () => this.SUBRULE(this.callSuffix) },
    { ALT: () => this.SUBRULE(this.memberSuffix) },
  ];
  private readonly postfixTail = (): void => { this.OR3(this.suffixAlts); };

  callSuffix = this.RULE("callSuffix", () => {
    this.CONSUME(LParen);
    this.OPTION(() => {
      this.SUBRULE(this.argument);
      this.MANY({
        GATE: () => this.nextItemFollows(RParen),
        DEF: () => {
          this.separatorComma();
          this.SUBRULE2(this.argument);
        },
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RParen);
  });

  argument = this.RULE("argument", () => {
    this.OR([
      { GATE: () => this.LA(2).tokenType === Colon, ALT: () => this.SUBRULE(this.namedArgument) },
      { ALT: () => this.SUBRULE(this.expression) },
    ]);
  });

  namedArgument = this.RULE("namedArgument", () => {
    this.CONSUME(AnyName);
    this.CONSUME(Colon);
    this.SUBRULE(this.expression);
  });

  memberSuffix = this.RULE("memberSuffix", () => {
    this.CONSUME(Dot);
    this.CONSUME(AnyName);
  });

  /** Literals, names, lists, records and parentheses (an alternative of `unary`). */
  private readonly primaryAlts = [
    { ALT: () => this.SUBRULE(this.numberLiteral) },
    { ALT: () => this.CONSUME(StringLiteral) },
    { ALT: () => this.CONSUME(True) },
    { ALT: () => this.CONSUME(False) },
    { ALT: () => this.CONSUME(Identifier) },
    { ALT: () => this.SUBRULE(this.listLiteral) },
    { ALT: () => this.SUBRULE(this.fieldBlock) },
    { ALT: () => this.SUBRULE(this.parenthesized) },
  ];

  /** `6 steps`, `50 %`: the unit is read here (`unit`), not by a rule of its own. */
  private readonly unitLabel = { LABEL: "unit" };
  private readonly unitAlts = [
    { ALT: () => this.CONSUME2(Identifier, this.unitLabel) },
    { ALT: () => this.CONSUME(Percent, this.unitLabel) },
  ];
  private readonly unitOption = { GATE: () => this.unitFollows(), DEF: () => this.OR(this.unitAlts) };
  numberLiteral = this.RULE("numberLiteral", () => {
    this.CONSUME(NumberLiteral);
    this.OPTION(this.unitOption);
  });

  listLiteral = this.RULE("listLiteral", () => {
    this.CONSUME(LBracket);
    this.OPTION(() => {
      this.SUBRULE(this.expression);
      this.MANY({
        GATE: () => this.nextItemFollows(RBracket),
        DEF: () => {
          this.separatorComma();
          this.SUBRULE2(this.expression);
        },
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    this.CONSUME(RBracket);
  });

  parenthesized = this.RULE("parenthesized", () => {
    this.CONSUME(LParen);
    this.SUBRULE(this.expression);
    this.CONSUME(RParen);
  });
}

/** The one parser of the process (grammar recorded once). */
export const tcodParser = new TcodParser();

/** This grammar's lookahead and follow tables, for scripts/build.mjs to bake into the bundle. */
export function computeGrammarTables(): GrammarTables {
  const p = new TcodParser(undefined);
  return tablesOf(p.lookahead, p.followSets());
}
