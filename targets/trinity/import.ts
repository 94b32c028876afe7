/**
 * Trinity-RFT config (YAML) → an idiomatic `.tcod` file (std/envs, std/tcod f2b/b2f, std/loss opd).
 * The inverse of targets/trinity/export.ts on every curriculum-relevant key: exporting the imported
 * file gives those keys back with the same values (test/trinity/roundtrip.test.ts).
 *
 * OmegaConf interpolation: `${oc.env:VAR,default}` becomes its default, as the string OmegaConf
 * makes of it (tcod is pure and never reads the environment; the import notes each one),
 * `${oc.env:VAR}` without a default is an error, `${a.b.c}` alone is that key's node itself (a
 * mapping or list included: Reader.expandInterpolations; for a key the file leaves out, Trinity's
 * static default, fields.ts), inside a string Python's str() of it as its field holds it, and
 * an escaped `\${` is the text `${` (interpolation.ts, as OmegaConf reads it). Anything else is an error.
 *
 * A null is taken (as absent) only where Trinity's field is Optional (fields.ts `nullable`); elsewhere Trinity
 * refuses it, and so does the import.
 *
 * Keys that only describe the cluster (GPUs, engines, TP, Ray, monitor…) are not curriculum and are
 * left to `tcod export trinity`'s infrastructure options. Curriculum keys whose value tcod cannot
 * express are errors with the YAML path and line, never dropped.
 */
import { OPTIMIZER_DEFAULTS } from "../../plan/defaults.js";
import { UserError, type UserIssue } from "../../plan/errors.js";
import { lineColumn } from "../../plan/json-error.js";
import { decodeSource, hexBytes, type SourceText, wrongEncoding } from "../../grammar/source-chars.js";
import { closestName } from "../../plan/did-you-mean.js";
import { DEFAULT_INFRA, FIXED_KEYS, infraProblem, INFRA_KEYS } from "./export.js";
import { anyKeyPath, envDefault, keyPath, nestedInterpolations, splitInterpolations, wholeInterpolation } from "./interpolation.js";
import { DATACLASSES, FIELDS, type FieldType, type Json } from "./fields.js";
import { convert, pythonFloat, pythonInt, pythonStrOf } from "./field-values.js";
import { resolveAliases, type AliasProblem, type Provenance, type Via } from "./yaml-aliases.js";
import { constructTagged, omegaconfTags, pythonStr, readPlain, type PlainReading } from "./yaml-scalars.js";
import { Document, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, Scalar, visit, type Node as YamlNode, type Pair, type YAMLMap, type YAMLSeq } from "yaml";

export interface ImportIssue { path: string; line: number; column: number; message: string; hint: string }
export class TrinityImportError extends UserError {
  readonly code = "TC7101";
  constructor(readonly file: string, readonly issues: ImportIssue[]) {
    super(issues.map((i) => `${file}:${i.line}:${i.column} error: ${i.message} (at ${i.path})\n  hint: ${i.hint}`).join("\n"));
  }
  override problems(): UserIssue[] {
    return this.issues.map((i) => ({ message: i.message, hint: i.hint, where: { file: this.file, line: i.line, column: i.column, path: i.path } }));
  }
}

export interface TrinityImport {
  /** Cluster settings of the config that `tcod export trinity --infra` takes back (explorer.env_vars…),
   *  as `--infra` arguments; they are not curriculum, so the .tcod file only mentions them. */
  infra: string[];
  /** The .tcod source text. */
  source: string;
  /** The curriculum's name in it. */
  curriculum: string;
  /** What the import resolved or chose, one line each (interpolations, defaults taken from Trinity). */
  notes: string[];
  /**
   * The YAML key the text at [start, end) of `source` was written from (the innermost piece holding
   * it), with its line and column; undefined outside every such piece. A compile error of the
   * source is reported there (bin/commands/import.ts).
   */
  origin(start: number, end: number): { path: string; line: number; column: number } | undefined;
  /**
   * Problems found in spans of `source` (a compile error of it) as issues at the YAML keys their
   * text was written from (`origin`), as the import reports its own: naming the alias or merge key
   * that brought a value, and one issue for a value several places share. Undefined when a span
   * was not written from a key.
   */
  issuesAt(found: { start: number; end: number; message: string; hint: string }[]): ImportIssue[] | undefined;
}

/**
 * Pieces of generated text tagged with the YAML path they were written from: `mark` wraps a piece in
 * control characters (a YAML string holding one is refused by `Reader.str`, and JSON.stringify
 * escapes them), `strip` removes them and keeps where each piece ended up.
 */
class Origins {
  private readonly paths: Path[] = [];
  mark(path: Path, text: string): string {
    this.paths.push(path);
    return `\u0001${this.paths.length - 1}\u0002${text}\u0003`;
  }
  strip(marked: string): { text: string; pieces: { start: number; end: number; path: Path }[] } {
    let text = "";
    const pieces: { start: number; end: number; path: Path }[] = [];
    const open: { start: number; path: Path }[] = [];
    for (let i = 0; i < marked.length; i++) {
      const c = marked[i]!;
      if (c === "\u0001") {
        const j = marked.indexOf("\u0002", i);
        open.push({ start: text.length, path: this.paths[Number(marked.slice(i + 1, j))]! });
        i = j;
      } else if (c === "\u0003") {
        const o = open.pop()!;
        pieces.push({ start: o.start, end: text.length, path: o.path });
      } else text += c;
    }
    return { text, pieces };
  }
}

/** TCOD workflows: `<method>_<env>_workflow` (docs/REFERENCES.md#tcod-values). */
const WORKFLOW = /^(OPD|TCOD_f2b|TCOD_b2f)_(alfworld|webshop|scienceworld)_workflow$/;
/** The default prompt key of each env's taskset rows (TCOD data formats, §1.8). */
const PROMPT_KEYS: Record<string, string> = { alfworld: "game_file", webshop: "task_id", scienceworld: "task_desc" };
/** Default Hmax of each env in std/envs (and TCOD's workflows). */
const DEFAULT_MAX_TURNS: Record<string, number> = { alfworld: 30, webshop: 15, scienceworld: 30 };
/** tcod's evaluation split for a Trinity `test` taskset, per env (std/envs split names). */
function evalSplit(env: string, name: string, path: string): string {
  if (env === "webshop" || env === "scienceworld") return "test";
  const s = `${name} ${path}`.toLowerCase();
  return s.includes("unseen") ? "valid_unseen" : s.includes("hard") ? "hard" : "valid_seen";
}
const LOSS_AGG: Record<string, string> = { "token-mean": "token_mean", "seq-mean-token-mean": "seq_mean_token_mean" };
const OPD_ADVANTAGES = new Set(["multi_turn_opd", "on_policy_distill"]);
/** The names `tcod export trinity` gives a generated plugin's workflow and advantage (`tcod_<plan>_…`). */
const GENERATED_WORKFLOW = /^tcod_\w+_workflow$/;
const GENERATED_ADVANTAGE = /^tcod_\w+_advantage$/;
const GENERATED_HINT = "Use the .tcod file (or compiled plan .json) this config was exported from: `tcod run` and `tcod export trinity` take it. `tcod import trinity` reads configs of the TCOD workflows (OPD_<env>_workflow, TCOD_f2b_<env>_workflow, TCOD_b2f_<env>_workflow).";

type Path = (string | number)[];

/*
 * Trinity-RFT's config keys, section by section, are the fields of its dataclasses (fields.ts,
 * DATACLASSES: the union over the releases 0.4.1 to 0.6.0). Trinity merges a config into these
 * dataclasses (OmegaConf.structured), which refuses a key its dataclass lacks, in every section and
 * every mapping whose field is a dataclass itself; so does the import (`Reader.dataclassKeys`), rather
 * than drop a misspelt key unsaid. Fields marked "DO NOT SET" there are still accepted by Trinity, so
 * they are here too; add_strategy, add_strategy_args and use_token_level_loss are not (no release
 * from 0.4.1 to 0.6.0 has them, and Trinity refuses them). A null is taken only where the field is
 * Optional (fields.ts `nullable`; `Reader.dataclassNulls`).
 */
/** Past this many keys, an unknown key's hint names a few and the dataclass rather than all of them. */
const HINT_KEYS = 30;

/** One issue about a value and the places (paths) where it is refused with the same message. */
interface ValueGroup { message: string; places: { path: string; via: Via | undefined }[]; issue: ImportIssue }

