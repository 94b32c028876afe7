/**
 * A small layout algebra (Wadler's "prettier printer", as prettier uses it): a document is text,
 * line breaks that are a space (`line`) or nothing (`softline`) when their group fits on the line,
 * forced breaks (`hardline`), `indent`, and `group`s that are laid out flat when they fit in the
 * width and broken otherwise. A group that contains a forced break is always broken.
 */
export type Doc = string | Doc[] | { kind: "line"; soft: boolean; hard: boolean } | { kind: "indent"; doc: Doc } | Group | IfBreak | { kind: "breakParent" };
interface Group { kind: "group"; doc: Doc; broken?: boolean }
interface IfBreak { kind: "ifBreak"; broken: Doc; flat: Doc }

export const line: Doc = { kind: "line", soft: false, hard: false };
export const softline: Doc = { kind: "line", soft: true, hard: false };
export const hardline: Doc = { kind: "line", soft: false, hard: true };
/** Prints nothing; the groups around it break (after a `//` comment, the line must end). */
export const breakParent: Doc = { kind: "breakParent" };
export const indent = (doc: Doc): Doc => ({ kind: "indent", doc });
export const group = (doc: Doc): Doc => ({ kind: "group", doc });
/** `broken` when the enclosing group breaks, `flat` otherwise (a trailing comma, say). */
export const ifBreak = (broken: Doc, flat: Doc = ""): Doc => ({ kind: "ifBreak", broken, flat });
export const join = (sep: Doc, docs: Doc[]): Doc => docs.flatMap((d, i) => (i === 0 ? [d] : [sep, d]));

/** Whether `doc` contains a forced break (so any group around it breaks). */
export function hasForcedBreak(doc: Doc): boolean {
  if (typeof doc === "string") return false;
  if (Array.isArray(doc)) return doc.some(hasForcedBreak);
  switch (doc.kind) {
    case "line": return doc.hard;
    case "breakParent": return true;
    case "indent": case "group": return hasForcedBreak(doc.doc);
    case "ifBreak": return hasForcedBreak(doc.broken) || hasForcedBreak(doc.flat);
  }
}

/** Marks every group that contains a hard line as broken; returns whether `doc` contains one. */
function propagateBreaks(doc: Doc): boolean {
  if (typeof doc === "string") return false;
  if (Array.isArray(doc)) {
    let hard = false;
    for (const d of doc) if (propagateBreaks(d)) hard = true;
    return hard;
  }
  switch (doc.kind) {
    case "line": return doc.hard;
    case "breakParent": return true;
    case "indent": return propagateBreaks(doc.doc);
    case "ifBreak": return propagateBreaks(doc.broken) || propagateBreaks(doc.flat);
    case "group": {
      const hard = propagateBreaks(doc.doc);
      if (hard) doc.broken = true;
      return hard;
    }
  }
}

type Mode = "flat" | "break";
interface Cmd { ind: number; mode: Mode; doc: Doc }

/** Whether `next` (then the rest of the line) fits in `width` columns, laid out flat. */
function fits(next: Cmd, rest: Cmd[], width: number): boolean {
  const stack: Cmd[] = [next];
  let restIdx = rest.length;
  while (width >= 0) {
    let cmd = stack.pop();
    if (cmd === undefined) {
      // The rest of the current line belongs to enclosing (already decided) commands.
      if (restIdx === 0) return true;
      cmd = rest[--restIdx]!;
    }
    const { ind, mode, doc } = cmd;
    if (typeof doc === "string") {
      width -= doc.length;
    } else if (Array.isArray(doc)) {
      for (let i = doc.length - 1; i >= 0; i--) stack.push({ ind, mode, doc: doc[i]! });
    } else {
      switch (doc.kind) {
        case "indent": stack.push({ ind, mode, doc: doc.doc }); break;
        case "group": {
          if (doc.broken && mode === "flat") return false;
          stack.push({ ind, mode: doc.broken ? "break" : mode, doc: doc.doc });
          break;
        }
        case "ifBreak": stack.push({ ind, mode, doc: mode === "break" ? doc.broken : doc.flat }); break;
        case "breakParent": break;
        case "line":
          if (mode === "break" || doc.hard) return true;
          if (!doc.soft) width -= 1;
          break;
      }
    }
  }
  return false;
}

/** Lays `doc` out in `width` columns with `indentBy`-space indentation. Lines carry no trailing spaces. */
export function layout(doc: Doc, width = 100, indentBy = 2): string {
  propagateBreaks(doc);
  const out: string[] = [];
  let column = 0;
  const stack: Cmd[] = [{ ind: 0, mode: "break", doc }];
  while (stack.length > 0) {
    const { ind, mode, doc: d } = stack.pop()!;
    if (typeof d === "string") {
      out.push(d);
      column += d.length;
    } else if (Array.isArray(d)) {
      for (let i = d.length - 1; i >= 0; i--) stack.push({ ind, mode, doc: d[i]! });
    } else {
      switch (d.kind) {
        case "indent": stack.push({ ind: ind + indentBy, mode, doc: d.doc }); break;
        case "group": {
          const flat: Cmd = { ind, mode: "flat", doc: d.doc };
          stack.push(!d.broken && fits(flat, stack, width - column) ? flat : { ind, mode: "break", doc: d.doc });
          break;
        }
        case "ifBreak": stack.push({ ind, mode, doc: mode === "break" ? d.broken : d.flat }); break;
        case "breakParent": break;
        case "line":
          if (mode === "flat" && !d.hard) {
            if (!d.soft) { out.push(" "); column += 1; }
          } else {
            // Trim the spaces a line may end with (a `line` before a forced break, say).
            while (out.length > 0 && / +$/.test(out.at(-1)!)) {
              const trimmed = out.at(-1)!.replace(/ +$/, "");
              if (trimmed === "") out.pop();
              else { out[out.length - 1] = trimmed; break; }
            }
            out.push("\n" + " ".repeat(ind));
            column = ind;
          }
          break;
      }
    }
  }
  return out.join("").replace(/[ \t]+\n/g, "\n");
}
