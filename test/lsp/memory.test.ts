/**
 * What a long-lived language server keeps from one keystroke to the next: an edited file's earlier
 * compilations are not kept alive by what later ones reuse (stdlib modules adopted from them, plans
 * reused from the memo), so a large file's evaluation is held once, not once per generation
 * (bench/lsp-memory.bench.mjs measures it on a 3 MB file; results in bench/results/lsp-memory.md).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { Workspace } from "../../lsp/workspace.js";

const ROOT = join(import.meta.dirname, "../..");
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
/** Whether the object a WeakRef names was collected (a WeakRef keeps its target to the end of the job that made it). */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  await new Promise((r) => setTimeout(r, 0));
  for (let i = 0; i < 3; i++) gc();
  return ref.deref() === undefined;
}

function project(): { path: string; text: string } {
  const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-memory-"));
  writeFileSync(join(dir, "package.json"), "{}\n");
  const path = join(dir, "main.tcod");
  // Two curricula and a sweep: the plans of both, and of every point, are reused after the edits below.
  const text = `${readFileSync(join(ROOT, "examples/texthouse/tcod-f2b.tcod"), "utf8")}
curriculum second = texthouse_tcod_f2b with { steps: 30 }
sweep lrs product { second.steps: [20, 40] }
`;
  writeFileSync(path, text);
  return { path, text };
}

describe("an edited file's earlier compilations", () => {
  it("are not kept alive by the modules and plans later ones reuse (the first stayed: adopted stdlib modules and reused plans held it)", async () => {
    const { path, text } = project();
    const ws = new Workspace();
    ws.setOpen(path, text);
    // (The first analysis is not held here: only a weak reference to its entry module, and its plans'
    // graphs; a plan's sources name its compilation's modules.)
    const { entry, graphs } = ((first) => {
      expect(first.result.diagnostics).toEqual([]);
      expect(first.result.plans.length).toBe(3);
      return { entry: new WeakRef(first.program!.modules.get(path)!), graphs: first.result.plans.map((p) => p.plan.graph) };
    })(ws.analyze(path));
    // Values added at the end: every plan is reused (the same objects but for their sources).
    for (let k = 1; k <= 3; k++) {
      ws.setOpen(path, `${text}\nlet added_${k} = ${k} steps\n`);
      const a = ws.analyze(path);
      expect(a.result.diagnostics).toEqual([]);
      expect(a.result.plans.map((p) => p.plan.graph)).toEqual(graphs);
      a.result.plans.forEach((p, i) => expect(p.plan.graph).toBe(graphs[i]));
    }
    expect(await collected(entry)).toBe(true);
  });

  it("are not kept alive after an edit that an error interrupts, once the file is clean again", async () => {
    const { path, text } = project();
    const ws = new Workspace();
    ws.setOpen(path, text);
    const entry = new WeakRef(ws.analyze(path).program!.modules.get(path)!);
    ws.setOpen(path, text.replace("steps: 30", "steps: 3O"));
    expect(ws.analyze(path).result.ok).toBe(false);
    ws.setOpen(path, `${text}\nlet added = 1 steps\n`);
    expect(ws.analyze(path).result.diagnostics).toEqual([]);
    expect(await collected(entry)).toBe(true);
  });
});
