/**
 * A guard against pathological nesting. The parser (which builds the AST as it parses) and its error
 * recovery are recursive, so deeply nested input overflows the call stack (measured with the guard
 * lifted, on Node 20's default stack: 302 nested parentheses, 429 lists or 487 records when well
 * formed, 1,250 `else if`s, 776 prefix operators, but 78 unclosed calls when recovery has to walk the
 * rule stack). A config language never needs that: past `MAX_NESTING` levels the parse stops at that
 * token and TC1007 is reported. fast.ts's `tooDeep` counts the same way and gives up where this
 * guard would cut, so a too-deep file is always reported by the Chevrotain path.
 */
import type { IToken, TokenType } from "chevrotain";
import {
  Colon, Comma, Curriculum, Export, Fn, If, Import, LBracket, LCurly, Let, LParen, Minus, Model, Not, RBracket,
  RCurly, Return, RParen, Sweep,
} from "./lexer.js";

import { MAX_NESTING } from "./fast.js";

export { MAX_NESTING };

const OPENER = 1;
const CLOSER = 2;
/** A token that no expression continues through: an open `if … else …` at its level has ended. */
const ENDER = 3;
/** What each token type (by `tokenTypeIdx`) is to the guard, 0 for the rest: one array read per token of the file. */
const roles: number[] = [];
const assign = (role: number, types: TokenType[]) => { for (const t of types) roles[t.tokenTypeIdx!] = role; };
assign(OPENER, [LParen, LBracket, LCurly]);
assign(CLOSER, [RParen, RBracket, RCurly]);
assign(ENDER, [Comma, Let, Fn, Model, Curriculum, Sweep, Import, Export, Return]);

/**
 * Index of the first token that nests deeper than `limit`, or undefined. Depth counts open brackets,
 * `if`s whose expression has not ended (`else if` chains nest), and runs of prefix operators
 * (`- - - x`), each of which the parser recurses into. A `-` directly after an operand is binary, but
 * counting it only makes an unusual run of them look deeper; the limit leaves room for that.
 */
export function firstTooDeep(tokens: readonly IToken[], limit = MAX_NESTING): number | undefined {
  let brackets = 0;
  let prefixRun = 0;
  /** The bracket depth at which each still-open `if` started. */
  const ifs: number[] = [];
  const closeIfsFrom = (depth: number) => {
    while (ifs.length > 0 && ifs.at(-1)! >= depth) ifs.pop();
  };
  for (let i = 0; i < tokens.length; i++) {
    const type = tokens[i]!.tokenType;
    const role = roles[type.tokenTypeIdx!];
    if (role === OPENER) brackets++;
    else if (role === CLOSER) {
      brackets = Math.max(0, brackets - 1);
      closeIfsFrom(brackets + 1);
    } else if (type === If) ifs.push(brackets);
    else if (role === ENDER || tokens[i + 1]?.tokenType === Colon) closeIfsFrom(brackets);
    prefixRun = type === Minus || type === Not ? prefixRun + 1 : 0;
    if (brackets + ifs.length + prefixRun > limit) return i;
  }
  return undefined;
}
