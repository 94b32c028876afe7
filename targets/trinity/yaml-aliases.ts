/**
 * A YAML document's aliases (`*name`) and merge keys (`<<: *name`, `<<: [*a, *b]`, `<<: {…}`) resolved
 * as PyYAML's SafeLoader resolves them, since Trinity-RFT reads its config with it (OmegaConf.load):
 * the result is a tree of the yaml package's nodes that holds neither, which every reader of
 * `tcod import trinity` then walks as if the file had been written out. Nothing is copied that need
 * not be: an alias becomes its anchored node itself (shared, as PyYAML shares it), so a value, a
 * key and its position are those of the anchored text; only a mapping with a merge key, or one
 * holding an alias somewhere below, is a new node (with the range of the mapping it stands for).
 *
 * What PyYAML refuses is refused here too, at the alias or anchor: an alias with no anchor before
 * it ("found undefined alias"), an anchor name given twice ("found duplicate anchor"), a merge key
 * whose value is not a mapping or a list of mappings. An alias inside the very node it names is
 * accepted by PyYAML (a recursive structure) but not by OmegaConf, which recurses into it without
 * end: refused. And, before anything expands: aliases that would make the tree nest deeper than
 * `maxDepth`, or add more than `maxAdded` nodes to it (a "billion laughs" bomb, each alias repeating
 * its anchor's content, those nesting into an exponential blow-up). Sizes and depths are counted
 * over the shared nodes once each, without recursion, so the bomb is measured without expanding it.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, Pair, YAMLMap, YAMLSeq, type Alias, type Schema } from "yaml";

/** How a pair of the resolved tree came to be where it is, when not written there. */
export interface Via {
  /**
   * "alias": its value is an alias (`key: *name`); "merge": a merge key (`<<`) brought it;
   * "interpolation": its value is an OmegaConf interpolation of another key (`key: ${a.b}`, which
   * the import resolves after the aliases, as OmegaConf does after PyYAML).
   */
  kind: "alias" | "merge" | "interpolation";
  /** The anchor's name (for "merge", the merged alias's, when the merge key names one). */
  anchor?: string;
  /** "interpolation": the key it names (`a.b`). */
  target?: string;
  /** "interpolation": the file leaves that key out, and the value is Trinity-RFT's default for it. */
  default?: true;
  /** Offset in the text of the alias, of the merge key, or of the interpolation. */
  offset: number;
}

export interface AliasProblem {
  kind: "undefined" | "duplicate" | "recursive" | "too-deep" | "too-large" | "merge" | "merge-conflict";
  /** Offset in the text where it is reported. */
  offset: number;
  /** The anchor's name, where there is one. */
  anchor?: string;
  /** "merge-conflict": the key two mappings of one merge list give different values. */
  key?: string;
}

/** Where the resolved tree holds what was not written there: by pair, and by list item. */
export interface Provenance {
  pairs: WeakMap<Pair, Via>;
  /** A resolved list's items that were aliases (undefined where written). */
  items: WeakMap<YAMLSeq, (Via | undefined)[]>;
}

export type Resolution =
  | { ok: true; root: unknown; via: Provenance }
  | { ok: false; problem: AliasProblem };

/** The value of a merge key as the yaml package parses it with `merge: true` (a symbol `<<`, plain only). */
const isMergeKey = (key: unknown): boolean => isScalar(key) && typeof key.value === "symbol" && key.value.description === "<<";

const rangeStart = (n: unknown): number => ((n as { range?: [number, number, number] } | null)?.range?.[0] ?? 0);

/**
 * `root` (a document's contents, parsed with `merge: true`) with its aliases and merge keys
 * resolved, or the first problem. `maxDepth`: the deepest a collection may stand (the root's
 * items at 1); `maxAdded`: how many nodes the aliases may add to the tree, all expansions counted.
 */
