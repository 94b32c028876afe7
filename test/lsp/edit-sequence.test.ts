/**
 * What the server publishes after a run of keystrokes is what `tcod check` says of the text they leave:
 * each analysis of an edited buffer (reparsed, modules adopted, plans and memoized calls reused from
 * the analyses before it) gives exactly the diagnostics, and plans, of a fresh compilation of its text.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { parse } from "../../grammar/index.js";
import { readSourceFile } from "../../plan/read-file.js";
import { Workspace } from "../../lsp/workspace.js";

const ROOT = join(import.meta.dirname, "../..");
const outcome = (r: CompileResult) => ({
  diagnostics: r.diagnostics.map((d) => render(d, (f) => r.sources.get(f))),
  plans: r.plans.map((p) => JSON.stringify(p.plan)),
});
const fresh = (path: string, text: string) =>
  outcome(compileFile(path, { host: { read: (p) => (p === path ? { text } : readSourceFile(p)), parse } }));

/** Typing `typed` at `at`, one character per keystroke: each text along the way. */
const typing = (text: string, at: number, typed: string) => [...typed].map((_, k) => text.slice(0, at) + typed.slice(0, k + 1) + text.slice(at));

describe("a sequence of edits", () => {
  it("leaves, after each keystroke, the diagnostics and plans of a fresh compilation of the text", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-edit-sequence-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const path = join(dir, "main.tcod");
    const example = readFileSync(join(ROOT, "examples/texthouse/tcod-f2b.tcod"), "utf8");
    let text = `${example}
let lr_b = stepwise(from: 0.02, factor: 0.5, every: 20 steps)
curriculum second = texthouse_tcod_f2b with { steps: 30  optimizer: adam(lr: lr_b) }
sweep lrs product { second.steps: [20, 40] }
`;
    if (!text.includes('import { stepwise } from "std/schedule"')) text = `import { stepwise } from "std/schedule"\n${text}`;
    writeFileSync(path, text);
    const ws = new Workspace();
    const steps: string[] = [text];
    // A comment typed in the middle of the file (later positions move, columns on its line).
    const mid = text.indexOf("\n", text.length >> 1);
    steps.push(...typing(text, mid, " // note"));
    text = steps[steps.length - 1]!;
    // A line typed above everything (every line moves), a number retyped, a name broken and typed again.
    steps.push((text = `// header\n${text}`));
    steps.push((text = text.replace("every: 20 steps", "every: 2 steps")), (text = text.replace("every: 2 steps", "every: 25 steps")));
    steps.push((text = text.replace("adam(lr: lr_b)", "adam(lr: lr_)")), (text = text.replace("adam(lr: lr_)", "adam(lr: lr_c)")), (text = text.replace("adam(lr: lr_c)", "adam(lr: lr_b)")));
    // A syntax error, then repaired; a declaration deleted that others read, then restored.
    steps.push((text = text.replace("let lr_b =", "let lr_b = =")), (text = text.replace("let lr_b = =", "let lr_b =")));
    const line = text.slice(text.indexOf("let lr_b"), text.indexOf("\n", text.indexOf("let lr_b")) + 1);
    steps.push(text.replace(line, ""), text);
    let errors = 0;
    for (const now of steps) {
      ws.setOpen(path, now);
      const got = outcome(ws.analyze(path).result);
      expect(got).toEqual(fresh(path, now));
      if (got.diagnostics.length) errors++;
    }
    // The sequence did go through broken texts, and ends clean.
    expect(errors).toBeGreaterThanOrEqual(3);
    expect(fresh(path, steps[steps.length - 1]!).diagnostics).toEqual([]);
  });
});