class Reader {
  readonly issues: ImportIssue[] = [];
  readonly notes: string[] = [];
  private readonly lc = new LineCounter();
  readonly doc: Document;
  readonly text: string;
  /** What aliases and merge keys brought where (expandAliases). */
  private via: Provenance = { pairs: new WeakMap(), items: new WeakMap() };
  /** Nodes standing for Trinity's default of a key the file leaves out (expandInterpolations): their text is Python's, not the file's. */
  private readonly defaults = new WeakSet<object>();
  /** The value issues of `issues` by the node they are about (report). */
  private readonly shared = new Map<unknown, ValueGroup[]>();
  /**
   * `config`: the file's text, or its bytes (what the CLI reads), which are also checked to be UTF-8.
   * Text a caller decoded itself is taken as it is: a U+FFFD in it cannot be told from one that
   * replaced bytes which are not UTF-8.
   */
  constructor(config: string | Uint8Array, readonly file: string) {
    const decoded: SourceText = typeof config === "string" ? { text: config } : decodeSource(config);
    // Lone CRs (old Mac line endings) are line breaks to PyYAML, which Trinity-RFT reads the config
    // with, but not to the YAML parser here (it would read "a: 1\rb: 2" as one key "a" whose value
    // is "1\rb: 2"): each becomes an LF. One character for one, so offsets, lines and columns are
    // the file's as PyYAML counts them. CRLF is left as it is.
    let text = decoded.text.includes("\r") ? decoded.text.replace(/\r(?!\n)/g, "\n") : decoded.text;
    // PyYAML also breaks lines at NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR
    // (U+2029); the YAML parser here does not (it would read "a: 1\u2028b: 2" as one key, and count
    // lines short). Each becomes an LF too, one character for one, so lines and columns are PyYAML's.
    // A NEL is exactly an LF to PyYAML everywhere (its scan_line_break reads it as "\n"). A U+2028 or
    // U+2029 between tokens or in a comment is a plain line break; inside a value that runs on past
    // it (a quoted or plain scalar folded over lines, a block scalar), PyYAML keeps the character
    // itself where an LF would be folded to a space or kept as "\n": the value would differ, so such
    // a file is refused below (separatorInValue), not imported with a value Trinity would not read.
    const separators: number[] = [];
    if (/[\u0085\u2028\u2029]/.test(text)) {
      for (const m of text.matchAll(/[\u2028\u2029]/g)) separators.push(m.index);
      text = text.replace(/[\u0085\u2028\u2029]/g, "\n");
    }
    this.text = text;
    // A UTF-16 or UTF-32 file (Windows PowerShell's `>` writes UTF-16) read as UTF-8 is its BOM as
    // U+FFFD and NULs beside each ASCII character, which YAML parses as one odd scalar ("not a
    // mapping"): said as what it is, before parsing; so is UTF-16 appended to a UTF-8 file (`>>`),
    // at its start, rather than as its first NUL.
    const wrong = wrongEncoding(text);
    if (wrong) {
      this.doc = parseDocument("", { lineCounter: this.lc });
      this.issues.push({
        path: "$", ...lineColumn(text, wrong.offset),
        message: `the file is encoded as ${wrong.encoding}; Trinity-RFT (OmegaConf.load) and tcod read a config as UTF-8`,
        hint: "Save it as UTF-8: in PowerShell, `Get-Content in.yaml | Set-Content -Encoding utf8 out.yaml` (Windows PowerShell's `>` and Out-File write UTF-16); in an editor, save with encoding UTF-8. Where UTF-16 follows UTF-8 text (Windows PowerShell's `>>` appends UTF-16 to a UTF-8 file), write that part again as UTF-8, e.g. in an editor.",
      });
      return;
    }
    // Bytes that are not UTF-8 (a Latin-1 'é', the byte 0xE9, in a comment or a value), which the
    // decoding above read as U+FFFD: Trinity-RFT opens the config as UTF-8 (OmegaConf.load) and fails
    // with a UnicodeDecodeError, whatever the YAML says; refused at the first, before anything else
    // (after the wrong encoding above, which is also bytes that are not UTF-8, said more usefully).
    const invalid = decoded.badBytes?.[0];
    if (invalid !== undefined) {
      this.doc = parseDocument("", { lineCounter: this.lc });
      this.issues.push({
        path: "$", ...lineColumn(text, invalid.offset),
        message: `the file is not valid UTF-8: the byte ${hexBytes(invalid.bytes.slice(0, 1))} here is not UTF-8 (read as U+FFFD); Trinity-RFT (OmegaConf.load) reads a config as UTF-8 and refuses it with a UnicodeDecodeError`,
        hint: "Save the file as UTF-8: a Latin-1 or Windows-1252 'é' is the byte 0xE9, in UTF-8 it is 0xC3 0xA9 (in an editor, save with encoding UTF-8; iconv -f latin1 -t utf-8 in.yaml > out.yaml).",
      });
      return;
    }
    // A character YAML does not allow in a file (a NUL, another control character but TAB, LF and CR)
    // anywhere, a comment or a value the import never reads included: PyYAML, which Trinity reads
    // the config with (OmegaConf.load), refuses the whole file ("unacceptable character #x0000:
    // control characters are not allowed"); the YAML parser here takes it. Refused before parsing,
    // at the first, as PyYAML does.
    const bad = unacceptableCharacter(text);
    if (bad) {
      this.doc = parseDocument("", { lineCounter: this.lc });
      this.issues.push({ path: "$", ...bad });
      return;
    }
    // merge: `<<` keys are YAML 1.1 merge keys, as to PyYAML (and two of them in a mapping are not duplicates).
    // customTags: plain scalars read as OmegaConf.load reads them, YAML 1.1 (yaml-scalars.ts).
    this.doc = parseDocument(text, { lineCounter: this.lc, keepSourceTokens: true, uniqueKeys: true, merge: true, customTags: omegaconfTags });
    // Before the YAML errors: a separator inside a value can be what makes it invalid YAML here
    // (a folded line indented too little), and that is not what the file means to PyYAML.
    if (separators.length > 0) {
      const inValue = separatorInValue(this.doc, separators);
      if (inValue !== undefined) {
        const name = decoded.text[inValue] === "\u2028" ? "U+2028 (LINE SEPARATOR)" : "U+2029 (PARAGRAPH SEPARATOR)";
        this.issues.push({
          path: "$", ...lineColumn(text, inValue),
          message: `${name} inside a value: PyYAML (which Trinity-RFT reads the config with) breaks the line there but keeps the character in the value, where a line feed would be folded to a space; tcod cannot import that value as Trinity would read it`,
          hint: "Replace it with a line feed (a plain line break), or, to keep the character, write it as the escape \"\\u2028\" (\"\\u2029\") in a double-quoted string.",
        });
        // Refused whole, as the characters above are: nothing else is said about the file.
        this.doc = parseDocument("", { lineCounter: new LineCounter() });
        return;
      }
    }
    // The YAML parser recurses per level of nesting and reports its stack running out as an error
    // (once, or once per enclosing collection): one issue, at the first.
    const overflow = this.doc.errors.find((e) => /call stack/i.test(e.message));
    // A second document (after `---`) is reported once, at its start, whatever follows.
    const secondDoc = this.doc.errors.find((e) => e.code === "MULTIPLE_DOCS");
    for (const e of overflow ? [overflow] : this.doc.errors) {
      const p = this.lc.linePos(e.pos[0]);
      if (e === overflow) this.issues.push({ path: "$", line: p.line, column: p.col, ...TOO_DEEP });
      else if (e === secondDoc) this.issues.push({ path: "$", line: p.line, column: p.col, ...MULTIPLE_DOCS });
      else if (e.code !== "MULTIPLE_DOCS") this.issues.push({ path: "$", line: p.line, column: p.col, message: `not valid YAML: ${e.message.split("\n")[0]}`, hint: "Fix the YAML syntax." });
    }
    // A tag SafeLoader cannot construct, or one on the wrong kind of node: the yaml package only
    // warns and reads the value untagged, PyYAML refuses the file.
    if (this.issues.length === 0) {
      const t = firstBadTag(this.doc);
      if (t) { const p = this.lc.linePos(t.offset); this.issues.push({ path: "$", line: p.line, column: p.col, message: t.message, hint: t.hint }); }
    }
    if (this.issues.length === 0) {
      const m = firstMergeValue(this.doc.contents, []);
      if (m) {
        const p = this.lc.linePos(m.offset);
        this.issues.push({
          path: fmt(m.path), line: p.line, column: p.col,
          message: `${fmt(m.path)}: a plain \`<<\` is YAML 1.1's merge key to PyYAML, which Trinity-RFT reads the config with (OmegaConf.load); as a value it cannot be constructed, and Trinity refuses the file ("could not determine a constructor for the tag 'tag:yaml.org,2002:merge'")`,
          hint: "Quote it ('<<') to mean the string; a merge key goes in a key's place (`<<: *anchor`).",
        });
      }
    }
    if (this.issues.length === 0) {
      // Past MAX_YAML_DEPTH, refused before anything (toJSON, getIn, the import's own walks) recurses into it.
      const deep = firstTooDeep(this.doc.contents);
      if (deep) { const p = this.lc.linePos(deep[0]); this.issues.push({ path: "$", line: p.line, column: p.col, ...TOO_DEEP }); }
    }
    if (this.issues.length === 0) this.expandAliases();
    if (this.issues.length === 0) this.expandInterpolations();
  }
  /**
   * Every value that is one interpolation of another key and nothing else (`key: ${a.b}`) made that
   * key's node, as OmegaConf hands Trinity the value itself, typed (a number stays a number, a
   * mapping or list is the whole node, and the field converts it as if written there: `16.0` in an
   * int field is refused, null in a field that is not Optional too). Like an alias, it keeps the
   * position of the text it stands for, and `via` names the interpolation. Done after the aliases,
   * as OmegaConf resolves after PyYAML. Refused here, as Trinity refuses the config whether or not
   * the import reads the key: an interpolation where Trinity's schema has a section (a dataclass,
   * or a list or mapping of them), which OmegaConf 2.3 refuses at the merge; one inside the node
   * it names; a cycle; and interpolations that would expand the tree too far or too deep (measured
   * on the shared nodes, as for aliases). Left for the read to report (interpolate): a key the file
   * lacks, a resolver, a relative path, and a node that is a section of Trinity's (which OmegaConf
   * fills with defaults the file does not show).
   */
  private expandInterpolations(): void {
    const root = this.doc.contents;
    if (!isMap(root)) return;
    const resolving = new Set<unknown>();
    const refused = new Set<unknown>();
    let firstNode: number | undefined;
    let nodes = 0;
    const sizeBefore = treeSize(root);
    const refuse = (at: number, path: Path, message: string, hint: string): void => {
      const p = this.lc.linePos(at);
      this.issues.push({ path: fmt(path), line: p.line, column: p.col, message, hint });
    };
    /** The value at `ref` made its interpolation's node, if it is one the import follows here. */
    const resolveAt = (ref: Ref): void => {
      const v = ref.get();
      if (!isScalar(v) || typeof v.value !== "string" || refused.has(v)) return;
      const expr = wholeInterpolation(v.value);
      const target = expr === undefined ? undefined : keyPath(expr);
      if (expr === undefined || target === undefined) return;
      const at = v.range?.[0] ?? 0;
      const shown = `\${${expr}}`;
      const slot = slotAt(ref.path);
      if (slot !== "field") {
        refused.add(v);
        const section = "dataclass" in slot ? `the section ${slot.dataclass} (a dataclass)` : `a ${slot.shape === "list" ? "list" : "mapping"} of ${slot.each} sections`;
        return refuse(at, ref.path, `${fmt(ref.path)}: the interpolation ${shown} stands where Trinity-RFT's config has ${section}: OmegaConf 2.3 refuses that when Trinity loads the config ("Merge error: str is not a subclass of ${"dataclass" in slot ? slot.dataclass : slot.each}"), and later releases take it only from a node of the same dataclass`,
          "Write the section out, or anchor it and repeat it with a YAML alias (`first: &name {…}` … `second: *name`), which Trinity reads as the section written out.");
      }
      // A chain of interpolations longer than any config needs (each followed by recursion).
      if (resolving.size > MAX_YAML_DEPTH) {
        refused.add(v);
        return refuse(at, ref.path, `${fmt(ref.path)}: the interpolation ${shown} ends a chain of more than ${MAX_YAML_DEPTH} interpolations, each naming the next (tcod follows up to ${MAX_YAML_DEPTH})`, "Write the value out.");
      }
      if (resolving.has(v)) {
        refused.add(v);
        return refuse(at, ref.path, `${fmt(ref.path)}: the interpolation ${shown} is part of a cycle of interpolations: OmegaConf cannot resolve it, and Trinity-RFT refuses the config`, "Write the value out in one of the keys of the cycle.");
      }
      resolving.add(v);
      const found = nodeAt(target);
      resolving.delete(v);
      if (!found) {
        // A key the file leaves out: Trinity's static default (fields.ts), as a node of its own at
        // the interpolation's place; any other case is the read's to refuse (interpolate).
        const d = trinityDefault(root, target);
        if (d.kind !== "value") return;
        const node = defaultNode(d.value, d.type, v.range);
        this.defaults.add(node as object);
        ref.set(node);
        this.viaSet(ref, { kind: "interpolation", target: expr.trim(), offset: at, default: true });
        this.noteDefault(ref.path, expr, d);
        return;
      }
      const t = found.node;
      if (isMap(t) || isSeq(t)) {
        if (slotAt(target) !== "field") return;
        if (t === ref.owner || contains(t, ref.owner)) {
          refused.add(v);
          return refuse(at, ref.path, `${fmt(ref.path)}: the interpolation ${shown} stands for a ${isMap(t) ? "mapping" : "list"} that holds it: OmegaConf refuses the config ("Interpolation to parent node detected"), and Trinity-RFT with it`, "Interpolate a key outside it, or write the value out.");
        }
        firstNode ??= at;
        // Each such node is checked against what holds it; a config has a few, a hostile file thousands.
        if (++nodes > MAX_NODE_INTERPOLATIONS) {
          refused.add(v);
          if (nodes > MAX_NODE_INTERPOLATIONS + 1) return;
          return refuse(at, ref.path, `${fmt(ref.path)}: more than ${MAX_NODE_INTERPOLATIONS.toLocaleString("en-US")} interpolations in the config stand for whole mappings or lists; tcod follows up to ${MAX_NODE_INTERPOLATIONS.toLocaleString("en-US")}`, "Write the values out, or repeat them with YAML anchors and aliases.");
        }
      }
      ref.set(t);
      this.viaSet(ref, { kind: "interpolation", target: expr.trim(), offset: at });
    };
    /** The node at `path`, each interpolation on the way followed first. */
    const nodeAt = (path: Path): { node: unknown } | undefined => {
      let n: unknown = root;
      for (const [i, seg] of path.entries()) {
        const ref = refOf(n, seg, path.slice(0, i + 1));
        if (!ref) return undefined;
        resolveAt(ref);
        n = ref.get();
      }
      return { node: n };
    };
    // The written tree, each shared node once per schema slot (aliases share nodes).
    const seen = new Map<unknown, Set<string>>();
    const walk = (n: unknown, path: Path): void => {
      const key = JSON.stringify(slotAt(path));
      const once = seen.get(n) ?? new Set<string>();
      if (once.has(key)) return;
      seen.set(n, once.add(key));
      const children: Ref[] = isMap(n) ? (n.items as Pair[]).map((p) => pairRef(n, p, [...path, keyText(p.key)])) : isSeq(n) ? n.items.map((_, i) => itemRef(n, i, [...path, i])) : [];
      for (const ref of children) {
        const before = ref.get();
        resolveAt(ref);
        if (ref.get() === before) walk(before, ref.path);
      }
    };
    walk(root, []);
    if (firstNode !== undefined && this.issues.length === 0) {
      const after = treeSize(root);
      if (after.depth > MAX_YAML_DEPTH || after.size - sizeBefore.size > MAX_ALIAS_NODES) {
        const p = this.lc.linePos(firstNode);
        this.issues.push({
          path: "$", line: p.line, column: p.col,
          message: `the config's interpolations of mappings and lists (\${key} standing for a whole node) expand it ${after.depth > MAX_YAML_DEPTH ? `deeper than ${MAX_YAML_DEPTH} levels` : `by more than ${MAX_ALIAS_NODES.toLocaleString("en-US")} values`}, which OmegaConf would copy out in full`,
          hint: "Write the values out instead of nesting interpolations of nodes; a Trinity-RFT config needs few, if any.",
        });
      }
    }
  }
  /** Records what brought the value at `ref` there (viaOf reads it). */
  private viaSet(ref: Ref, v: Via): void {
    if (ref.pair) { this.via.pairs.set(ref.pair, v); return; }
    const seq = ref.owner as YAMLSeq;
    const items = this.via.items.get(seq) ?? seq.items.map(() => undefined);
    items[ref.index!] = v;
    this.via.items.set(seq, items);
  }
  /**
   * Aliases and merge keys resolved as PyYAML resolves them (yaml-aliases.ts): the document's
   * contents become a tree without either, so every read, the check of unknown keys included, sees
   * each mapping as Trinity does. A value or key brought by an alias or a merge key keeps the
   * position of the anchored text it was written in (where a fix goes); `via` says which alias or
   * merge key brought it, for the messages of unknown keys. Refused first, at the alias or anchor:
   * what PyYAML or OmegaConf refuses, and aliases that would expand the tree too deep or too far.
   */
  private expandAliases(): void {
    const r = resolveAliases(this.doc.contents, this.doc.schema, { maxDepth: MAX_YAML_DEPTH, maxAdded: MAX_ALIAS_NODES });
    if (!r.ok) {
      const p = this.lc.linePos(r.problem.offset);
      this.issues.push({ path: "$", line: p.line, column: p.col, ...aliasProblem(r.problem) });
      return;
    }
    this.doc.contents = r.root as Document["contents"];
    this.via = r.via;
  }
  node(path: Path): YamlNode | undefined {
    return this.doc.getIn(path, true) as YamlNode | undefined;
  }
  /** Line/column of the node at `path`, or of its nearest present ancestor. */
  pos(path: Path): { line: number; column: number } {
    for (let n = path.length; n >= 0; n--) {
      const node = this.node(path.slice(0, n));
      const range = node?.range;
      if (range) { const p = this.lc.linePos(range[0]); return { line: p.line, column: p.col }; }
    }
    return { line: 1, column: 1 };
  }
  fail(path: Path, message: string, hint: string): undefined {
    this.report(this.issues, this.shared, path, message, hint);
    return undefined;
  }
  /**
   * An issue about the value at `path`, added to `into`. A value an alias or merge key brought to
   * `path` is reported where it is written, under its anchor, and the message names what brought
   * it. A value that one anchor gives several places (the same node) and that is refused with the
   * same message at each is one issue, at the first place, naming all of them (`groups`: the
   * issues of `into` so far by node).
   */
  report(into: ImportIssue[], groups: Map<unknown, ValueGroup[]>, path: Path, message: string, hint: string): void {
    const node = this.node(path);
    const place = { path: fmt(path), via: this.viaOf(path) };
    const group = node !== undefined ? groups.get(node)?.find((g) => g.message === message) : undefined;
    if (group) {
      if (!group.places.some((p) => p.path === place.path)) group.places.push(place);
      group.issue.message = this.placed(message, group.places);
      return;
    }
    const issue = { path: place.path, ...this.pos(path), message: this.placed(message, [place]), hint };
    into.push(issue);
    if (node !== undefined) groups.set(node, [...(groups.get(node) ?? []), { message, places: [place], issue }]);
  }
  /** The alias or merge key that brought what stands at `path` there: the innermost one on the way from the root, if any. */
  private viaOf(path: Path): Via | undefined {
    let via: Via | undefined;
    let n: unknown = this.doc.contents;
    for (const seg of path) {
      if (isMap(n)) {
        const pair = (n.items as Pair[]).find((p) => keyText(p.key) === String(seg));
        if (!pair) break;
        via = this.via.pairs.get(pair) ?? via;
        n = pair.value;
      } else if (isSeq(n) && typeof seg === "number") {
        via = this.via.items.get(n)?.[seg] ?? via;
        n = n.items[seg];
      } else break;
    }
    return via;
  }
  /** `message` with where the value is written and which places it reaches, when an alias or merge key is involved. */
  private placed(message: string, places: { path: string; via: Via | undefined }[]): string {
    if (places.length === 1) return places[0]!.via ? `${message} (${this.broughtBy(places[0]!.via, "value")})` : message;
    const anchor = places.map((p) => p.via?.anchor).find((a) => a !== undefined);
    const via = places.map((p) => p.via).find((v) => v?.target !== undefined);
    const target = via?.default ? `Trinity-RFT's default for ${via.target}` : via?.target;
    const each = places.map((p) => `${p.path} (${p.via ? `brought by ${this.by(p.via)}` : "written there"})`);
    return `${message} (one value${anchor !== undefined ? `, written under the anchor &${anchor},` : target !== undefined ? `, ${via?.default ? "" : "written at "}${target},` : ""} used in ${places.length} places: ${each.slice(0, -1).join(", ")} and ${each.at(-1)})`;
  }
  /**
   * Every key of the mapping `n` (at `path`) that is not in `known`, refused at the key itself
   * (TC7101): Trinity-RFT's config is a structured OmegaConf schema, which refuses a key its
   * dataclass lacks. A key an alias or merge key brought (`via`, else the pair's own) is reported
   * where it is written, under its anchor, the message naming what brought it; a key reached twice
   * so (an anchored section aliased into another of the same dataclass) is reported once (`seen`).
   */
  private unknownKeys(path: Path, n: YAMLMap, dataclass: string, via: Via | undefined, seen: Map<unknown, Set<string>>): void {
    const known = DATACLASSES[dataclass]!.keys;
    const section = sectionLabel(path);
    for (const pair of n.items as Pair[]) {
      const k = isScalar(pair.key) ? pair.key.value : pair.key;
      if (typeof k === "string" && known.has(k)) continue;
      const name = keyText(pair.key);
      const once = seen.get(pair.key) ?? new Set<string>();
      if (once.has(dataclass)) continue;
      seen.set(pair.key, once.add(dataclass));
      const at = [...path, name];
      const range = (pair.key as YamlNode | null)?.range;
      const p = range ? this.lc.linePos(range[0]) : undefined;
      const names = [...known];
      const takes = names.length <= HINT_KEYS
        ? names.join(", ")
        : `the fields of ${dataclass} in Trinity-RFT's trinity/common/config.py (${names.slice(0, 12).join(", ")} and ${names.length - 12} more)`;
      // A misspelling of one of them is named first (" Did you mean 'batch_size'?").
      const close = closestName(name, names);
      const brought = this.via.pairs.get(pair) ?? via;
      this.issues.push({
        path: fmt(at), ...(p ? { line: p.line, column: p.col } : this.pos(at)),
        message: `unknown key ${fmt(at)}: Trinity-RFT's ${section} has no such key, and Trinity refuses the config${brought ? ` (${this.broughtBy(brought, "key")})` : ""}`,
        hint: `${close ? `Did you mean '${close}'? ` : ""}Remove it, or correct its name; ${section} takes ${takes}.`,
      });
    }
  }
  /** "the key is written under the anchor &ts; the alias *ts at line 40, column 12 brings it here". */
  private broughtBy(v: Via, what: "key" | "value"): string {
    if (v.default) return `the ${what} is Trinity-RFT's default for ${v.target}, which the file leaves out; ${this.by(v)} brings it here`;
    const where = v.anchor !== undefined ? `under the anchor &${v.anchor}` : v.target !== undefined ? `at ${v.target}` : undefined;
    return `${where ? `the ${what} is written ${where}; ` : ""}${this.by(v)} brings it here`;
  }
  /** "the alias *ts at line 40, column 12", "the merge key (`<<`) at line 9, column 7", "the interpolation ${a.b} at line 3, column 9". */
  private by(v: Via): string {
    const p = this.lc.linePos(v.offset);
    return `${v.kind === "alias" ? `the alias *${v.anchor}` : v.kind === "interpolation" ? `the interpolation \${${v.target}}` : "the merge key (`<<`)"} at line ${p.line}, column ${p.col}`;
  }
  /**
   * The keys of the mapping `node` (at `path`, aliases and merge keys resolved) against the
   * dataclass `name` of DATACLASSES, then those of its fields that are dataclasses in turn, depth
   * first in the dataclass's field order. A field that is absent, null or not a mapping (a list) is
   * not looked into. `via`: the alias or merge key that brought `node` here, if one did.
   */
  dataclassKeys(path: Path, node: unknown, name: string, via?: Via, seen = new Map<unknown, Set<string>>()): void {
    if (!isMap(node)) return;
    const dc = DATACLASSES[name]!;
    this.unknownKeys(path, node, name, via, seen);
    for (const [field, shape, inner] of dc.nested) {
      const pair = (node.items as Pair[]).find((p) => isScalar(p.key) && p.key.value === field);
      const child = pair?.value;
      const childVia = (pair && this.via.pairs.get(pair)) ?? via;
      if (shape === "one") this.dataclassKeys([...path, field], child, inner, childVia, seen);
      else if (shape === "list" && isSeq(child)) {
        const items = this.via.items.get(child);
        child.items.forEach((item, i) => this.dataclassKeys([...path, field, i], item, inner, items?.[i] ?? childVia, seen));
      } else if (shape === "map" && isMap(child)) {
        for (const q of child.items as Pair[]) {
          this.dataclassKeys([...path, field, String(isScalar(q.key) ? q.key.value : q.key)], q.value, inner, this.via.pairs.get(q) ?? childVia, seen);
        }
      }
    }
  }
  /**
   * Every key of the mapping `node` (at `path`, aliases and merge keys resolved) of the dataclass
   * `name` whose value is null but whose field is not Optional (fields.ts `nullable`), refused at the key
   * (TC7101), then the same in its fields that are dataclasses, as dataclassKeys walks them. Unknown
   * keys are dataclassKeys' to report, and not looked at here.
   */
  dataclassNulls(path: Path, node: unknown, name: string): void {
    if (!isMap(node)) return;
    const dc = DATACLASSES[name]!;
    for (const pair of node.items as Pair[]) {
      const k = isScalar(pair.key) ? pair.key.value : undefined;
      if (typeof k !== "string" || !dc.keys.has(k) || FIELDS[name]![k]!.nullable) continue;
      if (pair.value !== null && !(isScalar(pair.value) && pair.value.value === null)) continue;
      const text = pair.value === null ? "" : this.source([...path, k]) ?? "";
      const written = text === "" ? "an empty value" : `\`${text}\``;
      this.fail([...path, k], `${fmt([...path, k])} is null (${written}), but ${k} is not Optional in Trinity-RFT's ${name} (trinity/common/config.py): OmegaConf refuses None for it, and Trinity refuses the config`, `Remove the key to take Trinity's default, or give it a value.`);
    }
    for (const [field, shape, inner] of dc.nested) {
      const child = (node.items as Pair[]).find((p) => isScalar(p.key) && p.key.value === field)?.value;
      if (shape === "one") this.dataclassNulls([...path, field], child, inner);
      else if (shape === "list" && isSeq(child)) child.items.forEach((item, i) => this.dataclassNulls([...path, field, i], item, inner));
      else if (shape === "map" && isMap(child)) {
        for (const q of child.items as Pair[]) this.dataclassNulls([...path, field, String(isScalar(q.key) ? q.key.value : q.key)], q.value, inner);
      }
    }
  }
  /**
   * Every value of the mapping `node` (at `path`) of the dataclass `name` that its field's type
   * (fields.ts) refuses, refused at the key (TC7101), as OmegaConf refuses it when Trinity merges
   * the config, whether the import reads the field or not: an enum field's non-member (a number, a
   * misspelt name: with the closest member), an int field's float or boolean, a list field's scalar…
   * Then the same in its fields that are dataclasses, as dataclassKeys walks them. Null is
   * dataclassNulls', unknown keys dataclassKeys', a path in `skip` (reported already) and a string
   * holding an interpolation (the reads resolve those the import needs) are left alone.
   */
  dataclassTypes(path: Path, node: unknown, name: string, skip: ReadonlySet<string>): void {
    if (!isMap(node)) return;
    const fields = FIELDS[name]!;
    for (const pair of node.items as Pair[]) {
      const k = isScalar(pair.key) ? pair.key.value : undefined;
      const field = typeof k === "string" ? fields[k] : undefined;
      if (!field || typeof field.type === "object" && "section" in field.type || field.type === "any") continue;
      const at = [...path, k as string];
      const v = pair.value;
      if (skip.has(fmt(at)) || v === null || isScalar(v) && (v.value === null || typeof v.value === "string" && v.value.includes("${"))) continue;
      const value = isScalar(v) ? v.value : (v as { toJSON(): unknown }).toJSON();
      const c = convert(field.type, value as Json, this.plain(at)?.reading.type === "float");
      if (!c.ok) this.fail(at, `${fmt(at)} is ${c.why}`, c.hint);
    }
    for (const [field, shape, inner] of DATACLASSES[name]!.nested) {
      const child = (node.items as Pair[]).find((p) => isScalar(p.key) && p.key.value === field)?.value;
      if (shape === "one") this.dataclassTypes([...path, field], child, inner, skip);
      else if (shape === "list" && isSeq(child)) child.items.forEach((item, i) => this.dataclassTypes([...path, field, i], item, inner, skip));
      else if (shape === "map" && isMap(child)) {
        for (const q of child.items as Pair[]) this.dataclassTypes([...path, field, String(isScalar(q.key) ? q.key.value : q.key)], q.value, inner, skip);
      }
    }
  }
  /**
   * Every interpolation in the config's values checked as OmegaConf resolves it when Trinity-RFT
   * loads the config (`OmegaConf.to_object` resolves every value, those of free-form mappings such
   * as monitor.monitor_args included, and each nested interpolation first), whether the import
   * reads the key or not: refused (TC7101) at the value where Trinity refuses the config (a key
   * neither the file nor Trinity's dataclasses have, a relative key past the root, a resolver
   * Trinity does not register, one without its argument, a `${` never closed, text OmegaConf's
   * grammar does not parse). Only whether it resolves is checked, not its value, which the import
   * does not use: a placeholder default or one that differs between releases resolves, a resolver's
   * result is not computed, and `${oc.env:VAR}` without a default is noted (Trinity refuses the
   * config where VAR is unset). Paths in `skip` (reported already) are left alone.
   */
  checkInterpolations(skip: ReadonlySet<string>): void {
    const seen = new Set<unknown>();
    const walk = (n: unknown, path: Path): void => {
      if (seen.has(n)) return;
      seen.add(n);
      if (isMap(n)) for (const p of n.items as Pair[]) walk(p.value, [...path, keyText(p.key)]);
      else if (isSeq(n)) n.items.forEach((x, i) => walk(x, [...path, i]));
      else if (isScalar(n) && typeof n.value === "string" && n.value.includes("${") && !skip.has(fmt(path))) {
        const found = nestedInterpolations(n.value);
        if ("unclosed" in found) this.fail(path, `'${found.unclosed}' opens an OmegaConf interpolation (\${) that is never closed: Trinity-RFT (OmegaConf) refuses the value`, "Close it with `}`, or escape it (\\${: OmegaConf reads `\\${` as the text `${`) if the text itself is meant.");
        else for (const expr of found.exprs) if (!this.checkExpr(expr, path)) break;
      }
    };
    walk(this.doc.contents, []);
  }
  /** One interpolation's expression `expr` (in the value at `path`) checked as checkInterpolations says; false when refused. */
  private checkExpr(expr: string, path: Path): boolean {
    const shown = `'\${${expr}}'`;
    const inner = nestedInterpolations(expr);
    if ("exprs" in inner && !inner.exprs.every((e) => this.checkExpr(e, path))) return false;
    const resolver = /^\s*([A-Za-z_][\w.]*)\s*:(.*)$/s.exec(expr);
    if (resolver) {
      const [, name, args] = resolver as unknown as [string, string, string];
      if (!OMEGACONF_RESOLVERS.has(name)) {
        this.fail(path, `${shown} calls the resolver ${name}, which Trinity-RFT does not register: OmegaConf refuses the config ("Unsupported interpolation type ${name}")`, `OmegaConf's own resolvers are ${[...OMEGACONF_RESOLVERS].join(", ")}; write the value, or escape it (\\\${…}: OmegaConf reads \`\\\${\` as the text \`\${\`) if the text itself is meant.`);
        return false;
      }
      if (args.trim() === "" && name !== "oc.create" && name !== "oc.decode") {
        this.fail(path, `${shown} gives the resolver ${name} no argument: OmegaConf refuses the config ("missing 1 required positional argument")`, "Give it its argument, or write the value.");
        return false;
      }
      const env = name === "oc.env" && !args.includes(",") && "exprs" in inner && inner.exprs.length === 0 ? args.trim() : undefined;
      if (env !== undefined) {
        const note = `${fmt(path)}: \${${expr.trim()}} is read from the environment when Trinity-RFT loads the config, which it refuses where ${env} is unset (the import does not use this key)`;
        if (!this.notes.includes(note)) this.notes.push(note);
      }
      return true;
    }
    if ("exprs" in inner && inner.exprs.length > 0) return true; // a key named by an interpolation: known only once that resolves
    const key = anyKeyPath(expr);
    if (!key) {
      this.fail(path, `${shown} is not an interpolation OmegaConf's grammar reads (a key path, or resolver:arguments): Trinity-RFT refuses the config`, "Write the key path without spaces or other characters (`${a.b.c}`), or escape it (\\${: OmegaConf reads `\\${` as the text `${`) if the text itself is meant.");
      return false;
    }
    const base = key.up === 0 ? [] : path.slice(0, path.length - key.up);
    if (key.up > path.length) {
      this.fail(path, `${shown} goes ${key.up} levels up from ${fmt(path)}, past the config's root: OmegaConf refuses the config ("Interpolation key '${expr.trim()}' not found")`, "Use fewer dots, or an absolute key path (`${a.b.c}`).");
      return false;
    }
    const target = [...base, ...key.path];
    if (target.length === 0 || this.has(target)) return true;
    const d = trinityDefault(this.doc.contents, target);
    if (d.kind !== "missing") return true;
    const message = key.up === 0 ? defaultRefusal(expr, d)
      : `${shown} refers to ${fmt(target)} (relative to ${fmt(path)}), which this file does not define${d.why ? ` (${d.why})` : ""}: Trinity-RFT (OmegaConf) refuses the config ("Interpolation key '${expr.trim()}' not found")`;
    this.fail(path, message, "Write the value, or define the key it refers to; escape it (\\${: OmegaConf reads `\\${` as the text `${`) if the text itself is meant.");
    return false;
  }
  has(path: Path): boolean { return this.doc.hasIn(path); }
  /** The YAML text of the scalar at `path` as written (`.nan`, `1e400`). */
  source(path: Path): string | undefined {
    const n = this.node(path);
    if (n && isScalar(n) && this.defaults.has(n)) return n.source;
    return n && isScalar(n) && n.range ? this.text.slice(n.range[0], n.range[1]).trim() : undefined;
  }
  /** The value at `path`, OmegaConf interpolations resolved; undefined when absent or null. */
  get(path: Path): unknown {
    const n = this.node(path);
    if (n === undefined || n === null) return undefined;
    if (isScalar(n)) return n.value === null ? undefined : this.interpolate(n.value, path, 0);
    return this.resolvedJSON((n as { toJSON(): unknown }).toJSON(), path);
  }
  /** `json` (the node at `path` as plain data) with every string in it interpolated where it stands, as OmegaConf resolves a mapping or list. */
  resolvedJSON(json: unknown, path: Path): unknown {
    if (Array.isArray(json)) return json.map((x, i) => this.resolvedJSON(x, [...path, i]));
    if (json && typeof json === "object") return Object.fromEntries(Object.entries(json).map(([k, x]) => [k, this.resolvedJSON(x, [...path, k])]));
    // A string that resolves to null (`${oc.env:X,null}`) is null, as `get` gives it as absent.
    return json === null || typeof json !== "string" || !json.includes("${") ? json : this.get(path) ?? null;
  }
  /**
   * The string `v` (at `path`) with its interpolations resolved as OmegaConf resolves them: an
   * escaped `\${` is the text `${`; `${oc.env:VAR,default}` its default, as a string (OmegaConf's
   * resolver returns str() of it); `${a.b}` the value of that key, the value itself when it is the
   * whole string (a whole-value interpolation of a key the file has was made that key's node when
   * the file was read: expandInterpolations), and Python's str() of it inside a longer string.
   * Anything else is refused at `path`.
   */
  private interpolate(v: unknown, path: Path, depth: number): unknown {
    if (typeof v !== "string" || !v.includes("${")) return v;
    if (depth > 8) return this.fail(path, `interpolation cycle in '${v}'`, "Remove the cycle between these keys.");
    const escapeHint = "escape it (\\${: OmegaConf reads `\\${` as the text `${`) if the text itself is meant";
    /** One interpolation's value; `inString`: it is part of a longer string, which holds Python's str() of it. */
    const resolveOne = (expr: string, inString: boolean): unknown => {
      if (expr.includes("${")) return this.fail(path, `'\${${expr}}…' nests an interpolation in an interpolation, which tcod does not resolve`, `Write the value out, or ${escapeHint}.`);
      const env = /^oc\.env:([A-Za-z_][A-Za-z0-9_]*)(?:,(.*))?$/s.exec(expr.trim());
      if (env) {
        if (env[2] === undefined) return this.fail(path, `'\${${expr}}' reads the environment variable ${env[1]} and has no default`, `tcod files are pure: give a default, e.g. \${oc.env:${env[1]},VALUE}, or write the value; escape it (\\\${oc.env:${env[1]}}) if the text itself is meant.`);
        const d = envDefault(env[2]);
        if (!d) return this.fail(path, `'\${${expr}}': tcod cannot tell for certain what OmegaConf makes of the default ${env[2].trim()} (a list, a mapping, quotes, brackets or escapes inside it)`, `Quote the default ('…'), or write the value; ${escapeHint}.`);
        const note = `${fmt(path)}: \${${expr}} → its default ${d.value === null ? "null" : `'${d.value}'`} (tcod does not read the environment)`;
        if (!this.notes.includes(note)) this.notes.push(note);
        return inString && d.value === null ? "None" : d.value ?? undefined;
      }
      const target = keyPath(expr);
      if (target) {
        if (!this.has(target)) {
          // A key the file leaves out is Trinity's default, where that is static (fields.ts).
          const d = trinityDefault(this.doc.contents, target);
          if (d.kind !== "value") return this.fail(path, defaultRefusal(expr, d), d.kind === "missing" ? `Write the value, or define the key it refers to; ${escapeHint}.` : `Write ${fmt(target)} in the file, or the value here; ${escapeHint}.`);
          this.noteDefault(path, expr, d);
          if (!inString) return d.value;
          return pythonStrOf(d.type, d.value) ?? this.fail(path, `'\${${expr}}' puts Trinity-RFT's default for ${fmt(target)}, ${JSON.stringify(d.value)}, into a string: OmegaConf would write Python's repr of it there`, `Write the text out; ${escapeHint}.`);
        }
        const n = this.node(target);
        if (isMap(n) || isSeq(n)) {
          const what = isMap(n) ? "mapping" : "list";
          if (inString) return this.fail(path, `'\${${expr}}' puts the ${what} ${expr.trim()} into a string: Trinity-RFT (OmegaConf) would write Python's repr of it there`, `Write the text out; ${escapeHint}.`);
          return this.fail(path, `'\${${expr}}' stands for ${expr.trim()}, a section of Trinity-RFT's config (a dataclass): OmegaConf hands on that section with Trinity's defaults for every field the file leaves out, which tcod does not know`, "Write the mapping out, or anchor a plain mapping and repeat it with a YAML alias (`first: &name {…}` … `second: *name`).");
        }
        const value = isScalar(n) ? this.interpolate(n.value, target, depth + 1) : undefined;
        return inString ? this.pythonStrAt(target, value, path, expr) : value;
      }
      return this.fail(path, `unsupported OmegaConf interpolation '\${${expr}}': Trinity-RFT (OmegaConf) would resolve it`, "tcod resolves ${oc.env:VAR,default} and ${key.path} only; write the value, or escape it (\\${…}: OmegaConf reads `\\${` as the text `${`) if the text itself is meant.");
    };
    // OmegaConf's reading (interpolation.ts): `\${` is the text `${`, each unescaped `${expr}` resolved.
    const pieces = splitInterpolations(v);
    const unclosed = pieces.find((p) => "unclosed" in p);
    if (unclosed) return this.fail(path, `'${unclosed.unclosed}' opens an OmegaConf interpolation (\${) that is never closed: Trinity-RFT (OmegaConf) refuses the value`, "Close it with `}`, or escape it (\\${: OmegaConf reads `\\${` as the text `${`) if the text itself is meant.");
    const only = pieces.length === 1 ? pieces[0]! : undefined;
    if (only && "expr" in only) return resolveOne(only.expr, false);
    const parts = pieces.map((p) => ("literal" in p ? p.literal : "expr" in p ? resolveOne(p.expr, true) : undefined));
    return parts.every((p) => typeof p === "string") ? parts.join("") : undefined;
  }
  /**
   * Python's str() of the value at `target` (`value`, its interpolations resolved), which an
   * interpolation inside a longer string puts there (at `path`): the value as the field at `target`
   * converted it (fields.ts types: an int field's 5 is '5', a float field's '5.0', a bool field's
   * 1 'True', an enum field's nccl 'SyncMethod.NCCL'), else as YAML read it (a free-form mapping's
   * value, a str field's): a string as it is, null 'None', a boolean 'True'/'False', a float its
   * repr ('1e-06'), an integer its digits. What the field refuses is refused here too.
   */
  private pythonStrAt(target: Path, value: unknown, path: Path, expr: string): string | undefined {
    if (value === undefined || value === null) return "None";
    const p = this.plain(target);
    const type = fieldType(target);
    if (type !== undefined && (type === "int" || type === "float" || type === "bool" || (typeof type === "object" && "enum" in type))) {
      const c = convert(type, value as Json, p?.reading.type === "float");
      if (!c.ok) return this.fail(path, `'\${${expr}}' puts ${fmt(target)} into a string, which Trinity-RFT's field converts first, and refuses: ${fmt(target)} is ${c.why}`, c.hint);
      return pythonStrOf(type, c.value, p?.reading.type === "int" ? pythonStr(p.reading, p.text) : undefined);
    }
    if (typeof value === "string") return value;
    const py = p ? pythonStr(p.reading, p.text) : undefined;
    if (py === undefined) return this.fail(path, `'\${${expr}}': tcod cannot tell which string Trinity-RFT (OmegaConf) makes of ${JSON.stringify(value)} here`, "Write the text out.");
    return py;
  }
  /** Notes that the interpolation `expr` at `path` took Trinity's default (tcod says what it resolved). */
  private noteDefault(path: Path, expr: string, d: { value: Json; type: FieldType }): void {
    const note = `${fmt(path)}: \${${expr.trim()}} → Trinity-RFT's default ${pythonStrOf(d.type, d.value) ?? JSON.stringify(d.value)} (the file does not set ${expr.trim()})`;
    if (!this.notes.includes(note)) this.notes.push(note);
  }
  /**
   * The plain (unquoted) scalar at `path` as OmegaConf.load reads it, with its written text, or the
   * scalar under an explicit standard tag (`!!int "010"`) as SafeLoader constructs it; undefined for
   * any other node.
   */
  private plain(path: Path): { reading: PlainReading; text: string } | undefined {
    const n = this.node(path);
    if (!n || !isScalar(n) || typeof n.source !== "string") return undefined;
    const tag = n.tag?.startsWith(YAML_TAG) ? n.tag.slice(YAML_TAG.length) : undefined;
    if (tag === "str") return { reading: { type: "str", value: n.source }, text: n.source };
    if (tag === "null" || tag === "bool" || tag === "int" || tag === "float") {
      const r = constructTagged(tag, n.source);
      return r.type === "error" ? undefined : { reading: r, text: n.source };
    }
    return n.type === "PLAIN" && n.tag === undefined ? { reading: readPlain(n.source), text: n.source } : undefined;
  }
  /**
   * A number whose YAML 1.1 reading (Trinity's) is not what the same text says to YAML 1.2 and to
   * a reader, so that tcod cannot tell which was meant: refused at the key (TC7101), true then.
   * `010` is octal (8) to PyYAML and 10 to YAML 1.2; `1:30` is the base-60 number 90 to PyYAML and
   * a string to YAML 1.2. Where the two readings agree (`07`, `0x10`) nothing is said.
   */
  ambiguousNumber(path: Path): boolean {
    const p = this.plain(path);
    if (!p || p.reading.type !== "int" && p.reading.type !== "float") return false;
    const { reading: r, text } = p;
    if (r.type === "int" && r.form === "octal") {
      const decimal = Number(text.replace(/_/g, ""));
      if (decimal === r.value) return false;
      this.fail(path, `${String(path.at(-1))}: ${text} is the octal number ${r.value} to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, but ${decimal} to YAML 1.2; tcod does not guess which was meant`, `Write ${r.value} (what Trinity-RFT reads now) or ${decimal}, without the leading zero.`);
      return true;
    }
    if (r.form === "base60") {
      this.fail(path, `${String(path.at(-1))}: ${text} is the base-60 number ${r.value} to PyYAML (YAML 1.1: each ':' multiplies what is before it by 60), which Trinity-RFT reads the config with, but a string to YAML 1.2; tcod does not guess which was meant`, `Write ${r.value} if that is meant; quote it ("${text}") for the string.`);
      return true;
    }
    return false;
  }
  /** True when the number at `path` was written as a YAML float (`16.0`, `1e2`), which an integer field of Trinity's refuses. */
  private writtenAsFloat(path: Path): boolean {
    return this.plain(path)?.reading.type === "float";
  }
  /**
   * A number. `free`: the key is in a free-form mapping (a dict field of Trinity's dataclasses:
   * advantage_fn_args, workflow_args…), whose values Trinity hands on as YAML read them; else the
   * key is a float or int field, which OmegaConf converts a string into (FloatNode: float(s),
   * IntegerNode: int(s)) and which refuses a float for an int.
   */
  num(path: Path, what: string, opts: { integer?: boolean; min?: number; free?: boolean } = {}): number | undefined {
    const v = this.get(path);
    if (v === undefined) return undefined;
    if (this.ambiguousNumber(path)) return undefined;
    let n = v;
    if (typeof v === "string") {
      if (opts.free) return this.fail(path, `${what} must be a number, got the string ${JSON.stringify(v)}: ${fmt(path.slice(0, -1))} is a free-form mapping, whose values Trinity-RFT passes on as YAML reads them, so this one as a string`, `Write the number without quotes, e.g. ${fmt(path).split(".").pop()}: ${v.trim()}`);
      const parsed = opts.integer ? pythonInt(v) : pythonFloat(v);
      if (parsed === undefined) {
        return this.fail(path, `${what} must be ${opts.integer ? "an integer" : "a number"}, got ${JSON.stringify(v)}: Trinity-RFT converts a string in this field with Python's ${opts.integer ? "int()" : "float()"}, which refuses it`, `Write a number, e.g. ${fmt(path).split(".").pop()}: 1`);
      }
      n = parsed;
    }
    // YAML's .nan and .inf, and a literal past the doubles (1e400), read as NaN or ±Infinity (JSON.stringify: null).
    if (typeof n === "number" && !Number.isFinite(n)) return this.fail(path, `${what} must be a finite number, got ${this.source(path) ?? String(n)}`, `Write a finite number, e.g. ${fmt(path).split(".").pop()}: 1`);
    if (typeof n !== "number") return this.fail(path, `${what} must be a number, got ${this.written(path, v)}`, `Write a number, e.g. ${fmt(path).split(".").pop()}: 1`);
    if (opts.integer && !Number.isInteger(n)) return this.fail(path, `${what} must be an integer, got ${n}`, "Write a whole number.");
    if (opts.integer && this.writtenAsFloat(path)) {
      return this.fail(path, `${what} must be an integer, got ${this.source(path)}, which YAML reads as a float: ${opts.free ? "Trinity-RFT passes it on as a float" : "Trinity-RFT's integer field refuses a float (OmegaConf: \"could not be converted to Integer\")"}`, `Write a whole number without a decimal point or exponent${Number.isSafeInteger(n) ? `: ${n}` : ""}.`);
    }
    // A tcod plan holds whole numbers exactly up to 2^53 − 1 (JSON numbers are doubles).
    if (opts.integer && !Number.isSafeInteger(n)) return this.fail(path, `${what} must be at most 2^53 − 1 (${Number.MAX_SAFE_INTEGER}), got ${n}`, "Write a smaller whole number.");
    if (opts.min !== undefined && n < opts.min) return this.fail(path, `${what} must be ≥ ${opts.min}, got ${n}`, `Use a value ≥ ${opts.min}.`);
    return n;
  }
  /**
   * `v` as the message shows it: a number or boolean as written, with what YAML 1.1 made of it
   * where YAML 1.2 would read the text otherwise (`on` → true, `0b11` → 3); else as JSON.
   */
  private written(path: Path, v: unknown): string {
    const p = this.plain(path);
    if (!p || p.reading.type !== "bool" && p.reading.type !== "int" && p.reading.type !== "float") return JSON.stringify(v);
    const r = p.reading;
    const differs = r.type === "bool" ? !/^(?:true|false)$/i.test(p.text) : p.text.includes("_") || (r.form !== "decimal" && r.form !== "hex");
    return differs ? `${p.text} (the ${r.type === "bool" ? "boolean" : "number"} ${JSON.stringify(v)} to YAML 1.1, which Trinity-RFT reads the config with)` : p.text;
  }
  /**
   * A plain `yes`, `no`, `on` or `off` (any case PyYAML takes) where a string is wanted: a boolean
   * to PyYAML, which a string field of Trinity's turns into 'True' or 'False' (OmegaConf's
   * StringNode: str(v)), though the text reads as the word. Refused at the key, true then.
   */
  boolWord(path: Path, what: string): boolean {
    const p = this.plain(path);
    if (!p || p.reading.type !== "bool" || /^(?:true|false)$/i.test(p.text)) return false;
    const py = p.reading.value ? "True" : "False";
    this.fail(path, `${what}: ${p.text} is the boolean ${p.reading.value} to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, so Trinity gets '${py}' here, not '${p.text}'`, `Quote it ('${p.text}') to mean the word, or write '${py}'.`);
    return true;
  }
  /**
   * A string. `free`: the key is in a free-form mapping (workflow_args…), whose values Trinity hands
   * on as YAML read them, so a number there stays a number; else the key is a `str` field, which
   * OmegaConf's StringNode fills with str(value) when given a number or boolean: taken where that
   * string is the text as written (`model_path: 123` is "123", `1.0` "1.0", `True` "True"), refused
   * where Trinity's string is not what the text says (`1e-6` → '1e-06', `010` → '8', `true` → 'True').
   */
  str(path: Path, what: string, opts: { free?: boolean } = {}): string | undefined {
    const v = this.get(path);
    if (v === undefined) return undefined;
    if (this.boolWord(path, what)) return undefined;
    if (typeof v !== "string" && !opts.free) {
      const p = this.plain(path);
      const py = p && (typeof v === "number" || typeof v === "boolean") ? pythonStr(p.reading, p.text) : undefined;
      if (p && py === p.text) return py;
      if (p && py !== undefined) {
        return this.fail(path, `${what}: ${p.text} is the ${typeof v === "boolean" ? "boolean" : "number"} ${typeof v === "number" ? pythonStr(p.reading, p.text) : String(v)} to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, and its string field holds str() of it: '${py}', not '${p.text}'`, `Quote it ("${p.text}") to mean the text as written, or write '${py}'.`);
      }
    }
    if (typeof v !== "string") return this.fail(path, `${what} must be a string, got ${this.written(path, v)}`, "Quote the value.");
    // tcod strings escape only \n, \t, \" and \\: another control character cannot be written in the .tcod file.
    const ctl = /[\u0000-\u0008\u000b-\u001f\u007f]/.exec(v);
    if (ctl) return this.fail(path, `${what} contains the control character U+${ctl[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`, "Remove it; a path or name with control characters is almost certainly a mistake.");
    return v;
  }
  /** A boolean, with what OmegaConf's BooleanNode converts into one: an integer (≠ 0), and the strings int() reads or yes/y/on/true, no/n/off/false in any case. */
  bool(path: Path, what: string): boolean | undefined {
    const v = this.get(path);
    if (v === undefined) return undefined;
    if (typeof v === "boolean") return v;
    if (this.ambiguousNumber(path)) return undefined;
    if (typeof v === "number" && Number.isInteger(v) && !this.writtenAsFloat(path)) return v !== 0;
    if (typeof v === "string") {
      const i = pythonInt(v);
      if (i !== undefined) return i !== 0;
      if (/^(?:yes|y|on|true)$/i.test(v)) return true;
      if (/^(?:no|n|off|false)$/i.test(v)) return false;
    }
    return this.fail(path, `${what} must be true or false, got ${this.written(path, v)}`, "Write true or false.");
  }
}

