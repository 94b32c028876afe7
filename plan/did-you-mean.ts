/**
 * "Did you mean …?": the closest name to a misspelt one, by edit distance. One rule for every
 * suggestion tcod makes: the compiler's diagnostics (re-exported by compiler/diagnostics) and
 * `tcod import trinity`'s unknown keys. Imports nothing.
 */

/** The closest candidate within a small edit distance (a third of the name's length, at least 1), if any. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const a = name.toLowerCase();
  const limit = Math.max(1, Math.floor(name.length / 3));
  for (const c of candidates) {
    const b = c.toLowerCase();
    // A distance is at least the difference in length: a candidate beyond the limit never counts.
    if (Math.abs(a.length - b.length) > limit) continue;
    const dd = editDistance(a, b);
    if (dd < bestD) { bestD = dd; best = c; }
  }
  return best !== undefined && bestD <= limit ? best : undefined;
}

/** " Did you mean 'x'?" for the closest candidate within a small edit distance, else "". */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const best = closestName(name, candidates);
  return best !== undefined ? ` Did you mean '${best}'?` : "";
}

/** The three rows of `editDistance`, kept for the next call (did-you-mean measures many candidates). */
let rows = [new Int32Array(32), new Int32Array(32), new Int32Array(32)] as const;

/** Optimal string alignment distance (edits, and swaps of neighbours); three rows of the table at a time. */
export function editDistance(a: string, b: string): number {
  const n = b.length;
  if (rows[0].length < n + 1) { const k = 2 * (n + 1); rows = [new Int32Array(k), new Int32Array(k), new Int32Array(k)]; }
  // (Every cell read is written first in this call: row j−2 of `before` only from the second row on.)
  let [before, prev, row] = rows;
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, before[j - 2]! + 1);
      row[j] = v;
    }
    [before, prev, row] = [prev, row, before];
  }
  return prev[n]!;
}
