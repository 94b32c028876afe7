/**
 * The language server and the disk: another program's writes to a file an open document imports are
 * seen without an edit in the editor. An editor that supports it is asked (`client/registerCapability`)
 * to report changes to `**\/*.tcod`, and a change re-checks the open documents that read the file, and
 * only those; for an editor that does not, the server stats the files the analyses read.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import {
  type ClientCapabilities, createProtocolConnection, DidChangeWatchedFilesNotification, DidOpenTextDocumentNotification, FileChangeType,
  InitializeRequest, InitializedNotification, PublishDiagnosticsNotification, RegistrationRequest, type ProtocolConnection,
  type PublishDiagnosticsParams, type Registration,
} from "vscode-languageserver-protocol";
import { Workspace } from "../../lsp/workspace.js";

const ROOT = join(import.meta.dirname, "../..");
const uri = (p: string) => pathToFileURL(p).href;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Server { proc: ChildProcess; conn: ProtocolConnection; diagnostics: Map<string, PublishDiagnosticsParams[]>; registrations: Registration[] }
const servers: Server[] = [];
afterEach(() => { for (const s of servers.splice(0)) { s.conn.dispose(); s.proc.kill(); } });

async function start(dir: string, capabilities: ClientCapabilities): Promise<Server> {
  const proc = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "lsp", "--stdio"], { cwd: dir, stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, TCOD_LSP_WARMUP: "0" } });
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  const registrations: Registration[] = [];
  conn.onNotification(PublishDiagnosticsNotification.type, (p) => { diagnostics.set(p.uri, [...(diagnostics.get(p.uri) ?? []), p]); });
  conn.onRequest(RegistrationRequest.type, (p) => { registrations.push(...p.registrations); });
  conn.onError(() => {});
  conn.listen();
  await conn.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: uri(dir), capabilities, workspaceFolders: null });
  await conn.sendNotification(InitializedNotification.type, {});
  const s = { proc, conn, diagnostics, registrations };
  servers.push(s);
  return s;
}

const A = 'import { y } from "./b"\nlet z = y\n';
const B = "export let y = 2 steps\n";
const B_HIDDEN = "let y = 2 steps // not exported\n";

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-disk-"));
  writeFileSync(join(dir, "package.json"), "{}\n");
  writeFileSync(join(dir, "a.tcod"), A);
  writeFileSync(join(dir, "b.tcod"), B);
  return dir;
}

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(25)) if (ok()) return;
  throw new Error(`timed out waiting for ${what}`);
}
const codes = (s: Server, u: string) => (s.diagnostics.get(u)?.at(-1)?.diagnostics ?? []).map((d) => d.code);

/** Opens a.tcod, waits for its first diagnostics and past the server's idle look at the disk. */
async function openA(s: Server, dir: string): Promise<string> {
  const a = uri(join(dir, "a.tcod"));
  await s.conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: a, languageId: "tcod", version: 1, text: A } });
  await until(() => s.diagnostics.has(a), "first diagnostics of a.tcod");
  expect(codes(s, a)).toEqual([]);
  await sleep(1500);
  return a;
}

describe("an imported file changed on disk by another program", () => {
  it("is seen without file events (an editor that cannot be asked for them): stats of what was read (was: never, until an edit)", async () => {
    const dir = project();
    const s = await start(dir, {});
    const a = await openA(s, dir);
    expect(s.registrations).toEqual([]);
    writeFileSync(join(dir, "b.tcod"), B_HIDDEN);
    await until(() => codes(s, a).includes("TC1106"), "TC1106 in a.tcod after b.tcod changed on disk", 6_000);
    writeFileSync(join(dir, "b.tcod"), B);
    await until(() => codes(s, a).length === 0, "TC1106 cleared", 6_000);
  }, 30_000);

  it("is reported by an editor that supports it, asked for **/*.tcod; an event re-checks only the documents that read the file", async () => {
    const dir = project();
    const s = await start(dir, { workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } });
    await until(() => s.registrations.length > 0, "client/registerCapability");
    expect(s.registrations.map((r) => [r.method, r.registerOptions])).toEqual([["workspace/didChangeWatchedFiles", { watchers: [{ globPattern: "**/*.tcod" }] }]]);
    const a = await openA(s, dir);
    const before = s.diagnostics.get(a)!.length;
    // A file no analysis read: nothing to re-check (every open document was re-checked).
    writeFileSync(join(dir, "c.tcod"), "let c = 1\n");
    await s.conn.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: uri(join(dir, "c.tcod")), type: FileChangeType.Created }, { uri: uri(join(dir, "c.tcod")), type: FileChangeType.Changed }] });
    await sleep(500);
    expect(s.diagnostics.get(a)!.length).toBe(before);
    writeFileSync(join(dir, "b.tcod"), B_HIDDEN);
    await s.conn.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: uri(join(dir, "b.tcod")), type: FileChangeType.Changed }] });
    await until(() => codes(s, a).includes("TC1106"), "TC1106 in a.tcod after the event", 1_000);
  }, 30_000);
});

describe("Workspace: which analyses a change on disk makes stale", () => {
  it("those that read the file; all, for a file created where an import looked; none, for another file", () => {
    const dir = project();
    writeFileSync(join(dir, "lone.tcod"), "let k = 1 step\n");
    const ws = new Workspace();
    const [a, b, lone] = ["a.tcod", "b.tcod", "lone.tcod"].map((f) => join(dir, f)) as [string, string, string];
    ws.setOpen(a, A);
    ws.setOpen(lone, "let k = 1 step\n");
    ws.analyze(a);
    ws.analyze(lone);
    expect(ws.filesChanged([{ path: join(dir, "other.tcod"), kind: "created" }])).toEqual([]);
    expect(ws.filesChanged([{ path: b, kind: "changed" }])).toEqual([a]);
    ws.analyze(a);
    // Changes to an open file's disk copy: its buffer is what is checked.
    expect(ws.filesChanged([{ path: lone, kind: "changed" }])).toEqual([]);
    writeFileSync(b, B_HIDDEN);
    expect(ws.revalidate({ structure: false })).toEqual([a]);
    expect(ws.analyze(a).result.diagnostics.map((d) => d.code)).toEqual(["TC1106"]);
    // ./b was looked for as b.tcod, then b.ts: deleting b.tcod may change what it finds.
    expect(ws.filesChanged([{ path: b, kind: "deleted" }]).sort()).toEqual([a, lone].sort());
  });
});