const YAML_TAG = "tag:yaml.org,2002:";
/** A tag as written: `!!int` for tag:yaml.org,2002:int, else the tag itself (`!local`). */
const shownTag = (tag: string): string => (tag.startsWith(YAML_TAG) ? `!!${tag.slice(YAML_TAG.length)}` : tag);
/** The node kind each standard tag SafeLoader constructs stands on, and what becomes of it. */
const STANDARD_TAGS: Readonly<Record<string, { on: "scalar" | "map" | "seq"; refused?: string }>> = {
  str: { on: "scalar" }, null: { on: "scalar" }, bool: { on: "scalar" }, int: { on: "scalar" }, float: { on: "scalar" },
  map: { on: "map" }, seq: { on: "seq" },
  timestamp: { on: "scalar", refused: "SafeLoader makes a date of it, which OmegaConf (Trinity-RFT's config loader) refuses (\"not a supported primitive type\")" },
  set: { on: "map", refused: "SafeLoader makes a Python set of it, which OmegaConf (Trinity-RFT's config loader) refuses (\"not a supported primitive type\")" },
  binary: { on: "scalar", refused: "SafeLoader makes bytes of it, which no key of a Trinity config tcod imports takes" },
  omap: { on: "seq", refused: "SafeLoader makes a list of (key, value) pairs of it, which no key of a Trinity config tcod imports takes" },
  pairs: { on: "seq", refused: "SafeLoader makes a list of (key, value) pairs of it, which no key of a Trinity config tcod imports takes" },
};
const TAG_HINT = "Remove the tag: a Trinity config holds plain values (strings, numbers, booleans, null, lists and mappings); quote a value to mean a string.";

