/**
 * The tcod grammar (docs/LANGUAGE.md, "Declarations" and "Expressions") as a Chevrotain CstParser.
 *
 * One instance (`tcodParser`) for the process: Chevrotain records the grammar once, at construction;
 * each parse only resets the input. Error recovery is on, so a file with errors still yields a CST
 * (with `recoveredNode` parts) that cst-to-ast.ts turns into a usable AST.
 *
 * Conventions: each OR alternative that is more than one token is its own rule (so the CST says which
 * alternative was taken); lists with separators accept one trailing comma; fields of `{}` blocks are
 * separated by newlines or optional commas. Comparisons and `..` do not chain (`a < b < c` is a syntax
 * error rather than a silent `(a < b) < c`). Field names, named arguments, members and type names may
 * be keywords (`model: …`).
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
  AddOp, allTokens, And, AnyName, As, Colon, Comma, CompareOp, Curriculum, Dot, DotDot, Else, Equals,
  Export, False, Fn, From, Greater, Identifier, If, Import, LBracket, LCurly, Less, Let, LParen, Minus,
  Model, MulOp, Not, NumberLiteral, Or, Percent, Product, RBracket, RCurly, Return, RParen, StringLiteral,
  Sweep, Then, True, unitWords, With, Zip,
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
  primary: "an expression",
  argument: "an argument",
  unitSuffix: "a unit",
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

  // ---- expressions, loosest first --------------------------------------------------------------

  // The expression rules run once per operand at every precedence level: their alternatives and
  // loop bodies are built once per parser (fields below), not allocated at each call (a third of
  // the parse's allocations on a large file; Chevrotain's own performance advice).
  private readonly expressionAlts = [
    { ALT: () => this.SUBRULE(this.ifExpression) },
    { ALT: () => this.SUBRULE(this.orExpression) },
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

  private readonly orTail = (): void => this.operatorThenOperand(Or, this.andExpression);
  orExpression = this.RULE("orExpression", () => {
    this.SUBRULE(this.andExpression);
    this.MANY(this.orTail);
  });

  private readonly andTail = (): void => this.operatorThenOperand(And, this.comparison);
  andExpression = this.RULE("andExpression", () => {
    this.SUBRULE(this.comparison);
    this.MANY(this.andTail);
  });

  private readonly comparisonTail = (): void => this.operatorThenOperand(CompareOp, this.rangeExpression);
  comparison = this.RULE("comparison", () => {
    this.SUBRULE(this.rangeExpression);
    this.OPTION(this.comparisonTail);
  });

  private readonly rangeTail = (): void => this.operatorThenOperand(DotDot, this.additive);
  rangeExpression = this.RULE("rangeExpression", () => {
    this.SUBRULE(this.additive);
    this.OPTION(this.rangeTail);
  });

  private readonly additiveTail = (): void => this.operatorThenOperand(AddOp, this.multiplicative);
  additive = this.RULE("additive", () => {
    this.SUBRULE(this.multiplicative);
    this.MANY(this.additiveTail);
  });

  private readonly multiplicativeTail = (): void => this.operatorThenOperand(MulOp, this.unary);
  multiplicative = this.RULE("multiplicative", () => {
    this.SUBRULE(this.unary);
    this.MANY(this.multiplicativeTail);
  });

  private readonly unaryAlts = [
    { ALT: () => this.SUBRULE(this.negation) },
    { ALT: () => this.SUBRULE(this.logicalNot) },
    { ALT: () => this.SUBRULE(this.postfix) },
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
  private readonly postfixTail = (): void => { this.OR(this.suffixAlts); };
  postfix = this.RULE("postfix", () => {
    this.SUBRULE(this.primary);
    this.MANY(this.postfixTail);
  });

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
  primary = this.RULE("primary", () => {
    this.OR(this.primaryAlts);
  });

  private readonly unitOption = { GATE: () => this.unitFollows(), DEF: () => this.SUBRULE(this.unitSuffix) };
  numberLiteral = this.RULE("numberLiteral", () => {
    this.CONSUME(NumberLiteral);
    this.OPTION(this.unitOption);
  });

  unitSuffix = this.RULE("unitSuffix", () => {
    this.OR([
      { ALT: () => this.CONSUME(Identifier) },
      { ALT: () => this.CONSUME(Percent) },
    ]);
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