export function resolveAliases(root: unknown, schema: Schema, limits: { maxDepth: number; maxAdded: number }): Resolution {
  const measured = measure(root, limits);
  if ("kind" in measured) return { ok: false, problem: measured };
  const { source } = measured;
  const via: Provenance = { pairs: new WeakMap(), items: new WeakMap() };
  const done = new Map<unknown, unknown>();
  let problem: AliasProblem | undefined;
  // Recursion is bounded: measure() refused anything nesting deeper than maxDepth, aliases followed.
  const resolve = (n: unknown): unknown => {
    if (isAlias(n)) return resolve(source.get(n));
    if (!isMap(n) && !isSeq(n)) return n;
    if (done.has(n)) return done.get(n);
    let out: unknown;
    if (isSeq(n)) {
      const items = n.items.map(resolve);
      if (items.every((x, i) => x === n.items[i])) out = n;
      else {
        const seq = copy(new YAMLSeq(schema), n, items);
        via.items.set(seq, n.items.map((x) => (isAlias(x) ? { kind: "alias", anchor: x.source, offset: rangeStart(x) } : undefined)));
        out = seq;
      }
    } else out = resolveMap(n);
    done.set(n, out);
    return out;
  };
  // PyYAML's flatten_mapping: the pairs a mapping's merge keys bring come first (of a list of
  // mappings, the earlier one wins), then its own; a later pair of the same key replaces the value
  // of an earlier one where that stood (a Python dict), so the mapping's own keys win. Which mapping
  // of a merge list wins a key they share is not one rule across PyYAML releases: 6.0.3 and before
  // take the earlier (as the YAML merge spec says), 6.0.4 the later one for most keys (it dedupes
  // merged keys by the identity of their Python strings). Such a key, with values that differ and
  // not set by the mapping itself, is refused ("merge-conflict"): its value would depend on the
  // PyYAML that Trinity-RFT runs with.
  const resolveMap = (n: YAMLMap): YAMLMap => {
    const merged: Pair[] = [];
    const own: Pair[] = [];
    const conflicts: { key: string; offset: number }[] = [];
    let changed = false;
    for (const p of n.items as Pair[]) {
      if (isMergeKey(p.key)) {
        changed = true;
        // Each merged mapping with the anchor it was named by (`<<: *a`, `<<: [*a, *b]`), if any.
        const v = resolve(p.value);
        const named = isSeq(v)
          ? (isAlias(p.value) ? v.items.map((x) => [x, undefined] as const) : (p.value as YAMLSeq).items.map((x) => [x, isAlias(x) ? x.source : undefined] as const))
          : [[p.value, isAlias(p.value) ? p.value.source : undefined] as const];
        const sources = named.map(([x, anchor]) => [resolve(x), anchor] as const);
        if (sources.some(([s]) => !isMap(s))) {
          problem ??= { kind: "merge", offset: rangeStart(p.value ?? p.key) };
          continue;
        }
        const offset = rangeStart(p.key);
        const seen = new Map<unknown, unknown>();
        for (const [s] of sources) {
          for (const q of (s as YAMLMap).items as Pair[]) {
            const k = isScalar(q.key) ? q.key.value : q.key;
            if (!seen.has(k)) seen.set(k, q.value);
            else if (!sameValue(seen.get(k), q.value)) conflicts.push({ key: String(k), offset });
          }
        }
        for (const [s, anchor] of [...sources].reverse()) {
          for (const q of (s as YAMLMap).items as Pair[]) {
            const m = new Pair(q.key, q.value);
            via.pairs.set(m, { kind: "merge", offset, ...(anchor !== undefined ? { anchor } : {}) });
            merged.push(m);
          }
        }
        continue;
      }
      const key = resolve(p.key);
      const value = resolve(p.value);
      if (key === p.key && value === p.value) { own.push(p); continue; }
      changed = true;
      const q = new Pair(key, value);
      if (isAlias(p.value)) via.pairs.set(q, { kind: "alias", anchor: p.value.source, offset: rangeStart(p.value) });
      own.push(q);
    }
    if (!changed) return n;
    const ownKeys = new Set(own.map((p) => (isScalar(p.key) ? p.key.value : p.key)));
    const conflict = conflicts.find((c) => !ownKeys.has(c.key));
    if (conflict) problem ??= { kind: "merge-conflict", offset: conflict.offset, key: conflict.key };
    const slot = new Map<unknown, number>();
    const items: Pair[] = [];
    for (const p of [...merged, ...own]) {
      const k = isScalar(p.key) ? p.key.value : p.key;
      const i = slot.get(k);
      if (i === undefined) { slot.set(k, items.length); items.push(p); } else items[i] = p;
    }
    return copy(new YAMLMap(schema), n, items);
  };
  const out = resolve(root);
  return problem ? { ok: false, problem } : { ok: true, root: out, via };
}