/**
 * The first explicit tag (in the text's order) that PyYAML's SafeLoader, which Trinity-RFT reads the
 * config with (OmegaConf.load), refuses or that tcod cannot import: a tag it has no constructor
 * for (`!!python/object`, `!local`), a standard one on the wrong kind of node (`!!str [1]`), one
 * whose value OmegaConf refuses or no Trinity key takes (`!!timestamp`, `!!binary`), and the
 * non-specific `!` on a scalar, which PyYAML resolves as if it were untagged (`! 1` is 1) where
 * YAML makes it a string. A standard scalar tag's value is constructed as SafeLoader does
 * (yaml-scalars.ts constructTagged).
 */
function firstBadTag(doc: Document): { offset: number; message: string; hint: string } | undefined {
  let first: { offset: number; message: string; hint: string } | undefined;
  const check = (n: YamlNode, kind: "scalar" | "map" | "seq"): void => {
    const tag = n.tag;
    if (tag === undefined || (first && first.offset <= (n.range?.[0] ?? 0))) return;
    const offset = n.range?.[0] ?? 0;
    if (tag === "!") {
      if (kind === "scalar") first = { offset, message: "the non-specific tag `!` on a scalar: PyYAML, which Trinity-RFT reads the config with, resolves the value as if it had no tag (`! 1` is the number 1, `! yes` true), where YAML makes it a string; tcod does not guess which was meant", hint: "Remove the `!`; quote the value to mean a string." };
      return;
    }
    const std = tag.startsWith(YAML_TAG) ? STANDARD_TAGS[tag.slice(YAML_TAG.length)] : undefined;
    if (!std) first = { offset, message: `the tag ${shownTag(tag)} is not one PyYAML's SafeLoader constructs: Trinity-RFT (OmegaConf.load) refuses the file ("could not determine a constructor for the tag '${tag}'")`, hint: TAG_HINT };
    else if (std.on !== kind) {
      const name = (k: string) => (k === "map" ? "mapping" : k === "seq" ? "sequence" : k);
      first = { offset, message: `the tag ${shownTag(tag)} stands on a ${name(kind)}: PyYAML's SafeLoader, which Trinity-RFT reads the config with, refuses the file ("expected a ${name(std.on)} node, but found ${name(kind)}")`, hint: TAG_HINT };
    } else if (std.refused) first = { offset, message: `the tag ${shownTag(tag)}: ${std.refused}`, hint: TAG_HINT };
  };
  visit(doc, { Scalar: (_k, n) => check(n, "scalar"), Map: (_k, n) => check(n, "map"), Seq: (_k, n) => check(n, "seq") });
  return first;
}

/**
 * The first plain, untagged `<<` that is not a mapping's key (a value, a sequence item), with its
 * YAML path: PyYAML resolves every plain `<<` to the merge tag, which SafeLoader constructs only
 * as a key (a merge); elsewhere it refuses the file. The yaml package reads it as the string "<<".
 * Walked before aliases are expanded (an anchored `&a <<` is found where it is written), and only
 * to MAX_YAML_DEPTH (deeper is refused on its own).
 */
