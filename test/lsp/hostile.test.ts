/**
 * The language server against hostile or unusual clients, at the protocol level (`tcod lsp` spawned
 * as an editor spawns it): documents that are not local files, a `didOpen` without text, frames the
 * JSON-RPC reader cannot take, a Content-Length over the cap, and an import cycle across two open files.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import {
  createProtocolConnection, DidChangeTextDocumentNotification, DidOpenTextDocumentNotification, HoverRequest, InitializeRequest,
  InitializedNotification, PublishDiagnosticsNotification, type ProtocolConnection, type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol";

const ROOT = join(import.meta.dirname, "../..");
const uri = (p: string) => pathToFileURL(p).href;

interface Server { proc: ChildProcess; conn: ProtocolConnection; diagnostics: Map<string, PublishDiagnosticsParams[]>; exit: Promise<number | null>; stderr: () => string }
const servers: Server[] = [];
afterEach(() => { for (const s of servers.splice(0)) { s.conn.dispose(); s.proc.kill(); } });

async function start(dir: string): Promise<Server> {
  const proc = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "lsp", "--stdio"], { cwd: dir, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, TCOD_LSP_WARMUP: "0" } });
  let err = "";
  proc.stderr!.on("data", (b: Buffer) => { err += b.toString(); });
  const exit = new Promise<number | null>((r) => proc.on("exit", (code) => r(code)));
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  conn.onNotification(PublishDiagnosticsNotification.type, (p) => { diagnostics.set(p.uri, [...(diagnostics.get(p.uri) ?? []), p]); });
  conn.onError(() => {});
  conn.listen();
  await conn.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: uri(dir), capabilities: {}, workspaceFolders: null });
  await conn.sendNotification(InitializedNotification.type, {});
  const s = { proc, conn, diagnostics, exit, stderr: () => err };
  servers.push(s);
  return s;
}

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-hostile-"));
  writeFileSync(join(dir, "package.json"), "{}\n");
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) { if (ok()) return; await new Promise((r) => setTimeout(r, 25)); }
  throw new Error(`timed out waiting for ${what}`);
}
const codes = (s: Server, u: string) => (s.diagnostics.get(u)?.at(-1)?.diagnostics ?? []).map((d) => d.code);

describe("documents the server cannot map to a file", () => {
  it("are left alone, and the server keeps serving (it exited on them)", async () => {
    const dir = project({ "main.tcod": "let k = 6 steps\nlet bad = nope\n" });
    const s = await start(dir);
    for (const u of ["file://otherhost/x.tcod", `${uri(dir)}/a%2Fb.tcod`, "vscode-notebook-cell:/x.tcod"]) {
      await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: u, languageId: "tcod", version: 1, text: "let x = 1\n" } });
      await s.conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: u, version: 2 }, contentChanges: [{ text: "let x = 2\n" }] });
      expect(await s.conn.sendRequest(HoverRequest.type, { textDocument: { uri: u }, position: { line: 0, character: 4 } })).toBeNull();
    }
    // A didOpen whose text is null is invalid: ignored.
    const nullText = uri(join(dir, "null.tcod"));
    await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: nullText, languageId: "tcod", version: 1, text: null as unknown as string } });
    await new Promise((r) => setTimeout(r, 300));
    expect(s.proc.exitCode).toBeNull();
    // Still serving: a real file gets its diagnostics.
    const main = uri(join(dir, "main.tcod"));
    await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: main, languageId: "tcod", version: 1, text: "let k = 6 steps\nlet bad = nope\n" } });
    await until(() => codes(s, main).length > 0, "diagnostics of main.tcod");
    expect(s.proc.exitCode).toBeNull();
    expect(s.diagnostics.has("file://otherhost/x.tcod")).toBe(false);
  }, 30_000);
});

describe("an unsaved buffer (untitled:)", () => {
  it("is checked in memory; its relative and package imports get TC1112 (it was ignored: no diagnostics, no features)", async () => {
    const dir = project({ "b.tcod": "export let y = 2 steps\n" });
    const s = await start(dir);
    const u = "untitled:Untitled-1";
    await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: u, languageId: "tcod", version: 1, text: "let x = 1 step\nlet bad = nope\n" } });
    await until(() => codes(s, u).length > 0, "diagnostics of the untitled buffer");
    expect(codes(s, u)).toEqual(["TC2002"]);
    expect(s.diagnostics.get(u)!.at(-1)!.diagnostics[0]!.range.start).toEqual({ line: 1, character: 10 });
    const h = await s.conn.sendRequest(HoverRequest.type, { textDocument: { uri: u }, position: { line: 0, character: 4 } });
    expect(JSON.stringify(h)).toContain("let x");
    // Another untitled buffer is another file.
    const u2 = "untitled:Untitled-2";
    await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: u2, languageId: "tcod", version: 1, text: "let x = 2 steps\n" } });
    await until(() => s.diagnostics.has(u2), "diagnostics of the second untitled buffer");
    expect(codes(s, u2)).toEqual([]);
    // Imports: std/ resolves; a relative or package import needs a saved file.
    const text = 'import { y } from "./b"\nimport { x } from "somepkg/x"\nimport { linear } from "std/schedule"\nlet k = linear(from: 1, to: 2, over: 0 steps .. 10 steps)\n';
    await s.conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: u, version: 2 }, contentChanges: [{ text }] });
    await until(() => codes(s, u).includes("TC1112"), "TC1112");
    const ds = s.diagnostics.get(u)!.at(-1)!.diagnostics;
    expect(ds.map((d) => [d.code, d.range.start.line])).toEqual([["TC1112", 0], ["TC1112", 1]]);
    expect(ds[0]!.message).toBe("Import './b' in an unsaved buffer: relative and package imports are found from the file's folder, and it has none yet.\nhint: Save the file in the project it belongs to, and its imports are checked; `std/…` imports work unsaved.");
    expect(s.proc.exitCode).toBeNull();
  }, 30_000);
});

describe("frames the JSON-RPC reader cannot take", () => {
  for (const length of ["abc", "-5"]) {
    it(`Content-Length: ${length} ends the server with a message on stderr (it hung, silent)`, async () => {
      const s = await start(project({}));
      s.proc.stdin!.write(`Content-Length: ${length}\r\n\r\n{}`);
      const code = await Promise.race([s.exit, new Promise<string>((r) => setTimeout(() => r("still running"), 10_000))]);
      expect(code).toBe(1);
      expect(s.stderr()).toMatch(/tcod lsp: unreadable message from the client .*exiting so that the editor restarts the server/);
    }, 30_000);
  }
});

describe("a Content-Length larger than any sane message", () => {
  it("ends the server at once, naming the cap (it waited 10 s for the bytes, then said only 'part of a message')", async () => {
    const s = await start(project({}));
    const t0 = Date.now();
    s.proc.stdin!.write("Content-Length: 99999999999\r\n\r\n{}");
    const code = await Promise.race([s.exit, new Promise<string>((r) => setTimeout(() => r("still running"), 5_000))]);
    expect(code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(s.stderr()).toMatch(/tcod lsp: the client announced a message of 99999999999 bytes \(Content-Length\), over the 64 MiB cap on one message \(TCOD_LSP_MAX_MESSAGE_MB\); exiting so that the editor restarts the server/);
  }, 30_000);

  it("TCOD_LSP_MAX_MESSAGE_MB that is not a size stops the server before it starts, with TC7009", async () => {
    const proc = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "lsp", "--stdio"], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, TCOD_LSP_MAX_MESSAGE_MB: "lots" } });
    let err = "";
    proc.stderr!.on("data", (b: Buffer) => { err += b.toString(); });
    setTimeout(() => proc.kill(), 10_000).unref();
    const code = await new Promise<number | null>((r) => proc.on("exit", (c) => r(c)));
    expect(code).not.toBe(0);
    expect(err).toMatch(/error TC7009: TCOD_LSP_MAX_MESSAGE_MB must be a positive number of MiB, got "lots"\n  hint: Set it to the largest message, in MiB/);
  }, 30_000);
});

describe("an import cycle across open files", () => {
  it("is reported in every open file of the cycle, and stays (the last analysis cleared the other's)", async () => {
    const A = "import { y } from \"./b\"\nexport let x = 1 steps\n";
    const B = "export let y = 2 steps\n";
    const dir = project({ "a.tcod": A, "b.tcod": B });
    const s = await start(dir);
    const a = uri(join(dir, "a.tcod"));
    const b = uri(join(dir, "b.tcod"));
    await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: a, languageId: "tcod", version: 1, text: A } });
    await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: b, languageId: "tcod", version: 1, text: B } });
    await until(() => s.diagnostics.has(a) && s.diagnostics.has(b), "first diagnostics");
    const B2 = "import { x } from \"./a\"\nexport let y = 2 steps\n";
    await s.conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: b, version: 2 }, contentChanges: [{ text: B2 }] });
    await until(() => codes(s, a).includes("TC1102") && codes(s, b).includes("TC1102"), "TC1102 in a.tcod and b.tcod");
    // Past the idle re-check: still in both, each at its own import.
    await new Promise((r) => setTimeout(r, 1500));
    const at = (u: string) => s.diagnostics.get(u)!.at(-1)!.diagnostics.filter((d) => d.code === "TC1102").map((d) => d.range.start.line);
    expect(at(a)).toEqual([0]);
    expect(at(b)).toEqual([0]);
    // Breaking the cycle clears it from both.
    await s.conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: b, version: 3 }, contentChanges: [{ text: B }] });
    await until(() => !codes(s, a).includes("TC1102") && !codes(s, b).includes("TC1102"), "TC1102 cleared");
  }, 30_000);
});
