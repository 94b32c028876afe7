/**
 * The language server at the protocol level: `tcod lsp` spawned as an editor spawns it, spoken to in
 * JSON-RPC (vscode-languageserver-protocol, client side): initialize, open, diagnostics (the codes
 * and spans of `tcod check`), hover, completion, definition, references, rename, formatting, symbols,
 * semantic tokens, inlay hints, quick fixes.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import {
  createProtocolConnection, DidChangeTextDocumentNotification, DidOpenTextDocumentNotification, InitializeRequest, InitializedNotification,
  PublishDiagnosticsNotification, type Diagnostic, type ProtocolConnection, type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol";

const ROOT = join(import.meta.dirname, "../..");
const uri = (p: string) => pathToFileURL(p).href;

let server: ChildProcess;
let conn: ProtocolConnection;
let dir: string;
const diagnostics = new Map<string, PublishDiagnosticsParams[]>();

/** The next diagnostics published for `u` after `since` publications. */
async function nextDiagnostics(u: string, since: number): Promise<Diagnostic[]> {
  for (let i = 0; i < 400; i++) {
    const list = diagnostics.get(u) ?? [];
    if (list.length > since) return list.at(-1)!.diagnostics;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no diagnostics for ${u}`);
}
const published = (u: string) => (diagnostics.get(u) ?? []).length;

const MAIN = `import { f2b } from "std/tcod"
import { shared_steps } from "./shared"
import { texthouse } from "std/envs"

model teacher { path: "oracle"  serve: embedded() }
model student { path: "loglinear"  serve: embedded() }

let k = 6 steps

curriculum demo {
  teacher: teacher
  student: student
  env: texthouse(split: "train")
  steps: shared_steps
  horizon: f2b(every: k, max: 30 turns)
}
`;
const SHARED = `/// Steps every demo runs for.
export let shared_steps = 60 steps
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tcod-lsp-"));
  writeFileSync(join(dir, "package.json"), "{}\n");
  writeFileSync(join(dir, "main.tcod"), MAIN);
  writeFileSync(join(dir, "shared.tcod"), SHARED);
  server = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "lsp", "--stdio"], { cwd: dir, stdio: ["pipe", "pipe", "inherit"] });
  conn = createProtocolConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
    diagnostics.set(p.uri, [...(diagnostics.get(p.uri) ?? []), p]);
  });
  conn.listen();
  const init = await conn.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: uri(dir), capabilities: {}, workspaceFolders: null });
  expect(init.capabilities.hoverProvider).toBe(true);
  expect(init.capabilities.semanticTokensProvider).toBeTruthy();
  await conn.sendNotification(InitializedNotification.type, {});
  await conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: uri(join(dir, "main.tcod")), languageId: "tcod", version: 1, text: MAIN } });
}, 60_000);

afterAll(() => {
  conn?.dispose();
  server?.kill();
});

const main = () => uri(join(dir, "main.tcod"));
const pos = (text: string, needle: string, plus = 0) => {
  const at = text.indexOf(needle) + plus;
  const before = text.slice(0, at).split("\n");
  return { line: before.length - 1, character: before.at(-1)!.length };
};