/** Whether two resolved values are the same data (scalars by value, collections item by item). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isScalar(a) && isScalar(b)) return a.value === b.value;
  if (isSeq(a) && isSeq(b)) return a.items.length === b.items.length && a.items.every((x, i) => sameValue(x, b.items[i]));
  if (isMap(a) && isMap(b)) {
    const pa = a.items as Pair[], pb = b.items as Pair[];
    return pa.length === pb.length && pa.every((p, i) => sameValue(p.key, pb[i]!.key) && sameValue(p.value, pb[i]!.value));
  }
  return false;
}

/** `to` with `from`'s range and flow style, and `items`. */
function copy<T extends YAMLMap | YAMLSeq>(to: T, from: YAMLMap | YAMLSeq, items: unknown[]): T {
  to.items = items as never;
  to.range = from.range;
  to.flow = from.flow;
  return to;
}

/**
 * One pass over the written tree, in document order, without recursion: each alias's anchored node
 * (the last anchor of its name before it; PyYAML refuses a name given twice), and the size and depth
 * each node has once its aliases are expanded, counted over shared nodes once each. An anchor's
 * node is complete before any alias of it that is not inside it, so its counts are known by then.
 */
function measure(root: unknown, limits: { maxDepth: number; maxAdded: number }): AliasProblem | { source: Map<Alias, unknown> } {
  const anchors = new Map<string, unknown>();
  const source = new Map<Alias, unknown>();
  /** Nodes, expanded: how many; how many collection levels below (-1 for a scalar). */
  const size = new Map<unknown, number>();
  const levels = new Map<unknown, number>();
  const open = new Set<unknown>();
  let added = 0;
  const stack: { n: unknown; depth: number; exit: boolean }[] = [{ n: root, depth: 0, exit: false }];
  while (stack.length > 0) {
    const { n, depth, exit } = stack.pop()!;
    if (n === null || n === undefined || typeof n !== "object") continue;
    const anchor = (n as { anchor?: string }).anchor;
    if (!exit) {
      if (isAlias(n)) {
        const s = anchors.get(n.source);
        if (s === undefined) return { kind: "undefined", offset: rangeStart(n), anchor: n.source };
        if (open.has(s)) return { kind: "recursive", offset: rangeStart(n), anchor: n.source };
        source.set(n, s);
        const lv = levels.get(s)!;
        if (depth + lv > limits.maxDepth) return { kind: "too-deep", offset: rangeStart(n), anchor: n.source };
        added += size.get(s)! - 1;
        if (added > limits.maxAdded) return { kind: "too-large", offset: rangeStart(n), anchor: n.source };
        size.set(n, size.get(s)!);
        levels.set(n, lv);
        continue;
      }
      if (anchor !== undefined) {
        if (anchors.has(anchor)) return { kind: "duplicate", offset: rangeStart(n), anchor };
        anchors.set(anchor, n);
      }
      if (!isMap(n) && !isSeq(n)) { size.set(n, 1); levels.set(n, -1); continue; }
      open.add(n);
      stack.push({ n, depth, exit: true });
      const children: unknown[] = [];
      for (const item of n.items as unknown[]) {
        if (isPair(item)) children.push(item.key, item.value); else children.push(item);
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push({ n: children[i], depth: depth + 1, exit: false });
      continue;
    }
    open.delete(n);
    let s = 1;
    let lv = 0;
    for (const item of (n as YAMLMap | YAMLSeq).items as unknown[]) {
      for (const c of isPair(item) ? [item.key, item.value] : [item]) {
        if (c === null || c === undefined || typeof c !== "object") continue;
        s += size.get(c) ?? 1;
        lv = Math.max(lv, (levels.get(c) ?? -1) + 1);
      }
    }
    size.set(n, s);
    levels.set(n, lv);
  }
  return { source };
}
