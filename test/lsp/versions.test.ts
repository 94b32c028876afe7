/**
 * Document versions at the protocol level (`tcod lsp` spawned as an editor spawns it): a change whose
 * version is not newer than the document's (VS Code at times sends one twice) is dropped, neither
 * applied again to the text nor checked again; the next newer change applies to the text as it was.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import {
  createProtocolConnection, DidChangeTextDocumentNotification, DidOpenTextDocumentNotification, InitializeRequest, InitializedNotification,
  PublishDiagnosticsNotification, type ProtocolConnection, type PublishDiagnosticsParams, type TextDocumentContentChangeEvent,
} from "vscode-languageserver-protocol";

const ROOT = join(import.meta.dirname, "../..");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let proc: ChildProcess | undefined;
let conn: ProtocolConnection | undefined;
afterEach(() => { conn?.dispose(); proc?.kill(); });

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) { if (ok()) return; await sleep(25); }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a change whose version is not newer than the document's", () => {
  it("is dropped: not applied to the text again, not checked again (was: applied, and the text held the edit twice)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-versions-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    const text = "let a = 1 steps\n";
    writeFileSync(join(dir, "main.tcod"), text);
    const u = pathToFileURL(join(dir, "main.tcod")).href;
    proc = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "lsp", "--stdio"], { cwd: dir, stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, TCOD_LSP_WARMUP: "0" } });
    conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    const published: PublishDiagnosticsParams[] = [];
    conn.onNotification(PublishDiagnosticsNotification.type, (p) => { if (p.uri === u) published.push(p); });
    conn.onError(() => {});
    conn.listen();
    await conn.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: pathToFileURL(dir).href, capabilities: {}, workspaceFolders: null });
    await conn.sendNotification(InitializedNotification.type, {});
    await conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: u, languageId: "tcod", version: 1, text } });
    await until(() => published.length === 1, "the first diagnostics");
    expect(published[0]!.diagnostics).toEqual([]);

    const change = (version: number, contentChanges: TextDocumentContentChangeEvent[]) =>
      conn!.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: u, version }, contentChanges });
    // Version 2: a line inserted at the top, naming something unknown.
    const insert = [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: "let b = nope\n" }];
    await change(2, insert);
    await until(() => published.length === 2, "the diagnostics of version 2");
    expect(published[1]!.version).toBe(2);
    expect(published[1]!.diagnostics.map((d) => [d.code, d.range.start.line])).toEqual([["TC2002", 0]]);

    // The same change again, then an older one: both dropped, and nothing is checked or published.
    await change(2, insert);
    await change(1, [{ range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, text: "" }]);
    await sleep(1000);
    expect(published.length).toBe(2);

    // Version 3 edits the text of version 2: `nope` → `a`, on the first line; the file is clean.
    await change(3, [{ range: { start: { line: 0, character: 8 }, end: { line: 0, character: 12 } }, text: "a" }]);
    await until(() => published.length === 3, "the diagnostics of version 3");
    expect(published[2]!.version).toBe(3);
    expect(published[2]!.diagnostics).toEqual([]);
  }, 60_000);
});