function firstMergeValue(n: unknown, path: Path): { offset: number; path: Path } | undefined {
  if (path.length > MAX_YAML_DEPTH) return undefined;
  if (isScalar(n)) return n.type === "PLAIN" && n.tag === undefined && n.source === "<<" ? { offset: n.range?.[0] ?? 0, path } : undefined;
  if (isSeq(n)) {
    for (const [i, item] of n.items.entries()) { const f = firstMergeValue(item, [...path, i]); if (f) return f; }
  } else if (isMap(n)) {
    for (const pair of n.items as Pair[]) {
      // A key is walked into only if it is a collection (a complex key); a scalar key `<<` is a merge.
      if (isMap(pair.key) || isSeq(pair.key)) { const f = firstMergeValue(pair.key, [...path, keyText(pair.key)]); if (f) return f; }
      const f = firstMergeValue(pair.value, [...path, keyText(pair.key)]);
      if (f) return f;
    }
  }
  return undefined;
}

/** Interpolations standing for a whole mapping or list (`key: ${a.b}`) that the import follows: a Trinity config has a few. */
const MAX_NODE_INTERPOLATIONS = 1000;
/**
 * The resolvers OmegaConf registers itself (Trinity-RFT registers none): any other name in
 * `${name:…}` is refused when Trinity loads the config. oc.coerce is OmegaConf 2.4's.
 */
const OMEGACONF_RESOLVERS: ReadonlySet<string> = new Set(["oc.env", "oc.select", "oc.decode", "oc.create", "oc.deprecated", "oc.dict.keys", "oc.dict.values", "oc.coerce"]);
/** Collections inside collections: a Trinity config nests about six levels. */
const MAX_YAML_DEPTH = 64;
/**
 * How many nodes a config's aliases may add to it, every expansion counted (an alias adds its
 * anchored node's, expanded): a Trinity-RFT config's add tens; a "billion laughs" bomb, billions.
 */
const MAX_ALIAS_NODES = 100_000;
/** The message and hint of each alias or anchor the import refuses (yaml-aliases.ts). */
function aliasProblem(p: AliasProblem): { message: string; hint: string } {
  const pyyaml = "PyYAML, which Trinity-RFT reads the config with (OmegaConf.load), refuses the file";
  switch (p.kind) {
    case "undefined": return {
      message: `the alias *${p.anchor} names no anchor &${p.anchor} before it: ${pyyaml} ("found undefined alias")`,
      hint: `Anchor the value it repeats before it (\`key: &${p.anchor} value\`), or write the value out.`,
    };
    case "duplicate": return {
      message: `the anchor &${p.anchor} is defined a second time here: ${pyyaml} ("found duplicate anchor")`,
      hint: "Give each anchor a name of its own, and each alias the name of the anchor it repeats.",
    };
    case "recursive": return {
      message: `the alias *${p.anchor} stands inside the node anchored &${p.anchor}, which would contain itself: OmegaConf (Trinity-RFT's config loader) cannot take a recursive config`,
      hint: "Remove the alias, or write out the value it should repeat.",
    };
    case "merge": return {
      message: `a merge key (\`<<\`) takes a mapping, an alias of one, or a list of them: ${pyyaml} ("expected a mapping or list of mappings for merging")`,
      hint: "Merge a mapping (`<<: *name`, where &name anchors a mapping), or write the keys out.",
    };
    case "merge-conflict": return {
      message: `two mappings of this merge list give \`${p.key}\` different values, and which one Trinity-RFT reads depends on its PyYAML: releases up to 6.0.3 take the earlier mapping's (as the YAML merge spec says), 6.0.4 the later one's`,
      hint: `Set \`${p.key}\` in the mapping itself (its own keys win over merged ones), or merge only one mapping that sets it.`,
    };
    case "too-deep": return {
      message: `the YAML is nested too deeply once the alias *${p.anchor} here is expanded (tcod reads collections up to ${MAX_YAML_DEPTH} levels deep; a Trinity config has about six)`,
      hint: "Write the values out instead of nesting aliases in aliases; it is not a Trinity-RFT config.",
    };
    case "too-large": return {
      message: `the YAML's aliases expand too far: with the alias *${p.anchor} here they add more than ${MAX_ALIAS_NODES.toLocaleString("en-US")} values to the config (each alias repeats its anchor's whole content, and these nest into an exponential blow-up)`,
      hint: "Write the values out instead of nesting aliases of aliases; a Trinity-RFT config needs few aliases, if any.",
    };
  }
}
const MULTIPLE_DOCS = {
  message: "a second YAML document starts here (after `---`): Trinity-RFT reads a config file as one document (OmegaConf.load), and refuses a file of several",
  hint: "Keep the config's one document: remove this `---` and what follows it, or put each document in a file of its own.",
};

/**
 * The characters PyYAML's reader refuses (yaml/reader.py NON_PRINTABLE): all but TAB, LF, CR, the
 * printable ASCII, NEL (U+0085) and U+00A0 to U+10FFFF less the surrogates, U+FFFE and U+FFFF.
 */
const UNACCEPTABLE = /[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;
const C0_NAMES = ["NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "TAB", "LF", "VT", "FF", "CR", "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US"];

/** The first of `offsets` (U+2028, U+2029 read as line feeds) that stands inside a scalar, between its start and its value's end. */
function separatorInValue(doc: Document, offsets: number[]): number | undefined {
  let first: number | undefined;
  visit(doc, {
    Scalar: (_k, n) => {
      const r = n.range;
      if (!r) return;
      for (const o of offsets) if (o > r[0] && o < r[1] && (first === undefined || o < first)) first = o;
    },
  });
  return first;
}

/**
 * The first character of `text` that PyYAML refuses, as an issue at its line and column (counted as
 * the YAML parser's LineCounter counts them: lines at LF, columns in UTF-16 code units from 1).
 */
function unacceptableCharacter(text: string): Omit<ImportIssue, "path"> | undefined {
  UNACCEPTABLE.lastIndex = 0;
  const m = UNACCEPTABLE.exec(text);
  if (!m) return undefined;
  const code = m[0].codePointAt(0)!;
  const more = (text.match(UNACCEPTABLE)?.length ?? 1) - 1;
  const hex = code.toString(16).toUpperCase().padStart(4, "0");
  const what = code < 0x20 ? `the control character U+${hex} (${C0_NAMES[code]})`
    : code === 0x7f ? `the control character U+${hex} (DEL)`
    : code <= 0x9f ? `the C1 control character U+${hex}`
    : code >= 0xd800 && code <= 0xdfff ? `a lone UTF-16 surrogate U+${hex}`
    : `the noncharacter U+${hex}`;
  return {
    ...lineColumn(text, m.index),
    message: `the file contains ${what}${more > 0 ? ` (and ${more} more such character${more === 1 ? "" : "s"} after it)` : ""}, which YAML does not allow in a file: Trinity-RFT's loader (OmegaConf.load, PyYAML) refuses the config ("unacceptable character")`,
    hint: `Remove it${code === 0 ? "; a NUL usually means a binary, truncated or wrongly encoded file: save the config as UTF-8 text" : " (an editor's \"show invisible characters\" finds it)"}. YAML takes a control character only as an escape inside a double-quoted string, such as "\\x07".`,
  };
}

const TOO_DEEP = {
  message: `the YAML is nested too deeply (tcod reads collections up to ${MAX_YAML_DEPTH} levels deep; a Trinity config has about six)`,
  hint: "Flatten the nesting that starts here; it is not a Trinity-RFT config.",
};

/** The source range of the first node nested deeper than MAX_YAML_DEPTH, without recursion. */
function firstTooDeep(root: unknown): [number, number, number] | undefined {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [n, depth] = stack.pop()!;
    if (!isMap(n) && !isSeq(n)) continue;
    if (depth > MAX_YAML_DEPTH) return n.range ?? [0, 0, 0];
    for (const item of n.items as unknown[]) {
      if (isPair(item)) { stack.push([item.key, depth + 1], [item.value, depth + 1]); } else stack.push([item, depth + 1]);
    }
  }
  return undefined;
}

/**
 * How an unknown key's message names the mapping it is in: "config (top level)", "taskset section",
 * "eval taskset's format", "auxiliary model section"… for the mappings the import reads, else its
 * path ("model section", "explorer.over_rollout section").
 */
function sectionLabel(path: Path): string {
  if (path.length === 0) return "config (top level)";
  const p = fmt(path);
  const ts = /^buffer\.explorer_input\.(taskset|eval_tasksets\[\d+\])(?:\.(rollout_args|format|task_selector|data_selector))?$/.exec(p);
  if (ts) { const what = ts[1] === "taskset" ? "taskset" : "eval taskset"; return ts[2] ? `${what}'s ${ts[2]}` : `${what} section`; }
  if (p === "buffer.trainer_input.experience_buffer") return "experience_buffer section";
  if (/^explorer\.auxiliary_models\[\d+\]$/.test(p)) return "auxiliary model section";
  return `${p} section`;
}

/**
 * A mapping key as the message names it: as written where YAML 1.1 reads it as something else than
 * its text (`on:` is the key true to PyYAML, and a GitHub workflow's `on:` should read as "on").
 */
function keyText(key: unknown): string {
  if (isScalar(key)) return typeof key.value !== "string" && typeof key.source === "string" && key.type === "PLAIN" ? key.source : String(key.value);
  return String(key);
}

/** A place in the tree that holds a value: a mapping's pair, or a list's item; `path` is the place's YAML path. */
interface Ref { path: Path; owner: YAMLMap | YAMLSeq; pair?: Pair; index?: number; get(): unknown; set(v: unknown): void }
function pairRef(owner: YAMLMap, pair: Pair, path: Path): Ref {
  return { path, owner, pair, get: () => pair.value, set: (v) => { pair.value = v as Pair["value"]; } };
}
function itemRef(owner: YAMLSeq, index: number, path: Path): Ref {
  return { path, owner, index, get: () => owner.items[index], set: (v) => { owner.items[index] = v; } };
}
/** The place `seg` names in the collection `n` (a key of a mapping, an index of a list), if it has one. */
function refOf(n: unknown, seg: string | number, path: Path): Ref | undefined {
  if (isMap(n)) {
    const pair = (n.items as Pair[]).find((p) => keyText(p.key) === String(seg));
    return pair ? pairRef(n, pair, path) : undefined;
  }
  if (isSeq(n) && typeof seg === "number" && seg < n.items.length) return itemRef(n, seg, path);
  return undefined;
}

/**
 * What Trinity-RFT's schema has at `path` (DATACLASSES): a dataclass, a list or mapping of one
 * (`each`), or "field": a field that is not a dataclass (a scalar, a free-form dict or list) or
 * anything inside one, or a key Trinity does not have.
 */
type Slot = { dataclass: string } | { each: string; shape: "list" | "map" } | "field";
function slotAt(path: Path): Slot {
  let slot: Slot = { dataclass: "Config" };
  for (const seg of path) {
    if (slot === "field") return slot;
    if ("each" in slot) { slot = { dataclass: slot.each }; continue; }
    const nested = DATACLASSES[slot.dataclass]!.nested.find(([field]) => field === seg);
    slot = !nested ? "field" : nested[1] === "one" ? { dataclass: nested[2] } : { each: nested[2], shape: nested[1] };
  }
  return slot;
}
/** Whether the field at `path` is a (non-dataclass) field of one of Trinity's dataclasses, whose type converts what it is given. */
function dataclassField(path: Path): boolean {
  return path.length > 0 && slotAt(path) === "field" && slotAt(path.slice(0, -1)) !== "field";
}

/** The type of the field at `path` when it is a (non-dataclass) field of one of Trinity's dataclasses (fields.ts), else undefined. */
function fieldType(path: Path): FieldType | undefined {
  if (!dataclassField(path)) return undefined;
  const parent = slotAt(path.slice(0, -1));
  return typeof parent === "object" && "dataclass" in parent ? FIELDS[parent.dataclass]?.[String(path.at(-1))]?.type : undefined;
}

/**
 * What OmegaConf finds at `target`, a key the file does not write: the file walked as far as it
 * has the path, then Trinity's defaults (fields.ts) from the dataclass there. "value": a static
 * default; "missing": no such key to OmegaConf ("Interpolation key … not found": a key no
 * dataclass has, one in a free-form mapping, an item a list lacks, or under a section whose default
 * is None); "section": a whole dataclass; "auto": a field Trinity fills when it checks the config
 * (its default a placeholder); "releases": a default that differs between releases.
 */
type DefaultAt =
  | { kind: "value"; value: Json; type: FieldType }
  | { kind: "missing"; why?: string }
  | { kind: "section"; dataclass: string }
  | { kind: "auto"; at: string; placeholder: Json; type: FieldType }
  | { kind: "releases"; at: string; values: Readonly<Record<string, unknown>>; type: FieldType }
  | { kind: "container"; at: string };
function trinityDefault(root: unknown, target: Path): DefaultAt {
  let n = root;
  let i = 0;
  for (; i < target.length; i++) {
    const ref = refOf(n, target[i]!, target.slice(0, i + 1));
    if (!ref) break;
    n = ref.get();
  }
  const slot = slotAt(target.slice(0, i));
  if (i === target.length || !isMap(n) || typeof slot !== "object" || !("dataclass" in slot)) return { kind: "missing" };
  let dc = slot.dataclass;
  for (let j = i; j < target.length; j++) {
    const seg = target[j]!;
    const at = fmt(target.slice(0, j + 1));
    const f = typeof seg === "string" ? FIELDS[dc]?.[seg] : undefined;
    if (!f) return { kind: "missing", why: `Trinity-RFT's ${dc} has no field ${seg}` };
    const d = f.default;
    const last = j === target.length - 1;
    const section = typeof f.type === "object" && "section" in f.type ? f.type.section : undefined;
    // A key under a section whose default is None is no key to OmegaConf, whoever fills the section later.
    if (section !== undefined && d.kind === "value" && !last) return { kind: "missing", why: `Trinity-RFT's default for ${at} is None, not a section` };
    if (f.auto) return { kind: "auto", at, placeholder: d.kind === "value" ? d.value : null, type: f.type };
    if (d.kind === "releases") return { kind: "releases", at, values: d.values, type: f.type };
    if (d.kind === "required") return { kind: "missing", why: `${at} has no default` };
    if (section !== undefined) {
      if (d.kind === "value") return { kind: "missing", why: `Trinity-RFT's default for ${at} is None, not a section` };
      if (last) return { kind: "section", dataclass: section };
      dc = section;
      continue;
    }
    if (d.kind !== "value") return { kind: "missing" };
    if (!last) return insideDefault(d.value, target.slice(j + 1), at, f.itemType);
    return { kind: "value", value: d.value, type: f.type };
  }
  return { kind: "missing" };
}
/**
 * The item at `rest` inside `value`, the static default list or dict of the field at `at`
 * (`${algorithm.optimizer.betas.0}` is 0.9), as OmegaConf finds it: a list's item by its index, a
 * dict's by its key; its type the field's `itemType` (a float's str() is '2.0'), else what the
 * value is. A list or dict found there is not handed on (a "container").
 */
function insideDefault(value: Json, rest: Path, at: string, itemType: FieldType | undefined): DefaultAt {
  let v = value;
  for (const seg of rest) {
    if (v === null || typeof v !== "object") return { kind: "missing", why: `Trinity-RFT's default for ${at} is ${JSON.stringify(value)}, which has nothing inside` };
    const item: Json | undefined = Array.isArray(v) ? (typeof seg === "number" ? (v as Json[])[seg] : undefined) : (v as Record<string, Json>)[String(seg)];
    if (item === undefined) return { kind: "missing", why: `Trinity-RFT's default for ${at}, ${JSON.stringify(value)}, has no ${Array.isArray(v) ? "item" : "key"} ${seg}` };
    v = item;
  }
  if (v !== null && typeof v === "object") return { kind: "container", at };
  const type: FieldType = itemType ?? (typeof v === "boolean" ? "bool" : typeof v === "string" ? "str" : typeof v === "number" && !Number.isInteger(v) ? "float" : "int");
  return { kind: "value", value: v, type };
}

/**
 * Trinity's default `value` (of a field of `type`) as the node a whole-value interpolation of it
 * stands for, at the interpolation's `range`: a number or boolean as a plain scalar written as
 * Python writes it (`1e-06`, `1800.0`, `True`), so that it reads back as PyYAML would read that
 * text (a float default stays a float, which an int field refuses); a string quoted; a list or dict
 * as the yaml package builds it.
 */
function defaultNode(value: Json, type: FieldType, range: YamlNode["range"]): unknown {
  const node = value !== null && typeof value === "object" ? new Document(value).contents! : new Scalar(value);
  if (isScalar(node)) {
    if (typeof value === "string") node.type = "QUOTE_DOUBLE";
    else {
      node.type = "PLAIN";
      node.source = value === null ? "null" : pythonStrOf(type, value) ?? String(value);
    }
  }
  if (range) (node as { range?: YamlNode["range"] }).range = range;
  return node;
}

/** A default as Python's repr() writes it in a message: a string quoted ('INFO', ''), else its str(). */
function pythonRepr(type: FieldType, v: Json): string {
  return typeof v === "string" && !(typeof type === "object" && "enum" in type) ? `'${v}'` : pythonStrOf(type, v) ?? JSON.stringify(v);
}

/** The message refusing the interpolation `expr` of a key the file leaves out, whose default (`d`) tcod does not take. */
function defaultRefusal(expr: string, d: Exclude<DefaultAt, { kind: "value" }>): string {
  const shown = `'\${${expr}}'`;
  const key = expr.trim();
  switch (d.kind) {
    case "missing":
      return `${shown} refers to ${key}, which this file does not define${d.why ? ` (${d.why})` : ""}: Trinity-RFT (OmegaConf) refuses the config ("Interpolation key '${key}' not found")`;
    case "section":
      return `${shown} stands for ${key}, a section of Trinity-RFT's config (the dataclass ${d.dataclass}) the file leaves out: OmegaConf hands on the whole section with Trinity's defaults, which tcod does not write out`;
    case "auto":
      return `${shown} refers to ${key}, which this file does not set and Trinity-RFT fills itself when it checks the config${d.at !== key ? ` (${d.at})` : ""}: OmegaConf resolves the interpolation before that, with the dataclass's placeholder ${pythonRepr(d.type, d.placeholder)}, not the value the run uses`;
    case "releases":
      return `${shown} refers to ${key}, which this file does not set, and Trinity-RFT's default for ${d.at} differs between releases (${Object.entries(d.values).map(([v, x]) => `${v}: ${typeof x === "object" && x !== null ? "a section" : pythonRepr(d.type, x as Json)}`).join(", ")})`;
    case "container":
      return `${shown} refers to ${key}, inside Trinity-RFT's default for ${d.at}, which tcod does not look into`;
  }
}

/** Whether `inner` stands anywhere below the collection `n` (shared nodes walked once). */
function contains(n: unknown, inner: unknown): boolean {
  const stack = [n];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const c = stack.pop();
    if (seen.has(c)) continue;
    seen.add(c);
    const items: unknown[] = isMap(c) ? (c.items as Pair[]).map((p) => p.value) : isSeq(c) ? c.items : [];
    for (const x of items) { if (x === inner) return true; if (isMap(x) || isSeq(x)) stack.push(x); }
  }
  return false;
}