describe("tcod lsp", () => {
  it("publishes no diagnostics for a correct file, then check's codes and spans as you type", async () => {
    expect(await nextDiagnostics(main(), 0)).toEqual([]);
    const broken = MAIN.replace("horizon: f2b(every: k, max: 30 turns)", "horizon: f2b(evrey: k, max: 30 turns)\n  temprature: 1.0");
    const n = published(main());
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: main(), version: 2 }, contentChanges: [{ text: broken }] });
    const ds = await nextDiagnostics(main(), n);
    // The same diagnostics as `tcod check --json` on that text.
    writeFileSync(join(dir, "broken.tcod"), broken);
    const check = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "check", "--json", join(dir, "broken.tcod")], { cwd: dir, encoding: "utf8" });
    const expected = check.stdout.trim().split("\n").map((l) => JSON.parse(l) as { code: string; line: number; column: number; command?: string }).filter((l) => l.command === undefined);
    expect(ds.map((d) => [d.code, d.range.start.line + 1, d.range.start.character + 1])).toEqual(expected.map((e) => [e.code, e.line, e.column]));
    expect(ds.length).toBeGreaterThan(0);

    // Quick fix for the did-you-mean.
    const fixable = ds.find((d) => /Did you mean 'temperature'/.test(String(d.message)))!;
    expect(fixable).toBeTruthy();
    const actions = await conn.sendRequest("textDocument/codeAction", { textDocument: { uri: main() }, range: fixable.range, context: { diagnostics: [fixable] } }) as { title: string; edit: { changes: Record<string, { newText: string }[]> } }[];
    expect(actions[0]!.title).toBe("Change to 'temperature'");
    expect(actions[0]!.edit.changes[main()]![0]!.newText).toBe("temperature");

    const m = published(main());
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: main(), version: 3 }, contentChanges: [{ text: MAIN }] });
    expect(await nextDiagnostics(main(), m)).toEqual([]);
  });

  it("hover: a curriculum field as explain prints it; a let with its value, unit and level; a stdlib function with its doc", async () => {
    const field = await conn.sendRequest("textDocument/hover", { textDocument: { uri: main() }, position: pos(MAIN, "horizon:") }) as { contents: { value: string } };
    expect(field.contents.value).toContain("demo.horizon = min(1 + floor(step / 6) * 1, 30)");
    expect(field.contents.value).toContain("unit:   turns");
    expect(field.contents.value).toMatch(/step\s+1\s+2\s+3/);
    const k = await conn.sendRequest("textDocument/hover", { textDocument: { uri: main() }, position: pos(MAIN, "every: k", 7) }) as { contents: { value: string } };
    expect(k.contents.value).toContain("let k = 6 steps");
    expect(k.contents.value).toContain("steps · const");
    const f = await conn.sendRequest("textDocument/hover", { textDocument: { uri: main() }, position: pos(MAIN, "f2b(every", 1) }) as { contents: { value: string } };
    expect(f.contents.value).toContain("fn f2b(start: turns = …, every: steps, max: turns, by: turns = …): turns");
    expect(f.contents.value).toContain("std/tcod.tcod");
  });

  it("completion: curriculum fields, named arguments, stdlib functions with an import, import paths", async () => {
    const withBlank = MAIN.replace("  horizon:", "  \n  horizon:");
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: main(), version: 4 }, contentChanges: [{ text: withBlank }] });
    const fields = await conn.sendRequest("textDocument/completion", { textDocument: { uri: main() }, position: pos(withBlank, "  \n  horizon:", 2) }) as { label: string }[];
    const labels = fields.map((c) => c.label);
    expect(labels).toContain("loss");
    expect(labels).toContain("max_turns");
    expect(labels).not.toContain("steps"); // already there

    const args = await conn.sendRequest("textDocument/completion", { textDocument: { uri: main() }, position: pos(withBlank, "f2b(", 4) }) as { label: string }[];
    expect(args.map((c) => c.label)).toEqual(expect.arrayContaining(["start:", "every:", "max:", "by:"]));

    const lets = withBlank.replace("let k = 6 steps", "let k = 6 steps\nlet lr = lin");
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: main(), version: 5 }, contentChanges: [{ text: lets }] });
    const names = await conn.sendRequest("textDocument/completion", { textDocument: { uri: main() }, position: pos(lets, "= lin", 5) }) as { label: string; additionalTextEdits?: { newText: string }[]; documentation?: { value: string } }[];
    const linear = names.find((c) => c.label === "linear")!;
    expect(linear.additionalTextEdits![0]!.newText).toBe('import { linear } from "std/schedule"\n');
    expect(linear.documentation!.value).toContain("Straight line");

    const imp = lets.replace('from "./shared"', 'from "./sh"');
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: main(), version: 6 }, contentChanges: [{ text: imp }] });
    const paths = await conn.sendRequest("textDocument/completion", { textDocument: { uri: main() }, position: pos(imp, '"./sh"', 4) }) as { label: string }[];
    expect(paths.map((c) => c.label)).toContain("./shared");
    const std = await conn.sendRequest("textDocument/completion", { textDocument: { uri: main() }, position: pos(imp, '"std/tcod"', 1) }) as { label: string }[];
    expect(std.map((c) => c.label)).toEqual(expect.arrayContaining(["std/tcod", "std/schedule", "std/envs"]));
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: main(), version: 7 }, contentChanges: [{ text: MAIN }] });
  });

  it("definition and references across modules, the stdlib included", async () => {
    const def = await conn.sendRequest("textDocument/definition", { textDocument: { uri: main() }, position: pos(MAIN, "steps: shared_steps", 8) }) as { uri: string; range: { start: { line: number } } };
    expect(def.uri).toBe(uri(join(dir, "shared.tcod")));
    expect(def.range.start.line).toBe(1);
    const std = await conn.sendRequest("textDocument/definition", { textDocument: { uri: main() }, position: pos(MAIN, "f2b(every", 1) }) as { uri: string };
    expect(std.uri).toMatch(/stdlib\/std\/tcod\.tcod$/);
    const refs = await conn.sendRequest("textDocument/references", { textDocument: { uri: main() }, position: pos(MAIN, "let k", 4), context: { includeDeclaration: true } }) as { range: { start: { line: number; character: number } } }[];
    expect(refs.map((r) => [r.range.start.line, r.range.start.character])).toEqual([[7, 4], [14, 22]]);
    const shared = await conn.sendRequest("textDocument/references", { textDocument: { uri: main() }, position: pos(MAIN, "steps: shared_steps", 8), context: { includeDeclaration: true } }) as { uri: string }[];
    expect(new Set(shared.map((r) => r.uri))).toEqual(new Set([main(), uri(join(dir, "shared.tcod"))]));
  });

  it("rename across modules; library names refuse", async () => {
    const r = await conn.sendRequest("textDocument/rename", { textDocument: { uri: main() }, position: pos(MAIN, "steps: shared_steps", 8), newName: "run_steps" }) as { changes: Record<string, { newText: string }[]> };
    expect(Object.keys(r.changes).sort()).toEqual([main(), uri(join(dir, "shared.tcod"))].sort());
    expect(r.changes[main()]!.length).toBe(2); // the import and the use
    expect(r.changes[uri(join(dir, "shared.tcod"))]!.length).toBe(1);
    await expect(conn.sendRequest("textDocument/rename", { textDocument: { uri: main() }, position: pos(MAIN, "f2b(every", 1), newName: "g" })).rejects.toThrow(/library/);
  });

  it("formatting through tcod fmt; symbols; semantic tokens; inlay hints", async () => {
    const edits = await conn.sendRequest("textDocument/formatting", { textDocument: { uri: main() }, options: { tabSize: 2, insertSpaces: true } }) as { newText: string }[];
    expect(edits[0]!.newText).toContain("model teacher {\n  path: \"oracle\"\n  serve: embedded()\n}");
    const symbols = await conn.sendRequest("textDocument/documentSymbol", { textDocument: { uri: main() } }) as { name: string; children?: { name: string }[] }[];
    expect(symbols.map((s) => s.name)).toEqual(["f2b", "shared_steps", "texthouse", "teacher", "student", "k", "demo"]);
    expect(symbols.at(-1)!.children!.map((c) => c.name)).toEqual(["teacher", "student", "env", "steps", "horizon"]);
    const tokens = await conn.sendRequest("textDocument/semanticTokens/full", { textDocument: { uri: main() } }) as { data: number[] };
    expect(tokens.data.length % 5).toBe(0);
    expect(tokens.data.length).toBeGreaterThan(5 * 20);
    const hints = await conn.sendRequest("textDocument/inlayHint", { textDocument: { uri: main() }, range: { start: { line: 0, character: 0 }, end: { line: 20, character: 0 } } }) as { label: string; position: { line: number } }[];
    expect(hints).toEqual(expect.arrayContaining([
      expect.objectContaining({ label: ": steps · const", position: expect.objectContaining({ line: 7 }) }),
      expect.objectContaining({ label: ": turns · step", position: expect.objectContaining({ line: 14 }) }),
    ]));
  });

  it("control and bidi characters in comments and strings, and a UTF-16 buffer: check's codes and spans, on open and as you type", async () => {
    const u = uri(join(dir, "ctl.tcod"));
    const clean = "/// Steps.\nlet a = 6 steps // note\nlet s = \"x\"\n";
    await conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: u, languageId: "tcod", version: 1, text: clean } });
    expect(await nextDiagnostics(u, 0)).toEqual([]);
    const brief = (ds: Diagnostic[]) => ds.map((d) => [d.code, d.range.start.line + 1, d.range.start.character + 1]);

    // Typed in (incremental changes, as an editor sends them): a RIGHT-TO-LEFT OVERRIDE into the line
    // comment, then an ESC into the string.
    let n = published(u);
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: u, version: 2 }, contentChanges: [{ range: { start: { line: 1, character: 20 }, end: { line: 1, character: 20 } }, text: "\u202e" }] });
    expect(brief(await nextDiagnostics(u, n))).toEqual([["TC1010", 2, 21]]);
    n = published(u);
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: u, version: 3 }, contentChanges: [{ range: { start: { line: 2, character: 10 }, end: { line: 2, character: 10 } }, text: "\u001b" }] });
    const ds = await nextDiagnostics(u, n);
    expect(brief(ds)).toEqual([["TC1010", 2, 21], ["TC1003", 3, 11]]);
    expect(ds.map((d) => String(d.message).split("\n")[0])).toEqual([
      "Bidirectional control character U+202E (RIGHT-TO-LEFT OVERRIDE): it can make the code read differently than it runs.",
      "Invalid character U+001B.",
    ]);
    // As `tcod check` says of that text.
    const typed = "/// Steps.\nlet a = 6 steps // n\u202eote\nlet s = \"x\u001b\"\n";
    writeFileSync(join(dir, "ctl-typed.tcod"), typed);
    const check = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "check", "--json", join(dir, "ctl-typed.tcod")], { cwd: dir, encoding: "utf8" });
    const lines = check.stdout.trim().split("\n").map((l) => JSON.parse(l) as { code?: string; line: number; column: number }).filter((l) => l.code !== undefined);
    expect(brief(ds)).toEqual(lines.map((l) => [l.code, l.line, l.column]));

    // A UTF-16 file the editor read as UTF-8 (a NUL beside each character): one TC1009 at 1:1.
    n = published(u);
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: u, version: 4 }, contentChanges: [{ text: Buffer.from(clean, "utf16le").toString("utf8") }] });
    expect(brief(await nextDiagnostics(u, n))).toEqual([["TC1009", 1, 1]]);
    n = published(u);
    await conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: u, version: 5 }, contentChanges: [{ text: clean }] });
    expect(await nextDiagnostics(u, n)).toEqual([]);
  });
});
