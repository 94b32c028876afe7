/**
 * The token layout every signal function shares: a batch of rows flattened into one token axis.
 *
 * A row is what the learner sees as one sequence: either one turn's response (Trinity/TCOD style,
 * the prompt lives outside the row) or a whole trajectory whose environment tokens carry mask 0
 * (tinker style). Token t of the batch belongs to row r when `rowStart[r] ≤ t < rowStart[r+1]`.
 *
 * Turns are named by `turnOf`, one non-negative integer per token: tokens with equal ids belong to
 * the same turn, wherever they sit. Without `turnOf`, each row is one turn (per-turn rows). Turn ids
 * of tokens with mask 0 are ignored, so env tokens of a trajectory row may carry any id (e.g. −1).
 */
import { UserError } from "../../plan/errors.js";

export class SignalError extends UserError {
  readonly code = "TC7008";
}

export interface TokenLayout {
  /** Row boundaries, length rows + 1, non-decreasing, starting at 0 and ending at the token count. */
  rowStart: Int32Array;
  /** 1 on student-sampled tokens that carry loss, 0 on prompt, environment and padding tokens. */
  mask: Float64Array;
  /** Turn id of each token (see the module comment); absent: each row is one turn. */
  turnOf?: Int32Array;
}

export const rowCount = (l: TokenLayout): number => l.rowStart.length - 1;
export const tokenCount = (l: TokenLayout): number => l.mask.length;

/**
 * Builds a layout from per-row masks and, for trajectory rows, per-token turn ids *local to the row*
 * (e.g. 0, 0, −1, 1, 1: env tokens may carry −1). Local ids become global ones, dense and numbered in
 * order of first appearance over the batch, so turn 0 of one trajectory never merges with turn 0 of
 * another.
 */
export function layoutFromRows(rows: readonly { mask: ArrayLike<number>; turn?: ArrayLike<number> }[]): TokenLayout {
  const rowStart = new Int32Array(rows.length + 1);
  for (let r = 0; r < rows.length; r++) rowStart[r + 1] = rowStart[r]! + rows[r]!.mask.length;
  const n = rowStart[rows.length]!;
  const mask = new Float64Array(n);
  const withTurns = rows.some((r) => r.turn !== undefined);
  if (withTurns && !rows.every((r) => r.turn !== undefined)) {
    throw new SignalError("layoutFromRows: either every row gives `turn` ids or none does.");
  }
  const turnOf = withTurns ? new Int32Array(n) : undefined;
  let nextTurn = 0;
  rows.forEach((row, r) => {
    const global = new Map<number, number>();
    const s = rowStart[r]!;
    if (row.turn && row.turn.length !== row.mask.length) {
      throw new SignalError(`layoutFromRows: row ${r} has ${row.mask.length} mask entries but ${row.turn.length} turn ids.`);
    }
    for (let i = 0; i < row.mask.length; i++) {
      mask[s + i] = row.mask[i]!;
      if (turnOf && row.turn) {
        const local = row.turn[i]!;
        if (local < 0) {
          turnOf[s + i] = -1;
          continue;
        }
        let g = global.get(local);
        if (g === undefined) global.set(local, (g = nextTurn++));
        turnOf[s + i] = g;
      }
    }
  });
  const layout: TokenLayout = turnOf ? { rowStart, mask, turnOf } : { rowStart, mask };
  checkLayout(layout);
  return layout;
}

/** Throws a SignalError naming the first inconsistency of a layout. */
export function checkLayout(l: TokenLayout): void {
  const rs = l.rowStart;
  if (rs.length < 1 || rs[0] !== 0) throw new SignalError("layout.rowStart must start with 0 (it has rows + 1 entries).");
  for (let r = 1; r < rs.length; r++) {
    if (rs[r]! < rs[r - 1]!) throw new SignalError(`layout.rowStart decreases at row ${r - 1} (${rs[r - 1]} → ${rs[r]}).`);
  }
  if (rs[rs.length - 1] !== l.mask.length) {
    throw new SignalError(`layout.rowStart ends at ${rs[rs.length - 1]} but the mask has ${l.mask.length} tokens.`);
  }
  for (let t = 0; t < l.mask.length; t++) {
    const m = l.mask[t]!;
    if (m !== 0 && m !== 1) throw new SignalError(`layout.mask[${t}] = ${m}; masks are 0 (no loss) or 1 (student token).`);
  }
  if (l.turnOf) {
    if (l.turnOf.length !== l.mask.length) {
      throw new SignalError(`layout.turnOf has ${l.turnOf.length} entries but the mask has ${l.mask.length} tokens.`);
    }
    for (let t = 0; t < l.mask.length; t++) {
      if (l.mask[t] === 1 && l.turnOf[t]! < 0) {
        throw new SignalError(`layout.turnOf[${t}] = ${l.turnOf[t]} on a student token; turn ids of student tokens are ≥ 0.`);
      }
    }
  }
}

/** Turn id of every token: `turnOf` where given, else the row index (per-turn rows). */
export function tokenTurnIds(l: TokenLayout): Int32Array {
  if (l.turnOf) return l.turnOf;
  const out = new Int32Array(l.mask.length);
  for (let r = 0; r < rowCount(l); r++) out.fill(r, l.rowStart[r]!, l.rowStart[r + 1]!);
  return out;
}

/** Row index of every token. */
export function tokenRowIds(l: TokenLayout): Int32Array {
  const out = new Int32Array(l.mask.length);
  for (let r = 0; r < rowCount(l); r++) out.fill(r, l.rowStart[r]!, l.rowStart[r + 1]!);
  return out;
}

/** Throws unless `xs` has one entry per token of the layout. */
export function expectTokens(l: TokenLayout, xs: ArrayLike<number>, what: string): void {
  if (xs.length !== l.mask.length) {
    throw new SignalError(`${what} has ${xs.length} entries but the layout has ${l.mask.length} tokens.`);
  }
}

/** Throws unless two per-token arrays have the same length. */
export function expectSameLength(a: ArrayLike<number>, b: ArrayLike<number>, what: string): void {
  if (a.length !== b.length) throw new SignalError(`${what}: lengths differ (${a.length} vs ${b.length}).`);
}

/** Throws unless every entry is a finite number (NaN/±Infinity in a signal is always a bug upstream). */
export function expectFinite(xs: ArrayLike<number>, what: string): void {
  for (let i = 0; i < xs.length; i++) {
    if (!Number.isFinite(xs[i]!)) throw new SignalError(`${what}[${i}] is ${xs[i]}; expected a finite number.`);
  }
}