/** The tree's size and depth with every shared node counted where it stands (measured once per node, not expanded). */
function treeSize(root: unknown): { size: number; depth: number } {
  const memo = new Map<unknown, { size: number; depth: number }>();
  // Recursion stops past MAX_YAML_DEPTH levels: what is deeper is refused, however deep.
  const measure = (n: unknown, level: number): { size: number; depth: number } => {
    if (!isMap(n) && !isSeq(n)) return { size: 1, depth: 0 };
    if (level > MAX_YAML_DEPTH) return { size: 1, depth: MAX_YAML_DEPTH + 1 };
    const known = memo.get(n);
    if (known) return known;
    let size = 1, depth = 0;
    for (const x of isMap(n) ? (n.items as Pair[]).map((p) => p.value) : n.items) {
      const m = measure(x, level + 1);
      size += m.size;
      depth = Math.max(depth, m.depth + 1);
      if (depth > MAX_YAML_DEPTH + 1) break;
    }
    const r = { size: Math.min(size, Number.MAX_SAFE_INTEGER), depth };
    memo.set(n, r);
    return r;
  };
  return measure(root, 0);
}

function fmt(path: Path): string {
  return path.length === 0 ? "$" : path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

const NOT_TRINITY_HINT = "Give the YAML of a `trinity run --config` file, whose top-level keys are those of Trinity-RFT's Config (trinity/common/config.py): algorithm, model, buffer, explorer, trainer, synchronizer and a few more. Another program's config (verl, Hydra, docker-compose, a CI workflow) passed by mistake is not one.";
/** Up to this many unknown keys are each an error of its own; past it, the first UNKNOWN_LISTED are, and one error counts the rest. */
const UNKNOWN_ONE_BY_ONE = 10;
const UNKNOWN_LISTED = 5;

/**
 * The unknown-key issues to print: each of them, up to UNKNOWN_ONE_BY_ONE; else the first
 * UNKNOWN_LISTED and one issue, at the next, that counts and names the rest (a file with hundreds of
 * stray keys reads as a few errors, not hundreds).
 */
function summarizeUnknown(unknown: ImportIssue[]): ImportIssue[] {
  if (unknown.length <= UNKNOWN_ONE_BY_ONE) return unknown;
  const rest = unknown.slice(UNKNOWN_LISTED);
  const first = rest[0]!;
  return [...unknown.slice(0, UNKNOWN_LISTED), {
    path: first.path, line: first.line, column: first.column,
    message: `${rest.length} more unknown keys (${unknown.length} in all), which Trinity-RFT refuses as it does those above: ${listed(rest.map((i) => i.path), 12)}`,
    hint: "Remove or correct each of them; each section takes the fields of its dataclass in Trinity-RFT's trinity/common/config.py. Correct the ones above and import again to see these one by one.",
  }];
}

/** "a, b, c" or "a, b, c and 12 more". */
function listed(names: string[], max: number): string {
  return names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

/** Reads a Trinity config and writes the equivalent `.tcod` source. Throws TrinityImportError. */
/** `config`: the YAML's text, or the file's bytes (then also refused where they are not UTF-8). */
export function importTrinity(config: string | Uint8Array, file = "<config>"): TrinityImport {
  const r = new Reader(config, file);
  const o = new Origins();
  const at = o.mark.bind(o);
  if (r.issues.length) throw new TrinityImportError(file, r.issues);
  if (!isMap(r.doc.contents)) throw new TrinityImportError(file, [{ path: "$", line: 1, column: 1, message: "not a Trinity-RFT config: the document is not a mapping", hint: "A Trinity config has top-level keys such as algorithm, model, buffer, explorer." }]);
  const top = new Set((r.doc.contents.items ?? []).map((p) => keyText(p.key)));
  const trinityKeys = ["algorithm", "model", "buffer", "explorer", "trainer"];
  const missingTop = trinityKeys.filter((k) => !top.has(k));
  if (missingTop.length === trinityKeys.length) {
    const found = top.size === 0 ? "nothing" : `${top.size} top-level key${top.size === 1 ? "" : "s"}: ${listed([...top], 6)}`;
    throw new TrinityImportError(file, [{ path: "$", line: 1, column: 1, message: `not a Trinity-RFT config: none of the sections ${trinityKeys.join(", ")} is present (found ${found})`, hint: NOT_TRINITY_HINT }]);
  }
  // Keys Trinity-RFT itself refuses (trinity/common/config.py's dataclasses, the fork's and later
  // versions' fields included), where a typo would otherwise be dropped unsaid: every section, and
  // every mapping in them whose field is a dataclass (DATACLASSES), whether the import reads it or not.
  r.dataclassKeys([], r.doc.contents, "Config");
  const unknown = r.issues.splice(0);
  const foreign = [...top].filter((k) => !DATACLASSES.Config!.keys.has(k));
  // Most top-level keys those of something else (a verl or Hydra config with an `algorithm:` or
  // `trainer:` among them): one error that says so, not one per key, nor the missing keys and
  // values that would follow from it.
  if (foreign.length * 2 > top.size) {
    const own = [...top].filter((k) => DATACLASSES.Config!.keys.has(k));
    const inside = unknown.length - foreign.length;
    throw new TrinityImportError(file, [{
      path: "$", line: 1, column: 1,
      message: `not a Trinity-RFT config: only ${own.length} of its ${top.size} top-level keys ${own.length === 1 ? "is" : "are"} Trinity-RFT's (${own.join(", ")}); the other ${foreign.length} are not (${listed(foreign, 8)})${inside > 0 ? `, nor ${inside === 1 ? "is 1 key" : `are ${inside} keys`} inside ${own.length === 1 ? "that section" : "those sections"}` : ""}: Trinity-RFT refuses each of these ${unknown.length} keys`,
      hint: NOT_TRINITY_HINT,
    }]);
  }
  r.issues.push(...summarizeUnknown(unknown));
  // A null where Trinity's field is not Optional: Trinity refuses it, rather than take its default.
  r.dataclassNulls([], r.doc.contents, "Config");
  const required = (path: Path, what: string, hint: string): void => { if (!r.has(path)) r.fail(path, `missing required key ${fmt(path)} (${what})`, hint); };
  required(["model", "model_path"], "the student model", "Add `model: { model_path: … }`.");
  required(["explorer", "auxiliary_models", 0, "model_path"], "the teacher: OPD scores with explorer.auxiliary_models[0]", "Add `explorer: { auxiliary_models: [{ model_path: … }] }`.");
  required(["buffer", "explorer_input", "taskset"], "the training taskset", "Add `buffer.explorer_input.taskset`.");
  required(["buffer", "explorer_input", "default_workflow_type"], "the workflow", "Add `buffer.explorer_input.default_workflow_type: TCOD_f2b_alfworld_workflow` (or OPD_/TCOD_b2f_…).");
  if (r.has(["stages"])) r.fail(["stages"], "multi-stage configs (stages) are not imported", "Import each stage as its own config.");
  if (r.has(["buffer", "explorer_input", "tasksets"])) r.fail(["buffer", "explorer_input", "tasksets"], "several training tasksets (tasksets) are not imported", "Use one `taskset`.");
  const mode = r.str(["mode"], "mode");
  if (mode !== undefined && mode !== "both") r.fail(["mode"], `mode '${mode}' is not a training run`, "Import configs with mode: both (the default).");

  // ---- algorithm ----
  const algoType = r.str(["algorithm", "algorithm_type"], "algorithm_type");
  if (algoType !== "on_policy_distill") r.fail(["algorithm", "algorithm_type"], `algorithm_type '${algoType ?? "ppo (Trinity's default)"}' is not on-policy distillation`, "tcod imports OPD configs: algorithm_type: on_policy_distill.");
  const advFn = r.str(["algorithm", "advantage_fn"], "advantage_fn") ?? "on_policy_distill";
  if (GENERATED_ADVANTAGE.test(advFn)) r.fail(["algorithm", "advantage_fn"], `advantage_fn '${advFn}' is the plugin advantage \`tcod export trinity\` generates; its loss is in the plugin's spec.json, which tcod does not import`, GENERATED_HINT);
  else if (!OPD_ADVANTAGES.has(advFn)) r.fail(["algorithm", "advantage_fn"], `advantage_fn '${advFn}' has no tcod equivalent`, "Use multi_turn_opd (TCOD fork) or on_policy_distill.");
  const klCoef = r.num(["algorithm", "advantage_fn_args", "kl_coef"], "kl_coef", { free: true }) ?? 1.0;
  const repeat = r.num(["algorithm", "repeat_times"], "repeat_times", { integer: true, min: 1 }) ?? 1;
  const strategy = r.str(["algorithm", "sample_strategy"], "sample_strategy") ?? "default";
  let staleness = 0;
  if (strategy === "staleness_control") staleness = r.num(["algorithm", "sample_strategy_args", "max_staleness"], "max_staleness", { integer: true, min: 0, free: true }) ?? 0;
  else if (strategy !== "default") r.fail(["algorithm", "sample_strategy"], `sample_strategy '${strategy}' has no tcod equivalent`, "Use staleness_control (with max_staleness) or default.");
  const aggText = r.str(["algorithm", "loss_agg_mode"], "loss_agg_mode") ?? "token-mean";
  const aggregate = LOSS_AGG[aggText];
  if (!aggregate) r.fail(["algorithm", "loss_agg_mode"], `loss_agg_mode '${aggText}' has no tcod equivalent`, "Use token-mean or seq-mean-token-mean.");
  const lossFn = r.str(["algorithm", "policy_loss_fn"], "policy_loss_fn") ?? "ppo";
  if (lossFn !== "ppo" && lossFn !== "importance_sampling") r.fail(["algorithm", "policy_loss_fn"], `policy_loss_fn '${lossFn}' has no tcod equivalent`, "Use ppo or importance_sampling.");
  const clipLow = r.num(["algorithm", "policy_loss_fn_args", "clip_range_low"], "clip_range_low", { free: true });
  const clipHigh = r.num(["algorithm", "policy_loss_fn_args", "clip_range_high"], "clip_range_high", { free: true });
  if (clipLow !== undefined || clipHigh !== undefined) r.fail(["algorithm", "policy_loss_fn_args"], "asymmetric PPO clipping (clip_range_low/high) has no tcod equivalent", "Use one clip_range.");
  const clip = r.num(["algorithm", "policy_loss_fn_args", "clip_range"], "clip_range", { free: true }) ?? 0.2;
  for (const k of ["kl_penalty_fn", "kl_loss_fn", "entropy_loss_fn"]) {
    const v = r.str(["algorithm", k], k);
    if (v !== undefined && v !== "none") r.fail(["algorithm", k], `${k} '${v}' adds a loss term tcod does not have`, `Remove it or set ${k}: none.`);
  }
  const lr = r.num(["algorithm", "optimizer", "lr"], "lr", { min: 0 }) ?? OPTIMIZER_DEFAULTS.lr;
  const sched = r.str(["algorithm", "optimizer", "lr_scheduler_type"], "lr_scheduler_type");
  if (sched !== undefined && sched !== "constant") r.fail(["algorithm", "optimizer", "lr_scheduler_type"], `lr_scheduler_type '${sched}' is not imported`, "Use a constant learning rate (write schedules in tcod with `tcod run`).");
  const warm = r.num(["algorithm", "optimizer", "lr_warmup_steps"], "lr_warmup_steps");
  if (warm !== undefined && warm > 0) r.fail(["algorithm", "optimizer", "lr_warmup_steps"], "learning-rate warm-up is not imported", "Remove the warm-up.");
  const warmRatio = r.num(["algorithm", "optimizer", "lr_warmup_steps_ratio"], "lr_warmup_steps_ratio");
  if (warmRatio !== undefined && warmRatio > 0) r.fail(["algorithm", "optimizer", "lr_warmup_steps_ratio"], "learning-rate warm-up is not imported", "Remove the warm-up.");
  // betas is a List[float] field: OmegaConf converts each item as a float field does (an int, and a
  // string Python's float() reads: "0.9", " 0.9 ", "9_0e-2"), and refuses a boolean or null.
  const betasNode = r.node(["algorithm", "optimizer", "betas"]);
  let betas: number[] | undefined;
  if (r.get(["algorithm", "optimizer", "betas"]) !== undefined) {
    if (!isSeq(betasNode) || betasNode.items.length !== 2) r.fail(["algorithm", "optimizer", "betas"], "betas must be a list of two finite numbers", "e.g. betas: [0.9, 0.999]");
    else {
      const items = betasNode.items.map((_, j) => {
        const path = ["algorithm", "optimizer", "betas", j];
        if (r.get(path) === undefined) return r.fail(path, `betas[${j}] must be a number, got null: Trinity-RFT's List[float] field refuses it`, "Write a number, e.g. betas: [0.9, 0.999]");
        return r.num(path, `betas[${j}]`);
      });
      if (items.every((b) => b !== undefined)) betas = items as number[];
    }
  }
  const weightDecay = r.num(["algorithm", "optimizer", "weight_decay"], "weight_decay") ?? 0.01;
  const gradClip = r.num(["trainer", "grad_clip"], "grad_clip") ?? r.num(["algorithm", "optimizer", "clip_grad"], "clip_grad") ?? 1.0;
  const gradClipPath: Path = r.has(["trainer", "grad_clip"]) || !r.has(["algorithm", "optimizer", "clip_grad"]) ? ["trainer", "grad_clip"] : ["algorithm", "optimizer", "clip_grad"];

  // ---- workflow, env, pacing ----
  const wf = r.str(["buffer", "explorer_input", "default_workflow_type"], "default_workflow_type") ?? "";
  const m = WORKFLOW.exec(wf);
  if (wf && !m) {
    if (GENERATED_WORKFLOW.test(wf)) r.fail(["buffer", "explorer_input", "default_workflow_type"], `workflow type '${wf}' is the plugin workflow \`tcod export trinity\` generates; its curriculum is in the plugin's spec.json, which tcod does not import`, GENERATED_HINT);
    else r.fail(["buffer", "explorer_input", "default_workflow_type"], `unknown workflow type '${wf}'`, "tcod imports the TCOD workflows: OPD_<env>_workflow, TCOD_f2b_<env>_workflow, TCOD_b2f_<env>_workflow with env alfworld, webshop or scienceworld.");
  }
  const method = m?.[1] ?? "OPD";
  const env = m?.[2] ?? "alfworld";
  const ts = ["buffer", "explorer_input", "taskset"];
  // taskset.path (with split): what Trinity's TaskFileReader hands datasets.load_dataset(path,
  // split=split). A JSONL file, or a directory such as the official `webshop_data/` and
  // `sciworld_data/` (train.jsonl, test.jsonl, dataset_dict.json), whose files for the split are
  // picked by name (plan/taskset.ts). It becomes the env's task_file unchanged; tcod's runtime reads
  // a directory the same way, the env split mapping to Trinity's (train → train, others → test).
  const trainPath = r.str([...ts, "path"], "taskset path");
  // (Present but refused by r.str, it is not also missing.)
  if (r.has(ts) && trainPath === undefined && r.get([...ts, "path"]) === undefined) r.fail([...ts, "path"], "missing required key taskset.path (the JSONL taskset)", "Add `path: /path/to/train.jsonl`.");
  // An empty task_file means "no task file" to tcod's envs (their built-in tasks): not this taskset.
  if (trainPath === "") r.fail([...ts, "path"], "taskset.path is empty", "Give the JSONL taskset (or the directory of split files), e.g. `path: /path/to/train.jsonl`.");
  const storage = r.str([...ts, "storage_type"], "storage_type") ?? "file";
  if (storage !== "file") r.fail([...ts, "storage_type"], `storage_type '${storage}' is not imported; tcod reads JSONL task files`, "Use storage_type: file.");
  const trainSplit = r.str([...ts, "split"], "split") ?? "train";
  if (trainSplit !== "train") r.fail([...ts, "split"], `training split '${trainSplit}' is not imported`, "Use split: train for the training taskset.");
  const checkPromptKey = (base: Path): void => {
    const k = r.str([...base, "format", "prompt_key"], "prompt_key");
    // Against the env the workflow names; an unknown workflow (refused above) names none.
    if (k !== undefined && m && k !== PROMPT_KEYS[env]) r.fail([...base, "format", "prompt_key"], `prompt_key '${k}' differs from ${env}'s '${PROMPT_KEYS[env]}', which tcod's ${env} env reads`, `Use prompt_key: ${PROMPT_KEYS[env]}.`);
  };
  checkPromptKey(ts);
  const temperature = r.num([...ts, "rollout_args", "temperature"], "temperature", { min: 0 }) ?? 1.0;
  const wa = [...ts, "workflow_args"];
  const maxTurns = r.num([...wa, "max_env_steps"], "max_env_steps", { integer: true, min: 1, free: true }) ?? DEFAULT_MAX_TURNS[env]!;
  const teacherTemp = r.num([...wa, "temperature"], "workflow_args.temperature", { min: 0, free: true });
  const wfSteps = r.num([...wa, "total_steps"], "workflow_args.total_steps", { integer: true, min: 1, free: true });
  let every: number | undefined;
  if (method !== "OPD") {
    const strat = r.str([...wa, "checkpoint_strategy"], "checkpoint_strategy", { free: true }) ?? "linear";
    if (strat !== "linear") r.fail([...wa, "checkpoint_strategy"], `checkpoint_strategy '${strat}' is not implemented by the TCOD workflows (only 'linear')`, "Use checkpoint_strategy: linear.");
    every = r.num([...wa, "checkpoint_steps"], "checkpoint_steps", { integer: true, min: 1, free: true });
    if (every === undefined) { every = 5; r.notes.push(`${fmt([...wa, "checkpoint_steps"])}: absent → TCOD's default 5`); }
  }
  for (const k of Object.keys((r.get(wa) as Record<string, unknown> | undefined) ?? {})) {
    if (!["max_env_steps", "temperature", "total_steps", "checkpoint_strategy", "checkpoint_steps"].includes(k)) {
      r.fail([...wa, k], `workflow_args.${k} is not a TCOD workflow argument`, "Remove it; the TCOD workflows read max_env_steps, temperature, total_steps, checkpoint_strategy and checkpoint_steps.");
    }
  }

  // ---- buffer, trainer, explorer ----
  const steps = r.num(["buffer", "total_steps"], "total_steps", { integer: true, min: 1 }) ?? r.num(["trainer", "total_steps"], "trainer.total_steps", { integer: true, min: 1 });
  // (Present but refused above, it is not also missing.)
  if (steps === undefined && r.get(["buffer", "total_steps"]) === undefined && r.get(["trainer", "total_steps"]) === undefined) r.fail(["buffer", "total_steps"], "missing required key buffer.total_steps (training steps)", "Add `buffer: { total_steps: 250 }`.");
  const stepsPath: Path = r.has(["buffer", "total_steps"]) ? ["buffer", "total_steps"] : ["trainer", "total_steps"];
  if (wfSteps !== undefined && steps !== undefined && wfSteps !== steps) {
    r.notes.push(`${fmt([...wa, "total_steps"])}: ${wfSteps} differs from the run's ${steps} steps; TCOD's pacing does not read it, and export writes ${steps}`);
  }
  const tasks = r.num(["buffer", "batch_size"], "batch_size", { integer: true, min: 1 }) ?? 1;
  const trainBatch = r.num(["buffer", "train_batch_size"], "train_batch_size", { integer: true, min: 0 }) || tasks * repeat;
  const saveInterval = r.num(["trainer", "save_interval"], "save_interval", { integer: true, min: 1 });
  const syncInterval = r.num(["synchronizer", "sync_interval"], "sync_interval", { integer: true, min: 1 }) ?? 1;
  if (syncInterval !== 1) r.fail(["synchronizer", "sync_interval"], `sync_interval ${syncInterval}: tcod syncs weights after every step`, "Use sync_interval: 1.");
  const maxResponse = r.num(["model", "max_response_tokens"], "max_response_tokens", { integer: true, min: 1 });
  const seed = r.num(["explorer", "rollout_model", "seed"], "seed", { integer: true });
  const evalInterval = r.num(["explorer", "eval_interval"], "eval_interval", { integer: true, min: 1 }) ?? 100;
  const evalOnStartup = r.bool(["explorer", "eval_on_startup"], "eval_on_startup");
  const student = r.str(["model", "model_path"], "model_path");
  const teacher = r.str(["explorer", "auxiliary_models", 0, "model_path"], "teacher model_path");

  // ---- evals ----
  const evalNodes = r.node(["buffer", "explorer_input", "eval_tasksets"]);
  const evals: string[] = [];
  if (evalNodes !== undefined && !isSeq(evalNodes)) r.fail(["buffer", "explorer_input", "eval_tasksets"], "eval_tasksets must be a list", "Write `eval_tasksets: [ … ]`.");
  const evalCount = isSeq(evalNodes) ? evalNodes.items.length : 0;
  for (let i = 0; i < evalCount; i++) {
    const base: Path = ["buffer", "explorer_input", "eval_tasksets", i];
    const name = r.str([...base, "name"], "eval name") ?? `eval_${i}`;
    const path = r.str([...base, "path"], "eval path");
    if (path === undefined && r.get([...base, "path"]) === undefined) r.fail([...base, "path"], `missing required key path of eval taskset '${name}'`, "Add `path: /path/to/test.jsonl`.");
    if (path === "") r.fail([...base, "path"], `the path of eval taskset '${name}' is empty`, "Give the JSONL taskset, e.g. `path: /path/to/test.jsonl`.");
    const split = r.str([...base, "split"], "eval split") ?? "test";
    if (split !== "test") r.fail([...base, "split"], `eval split '${split}' is not imported (tcod maps Trinity's train/test splits)`, "Use split: test for evaluation tasksets.");
    checkPromptKey(base);
    const evalTemp = r.num([...base, "rollout_args", "temperature"], "eval temperature", { min: 0 }) ?? temperature;
    const evalSteps = r.num([...base, "total_steps"], "eval total_steps", { integer: true, min: 1 });
    // The eval draw: sequential (Trinity's default) evaluates the first total_steps tasks in file
    // order at every evaluation, as tcod's Evaluate does. The fork reseeds random and shuffle with
    // the explore step at each evaluation (Explorer.eval), drawing other tasks each time; tcod has
    // no such draw, so they import as the first N, said in a note. Upstream's key is data_selector.
    for (const key of ["task_selector", "data_selector"]) {
      const sel = r.str([...base, key, "selector_type"], `eval ${key}.selector_type`);
      if (sel === undefined || sel === "sequential") continue;
      if (sel === "random" || sel === "shuffle") {
        r.notes.push(`${fmt([...base, key, "selector_type"])}: ${sel} draws ${evalSteps ?? "the"} tasks afresh at each evaluation (the fork reseeds it with the explore step; its seed is not used); tcod evaluates the first ${evalSteps ?? "N"} tasks of the split every time, and the export writes sequential, which does the same on Trinity`);
      } else {
        r.fail([...base, key, "selector_type"], `eval ${key} '${sel}' is not imported: tcod evaluates the first N tasks of the split`, "Use selector_type: sequential (or random) for evaluation tasksets.");
      }
    }
    const evalMax = r.num([...base, "workflow_args", "max_env_steps"], "eval max_env_steps", { integer: true, min: 1, free: true });
    // An eval taskset's workflow_args (the WebShop/ScienceWorld configs repeat the training ones):
    // max_env_steps is the eval episode's turn limit; temperature is the teacher's scoring
    // temperature, which tcod has once per curriculum; total_steps and checkpoint_* are read by the
    // TCOD workflows but unused at evaluation (an eval episode is always full, with no prefix), so
    // export writes the training taskset's values there.
    const evalTeacherTemp = r.num([...base, "workflow_args", "temperature"], "eval workflow_args.temperature", { min: 0, free: true });
    if (evalTeacherTemp !== undefined && evalTeacherTemp !== (teacherTemp ?? 1)) {
      r.fail([...base, "workflow_args", "temperature"], `eval workflow_args.temperature ${evalTeacherTemp} differs from the training taskset's ${teacherTemp ?? 1}; tcod scores the teacher at one temperature per curriculum`, "Use the training taskset's workflow_args.temperature.");
    }
    for (const k of Object.keys((r.get([...base, "workflow_args"]) as Record<string, unknown> | undefined) ?? {})) {
      if (!["max_env_steps", "temperature", "total_steps", "checkpoint_strategy", "checkpoint_steps"].includes(k)) {
        r.fail([...base, "workflow_args", k], `workflow_args.${k} is not a TCOD workflow argument`, "Remove it; the TCOD workflows read max_env_steps, temperature, total_steps, checkpoint_strategy and checkpoint_steps.");
      }
    }
    const tcodSplit = evalSplit(env, name, path ?? "");
    const evalTempPath: Path = r.has([...base, "rollout_args", "temperature"]) ? [...base, "rollout_args", "temperature"] : [...ts, "rollout_args", "temperature"];
    const args = [
      at(["explorer", "eval_interval"], `every: ${evalInterval} steps`),
      `env: ${envCall(at, env, tcodSplit, path ?? "", [...base, "path"], maxTurns, [...wa, "max_env_steps"])}`,
      // An eval taskset's total_steps is the maximum number of tasks per evaluation (the fork's explorer).
      ...(evalSteps !== undefined ? [at([...base, "total_steps"], `tasks: ${evalSteps} tasks`)] : []),
      at(evalTempPath, `temperature: ${num(evalTemp)}`),
      ...(evalMax !== undefined && evalMax !== maxTurns ? [at([...base, "workflow_args", "max_env_steps"], `max_turns: ${evalMax} turns`)] : []),
      at([...base, "name"], `name: ${JSON.stringify(name)}`),
      ...(evalOnStartup === false ? [at(["explorer", "eval_on_startup"], "at_start: false")] : []),
    ];
    evals.push(at(base, `evaluate(${args.join(", ")})`));
  }

  // The config's name becomes the curriculum's: it must be one as it stands (exporting writes it back).
  const givenName = r.get(["name"]);
  if (givenName !== undefined && !r.boolWord(["name"], "name") && (typeof givenName !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(givenName) || TCOD_KEYWORDS.has(givenName))) {
    r.fail(["name"], typeof givenName === "string" && TCOD_KEYWORDS.has(givenName)
      ? `name '${givenName}' is a tcod keyword and cannot name the curriculum`
      : `name ${JSON.stringify(givenName)} cannot name a tcod curriculum (ASCII letters, digits and _, not starting with a digit)`,
    `Rename it, e.g. name: "${typeof givenName === "string" ? identifier(givenName) : "imported"}${typeof givenName === "string" && TCOD_KEYWORDS.has(givenName) ? "_run" : ""}".`);
  }

  // ---- cluster settings `tcod export --infra` takes back ----
  const infra: string[] = [];
  for (const [key, field] of Object.entries(INFRA_KEYS)) {
    const path = key.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    const v = r.get(path);
    if (v === undefined) continue;
    const def = DEFAULT_INFRA[field];
    if (typeof def === "number" && r.ambiguousNumber(path)) continue;
    if (typeof def === "number" && typeof v !== "number" && !(typeof v === "string" && Number.isFinite(Number(v)))) {
      r.fail(path, `${key} must be a number, got ${JSON.stringify(v)}`, `It is the cluster setting --infra ${field}.`);
      continue;
    }
    // A string setting as Trinity's str field holds it (`project: 2024` is "2024"), or refused (Reader.str).
    const text = typeof def === "number" ? undefined : typeof v === "string" ? v : r.str(path, key);
    if (typeof def !== "number" && text === undefined) continue;
    // What `tcod export --infra` would refuse is refused here, at the key.
    const problem = infraProblem(field, text ?? Number(v));
    if (problem) { r.fail(path, `${key}: ${problem.replace(/^--infra \w+ /, "")}`, `It is the cluster setting --infra ${field}; Trinity-RFT's trinity/common/config.py says what it takes.`); continue; }
    if (text !== undefined ? text !== def : Number(v) !== def) infra.push(`${field}=${text ?? String(v)}`);
  }
  for (const [key, fixed] of Object.entries(FIXED_KEYS)) {
    const v = r.get(key.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p)));
    if (v !== undefined && v !== fixed.value) r.notes.push(`${key}: ${JSON.stringify(v)} → the export writes ${JSON.stringify(fixed.value)} (${fixed.meaning})`);
  }
  const envVars = r.get(["explorer", "env_vars"]);
  if (envVars !== undefined) {
    if (!envVars || typeof envVars !== "object" || Array.isArray(envVars)) r.fail(["explorer", "env_vars"], "explorer.env_vars must be a mapping of variable names to values", "e.g. env_vars: { TMPDIR: /dev/shm/tmp }");
    else {
      // env_vars is a free-form dict, which OmegaConf hands on as YAML read it; Trinity-RFT passes it
      // to Ray as its workflow runners' runtime_env (explorer/scheduler.py, every release 0.4.1 to
      // 0.6.0), and Ray refuses a value that is not a string: a number, boolean or null is refused here.
      for (const k of Object.keys(envVars)) {
        const path: Path = ["explorer", "env_vars", k];
        const v = r.get(path);
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) r.fail(path, `environment variable name '${k}' is not valid`, "Use letters, digits and _.");
        else if (typeof v !== "string") {
          // A value whose interpolation was refused (reported there) reads as undefined too.
          const n = r.node(path);
          if (v === undefined && isScalar(n) && n.value !== null) continue;
          const text = r.source(path);
          const what = v === undefined ? "null" : typeof v === "boolean" ? `the boolean ${v}` : typeof v === "number" ? "a number" : Array.isArray(v) ? "a list" : "a mapping";
          r.fail(path, `explorer.env_vars.${k}${text !== undefined && text !== "" ? `: ${text}` : ""} is ${what} to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, not a string: Trinity-RFT hands explorer.env_vars to Ray as its workflow runners' environment, and Ray refuses any value that is not a string ("runtime_env['env_vars'] must be of type Dict[str, str]")`,
            text !== undefined && text !== "" && (typeof v === "number" || typeof v === "boolean") ? `Quote it (${k}: "${text}") to set the variable to that text.` : "Give the variable a string value, quoted.");
        } else infra.push(`env_vars.${k}=${v}`);
      }
    }
  }

  // What Trinity's field types refuse in the keys the import did not read (or read without complaint).
  r.dataclassTypes([], r.doc.contents, "Config", new Set(r.issues.map((i) => i.path)));
  // Interpolations in the keys it did not read (monitor.monitor_args…), which Trinity resolves all the same.
  r.checkInterpolations(new Set(r.issues.map((i) => i.path)));
  if (r.issues.length) throw new TrinityImportError(file, r.issues);

  // ---- the .tcod text ----
  const rawName = String(r.get(["name"]) ?? `${env}_${method.toLowerCase()}`);
  const curriculum = identifier(rawName);
  const imports: string[] = [`import { opd } from "std/loss"`];
  if (method === "TCOD_f2b") imports.push(`import { f2b } from "std/tcod"`);
  if (method === "TCOD_b2f") imports.push(`import { b2f } from "std/tcod"`);
  // The env's default agent is the official workflow's prompt (std/envs: alfworld_format,
  // webshop_format, scienceworld_format); only a response limit other than 512 is written.
  const agentFn = env === "scienceworld" ? "scienceworld_format" : env === "alfworld" ? "alfworld_format" : env === "webshop" ? "webshop_format" : "tcod_format";
  const agentArg = maxResponse !== undefined && maxResponse !== 512 ? `, ${at(["model", "max_response_tokens"], `agent: ${agentFn}(max_tokens: ${maxResponse} tokens)`)}` : "";
  imports.push(`import { ${env} } from "std/envs"`);
  if (agentArg) imports.push(`import { ${agentFn} } from "std/agent"`);
  const opt = (k: string): Path => ["algorithm", "optimizer", k];
  const lossArgs = [at(["algorithm", "advantage_fn_args", "kl_coef"], `coef: ${num(klCoef)}`), ...(aggregate && aggregate !== "token_mean" ? [at(["algorithm", "loss_agg_mode"], `aggregate: ${JSON.stringify(aggregate)}`)] : [])];
  const adamArgs = [
    at(opt("lr"), `lr: ${num(lr)}`),
    ...(betas ? [at(opt("betas"), `betas: [${betas.map((b) => num(b)).join(", ")}]`)] : []),
    ...(weightDecay !== 0.01 ? [at(opt("weight_decay"), `weight_decay: ${num(weightDecay)}`)] : []),
    at(gradClipPath, `grad_clip: ${num(gradClip)}`),
    ...(lossFn !== "ppo" ? [at(["algorithm", "policy_loss_fn"], `loss_fn: ${JSON.stringify(lossFn)}`)] : []),
    ...(clip !== 0.2 ? [at(["algorithm", "policy_loss_fn_args", "clip_range"], `clip: ${num(clip)}`)] : []),
  ];
  const checkpointSteps = [...wa, "checkpoint_steps"];
  const trainBatchPath: Path = r.has(["buffer", "train_batch_size"]) ? ["buffer", "train_batch_size"] : ["buffer", "batch_size"];
  // Each field is tagged with the YAML key it comes from, each argument with its own.
  const fields: [string, string][] = [
    ["teacher", "teacher"],
    ["student", "student"],
    ["env", at(ts, envCall(at, env, "train", trainPath ?? "", [...ts, "path"], maxTurns, [...wa, "max_env_steps"], agentArg))],
    ["steps", at(stepsPath, String(steps))],
    ["batch", `${at(["buffer", "batch_size"], `${tasks} tasks`)} × ${at(["algorithm", "repeat_times"], `${repeat} rollout${repeat === 1 ? "" : "s"}`)}`],
    ["train_batch", at(trainBatchPath, `${trainBatch} turns`)],
    ...(method === "TCOD_f2b" ? [["horizon", at(checkpointSteps, `f2b(${at(checkpointSteps, `every: ${every} steps`)}, ${at([...wa, "max_env_steps"], `max: ${maxTurns} turns`)})`)] as [string, string]] : []),
    ...(method === "TCOD_b2f" ? [["prefix", at(checkpointSteps, `b2f(every: ${every} steps)`)] as [string, string]] : []),
    ["loss", at(["algorithm"], `opd(${lossArgs.join(", ")})`)],
    ["optimizer", at(["algorithm", "optimizer"], `adam(${adamArgs.join(", ")})`)],
    ["staleness", at(["algorithm", "sample_strategy_args", "max_staleness"], `${staleness} steps`)],
    ["temperature", at([...ts, "rollout_args", "temperature"], num(temperature))],
    ...(teacherTemp !== undefined && teacherTemp !== 1 ? [["teacher_temperature", at([...wa, "temperature"], num(teacherTemp))] as [string, string]] : []),
    ...(evals.length === 1 ? [["eval", evals[0]!] as [string, string]] : evals.length > 1 ? [["eval", `[\n    ${evals.join(",\n    ")},\n  ]`] as [string, string]] : []),
    ...(saveInterval !== undefined ? [["checkpoint_every", at(["trainer", "save_interval"], `${saveInterval} steps`)] as [string, string]] : []),
    ...(seed !== undefined ? [["seed", at(["explorer", "rollout_model", "seed"], String(seed))] as [string, string]] : []),
  ];
  const width = Math.max(...fields.map(([k]) => k.length)) + 2;
  const marked = [
    `// Imported from ${commentText(file)} by \`tcod import trinity\` (Trinity-RFT workflow ${wf || "OPD"}).`,
    `// Cluster settings (GPUs, engines, Ray) are not curriculum: pass them to \`tcod export trinity\`.`,
    ...(infra.length > 0 ? [`// infra: ${commentText(infra.map((i) => `--infra ${shellWord(i)}`).join(" "))}`] : []),
    ...r.notes.map((n) => `// note: ${commentText(n)}`),
    ...imports,
    "",
    `// The teacher runs inside Trinity (explorer.auxiliary_models[0]); for \`tcod run\`, serve it yourself.`,
    `model teacher { path: ${at(["explorer", "auxiliary_models", 0, "model_path"], JSON.stringify(teacher))}  serve: openai("http://127.0.0.1:8001/v1") }`,
    `model student { path: ${at(["model", "model_path"], JSON.stringify(student))}  serve: worker() }`,
    "",
    `curriculum ${at(["name"], curriculum)} {`,
    ...fields.map(([k, v]) => `  ${(k + ":").padEnd(width)}${v}`),
    "}",
    "",
  ].join("\n");
  const { text: src, pieces } = o.strip(marked);
  const originPiece = (start: number, end: number): { start: number; end: number; path: Path } | undefined => {
    let best: { start: number; end: number; path: Path } | undefined;
    for (const p of pieces) {
      if (p.start <= start && end <= p.end && (!best || p.end - p.start < best.end - best.start)) best = p;
    }
    return best;
  };
  const issuesAt = (found: { start: number; end: number; message: string; hint: string }[]): ImportIssue[] | undefined => {
    const paths = found.map((f) => originPiece(f.start, f.end)?.path);
    if (paths.some((p) => p === undefined)) return undefined;
    const out: ImportIssue[] = [];
    const groups = new Map<unknown, ValueGroup[]>();
    found.forEach((f, i) => r.report(out, groups, paths[i]!, f.message, f.hint));
    return out;
  };
  const origin = (start: number, end: number): { path: string; line: number; column: number } | undefined => {
    const best = originPiece(start, end);
    return best && { path: fmt(best.path), ...r.pos(best.path) };
  };
  return { source: src, curriculum, notes: r.notes, infra, origin, issuesAt };
}

/**
 * An env call. A range error raised inside std/envs is reported at the whole call, so the call is
 * tagged with the YAML key of its one checked number, max_env_steps, when it is written (else the
 * caller's tag stands); its task file with the path's key.
 */
function envCall(at: Origins["mark"], env: string, split: string, taskFile: string, taskFilePath: Path, maxTurns: number, maxTurnsPath: Path, extra = ""): string {
  const custom = maxTurns !== DEFAULT_MAX_TURNS[env];
  const mt = custom ? `, max_turns: ${maxTurns} turns` : "";
  const call = `${env}(split: ${JSON.stringify(split)}, ${at(taskFilePath, `task_file: ${JSON.stringify(taskFile)}`)}${mt}${extra})`;
  return custom ? at(maxTurnsPath, call) : call;
}

/** A number as tcod source: integers plainly, others in the shortest round-tripping form. */
function num(x: number): string {
  if (Number.isInteger(x)) return x.toFixed(1);
  if (Math.abs(x) < 1e-3) return x.toExponential();
  return String(x);
}

/** Reserved words of the tcod language (docs/LANGUAGE.md, Lexical). */
const TCOD_KEYWORDS = new Set(["import", "export", "as", "let", "fn", "return", "model", "curriculum", "with", "sweep", "product", "zip", "in", "if", "then", "else", "and", "or", "not", "true", "false"]);

/**
 * Text for a `//` comment line: control characters (a line break would end the comment; the origin
 * marks are control characters) written as `\uXXXX`.
 */
function commentText(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A shell word: bare when safe, else single-quoted. */
function shellWord(s: string): string {
  return /^[\w./:=@,+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function identifier(s: string): string {
  const id = s.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(\d)/, "_$1");
  return id || "imported";
}

/**
 * The curriculum-relevant keys of a Trinity config: what `import` reads and `export` writes. Paths
 * with `*` match every list index or map key. Cluster keys (GPUs, engines, monitor…) are not here.
 */
export const CURRICULUM_KEYS: readonly string[] = [
  "name",
  "model.model_path", "model.max_response_tokens",
  "explorer.auxiliary_models.0.model_path",
  "algorithm.algorithm_type", "algorithm.advantage_fn", "algorithm.advantage_fn_args.kl_coef", "algorithm.repeat_times",
  "algorithm.sample_strategy", "algorithm.sample_strategy_args.max_staleness", "algorithm.loss_agg_mode",
  "algorithm.policy_loss_fn", "algorithm.policy_loss_fn_args.clip_range",
  "algorithm.optimizer.lr", "algorithm.optimizer.betas", "algorithm.optimizer.weight_decay",
  "buffer.total_steps", "buffer.batch_size", "buffer.train_batch_size",
  "buffer.explorer_input.default_workflow_type",
  "buffer.explorer_input.taskset.path", "buffer.explorer_input.taskset.split", "buffer.explorer_input.taskset.format.prompt_key",
  "buffer.explorer_input.taskset.rollout_args.temperature", "buffer.explorer_input.taskset.rollout_args.logprobs",
  // workflow_args.total_steps is read by the TCOD workflows but used by neither pacing formula
  // (reference §1.4); export writes the run's steps there, so it is not compared.
  "buffer.explorer_input.taskset.workflow_args.max_env_steps", "buffer.explorer_input.taskset.workflow_args.temperature",
  "buffer.explorer_input.taskset.workflow_args.checkpoint_strategy", "buffer.explorer_input.taskset.workflow_args.checkpoint_steps",
  "buffer.explorer_input.eval_tasksets.*.name", "buffer.explorer_input.eval_tasksets.*.path", "buffer.explorer_input.eval_tasksets.*.split",
  "buffer.explorer_input.eval_tasksets.*.total_steps", "buffer.explorer_input.eval_tasksets.*.rollout_args.temperature",
  "buffer.explorer_input.eval_tasksets.*.rollout_args.logprobs", "buffer.explorer_input.eval_tasksets.*.workflow_args.max_env_steps",
  "buffer.explorer_input.eval_tasksets.*.format.prompt_key", "buffer.explorer_input.eval_tasksets.*.workflow_args.temperature",
  "buffer.explorer_input.eval_tasksets.*.storage_type", "buffer.explorer_input.taskset.storage_type",
  "explorer.eval_interval", "explorer.eval_on_startup",
  "synchronizer.sync_interval",
  "trainer.total_steps", "trainer.save_interval", "trainer.grad_clip",
  "explorer.rollout_model.seed",
  // Not curriculum, but kept: the import hands them to `tcod export trinity --infra env_vars.NAME=…`.
  "explorer.env_vars.*",
];

/**
 * Keys of a Trinity config that are neither compared in a round trip nor handed back as --infra,
 * with why: the export derives them, or the TCOD workflows do not read them where they sit.
 */
export const DERIVED_KEYS: Readonly<Record<string, string>> = {
  "buffer.explorer_input.taskset.name": "a label in Trinity's logs; the export writes the env kind",
  "buffer.explorer_input.eval_tasksets.*.name": "compared (the eval's name), listed here only as the label it is",
  "buffer.trainer_input.experience_buffer.name": "the explorer→trainer queue's name; the export derives it from the curriculum name",
  "buffer.trainer_input.experience_buffer.path": "the queue's sqlite URL, derived from the curriculum name likewise",
  "buffer.explorer_input.taskset.workflow_args.total_steps": "read by the TCOD workflows but used by neither pacing formula; the export writes the run's steps",
  "buffer.explorer_input.eval_tasksets.*.workflow_args.total_steps": "not read at evaluation; the export repeats the training taskset's",
  "buffer.explorer_input.eval_tasksets.*.workflow_args.checkpoint_strategy": "not read at evaluation (an eval episode is full, no prefix); the export repeats the training taskset's",
  "buffer.explorer_input.eval_tasksets.*.workflow_args.checkpoint_steps": "not read at evaluation; the export repeats the training taskset's",
  "buffer.explorer_input.eval_tasksets.*.task_selector.selector_type": "how an evaluation draws its total_steps tasks (the fork): sequential = the first N in file order, tcod's Evaluate, which the export writes; random/shuffle draw other tasks at each evaluation and import with a note (docs/TRINITY.md, Evaluation)",
  "buffer.explorer_input.eval_tasksets.*.task_selector.seed": "the seed of a random/shuffle draw, which the fork's Explorer.eval replaces with the explore step; sequential has none",
  "buffer.explorer_input.eval_tasksets.*.data_selector.selector_type": "upstream's name for task_selector (task_selector is its deprecated alias); the upstream export writes sequential",
  "buffer.explorer_input.eval_tasksets.*.data_selector.seed": "as task_selector.seed",
  "explorer.auxiliary_models.0.seed": "the teacher engine's sampling seed (it only scores); the export writes the run seed",
  "explorer.auxiliary_models.0.max_response_tokens": "the teacher engine's response limit; the export writes the agent's max_tokens",
};

/** Every concrete path of `obj` matching a pattern of CURRICULUM_KEYS or a key of INFRA_KEYS, with its value. */
export function curriculumValues(obj: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (o: unknown, parts: string[], at: string[]): void => {
    if (parts.length === 0) { if (o !== undefined && o !== null) out.set(at.join("."), o); return; }
    if (o === null || typeof o !== "object") return;
    const [head, ...rest] = parts;
    const keys = head === "*" ? Object.keys(o) : [head!];
    for (const k of keys) walk((o as Record<string, unknown>)[k], rest, [...at, k]);
  };
  // Cluster keys too: the import hands them back as --infra, so a round trip keeps them.
  for (const k of [...CURRICULUM_KEYS, ...Object.keys(INFRA_KEYS)]) walk(obj, k.split("."), []);
  return out;
}

/**
 * Keys of `original` whose value `exported` does not give back (numbers compared numerically, so
 * `1e-6` and `0.000001` agree). `explorer.eval_interval` counts only when there are eval tasksets.
 */
export function curriculumDifferences(original: unknown, exported: unknown): { key: string; original: unknown; exported: unknown }[] {
  const a = curriculumValues(original), b = curriculumValues(exported);
  // train_batch_size 0 (Trinity's default) means batch_size × repeat_times (Trinity's config
  // validator sets it so), which the export writes out.
  if (a.has("buffer.train_batch_size") && sameValue(a.get("buffer.train_batch_size"), 0)) {
    a.set("buffer.train_batch_size", Number(a.get("buffer.batch_size") ?? 1) * Number(a.get("algorithm.repeat_times") ?? 1));
  }
  const hasEvals = [...a.keys()].some((k) => k.startsWith("buffer.explorer_input.eval_tasksets."));
  const diffs: { key: string; original: unknown; exported: unknown }[] = [];
  for (const [k, v] of a) {
    if (k === "explorer.eval_interval" && !hasEvals) continue;
    const w = b.get(k);
    if (!sameValue(v, w)) diffs.push({ key: k, original: v, exported: w });
  }
  return diffs;
}

function sameValue(a: unknown, b: unknown): boolean {
  const n = (x: unknown) => (typeof x === "string" && /^-?[\d.]+([eE][-+]?\d+)?$/.test(x) ? Number(x) : x);
  const x = n(a), y = n(b);
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => sameValue(v, y[i]));
  return x === y;
}

/** The whole config as plain data, with OmegaConf interpolations resolved as `importTrinity` does. */
export function resolvedConfig(yamlText: string, file = "<config>"): unknown {
  const r = new Reader(yamlText, file);
  if (r.issues.length) throw new TrinityImportError(file, r.issues);
  const out = r.resolvedJSON(r.doc.toJSON(), []);
  if (r.issues.length) throw new TrinityImportError(file, r.issues);
  return out;
}
