/**
 * `tcod lsp`: the tcod language server over stdio (vscode-languageserver). Diagnostics as you type
 * (exactly `tcod check`'s: same codes and spans), hover (values, units, levels; a curriculum field as
 * `tcod explain` prints it), completion, go to definition and references across modules (stdlib and
 * npm included), rename, document symbols, semantic tokens, inlay hints (unit · level), formatting
 * (`tcod fmt`) and quick fixes for "did you mean" diagnostics. The features are in features.ts.
 */
import { sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  CodeActionKind, CompletionItemKind, createConnection, DidChangeWatchedFilesNotification, FileChangeType, DiagnosticSeverity, InlayHintKind, MarkupKind, ProposedFeatures,
  SemanticTokensBuilder, SymbolKind, TextDocuments, TextDocumentSyncKind, TextEdit, type Connection, type Diagnostic as LspDiagnostic,
  type DocumentSymbol, type Range,
} from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import type { Span } from "../grammar/ast.js";
import type { Diagnostic } from "../compiler/index.js";
import { findStdlibDir } from "../compiler/modules.js";
import { format } from "../formatter/index.js";
import {
  complete, definition, didYouMeanFix, documentSymbols, hover, inlayHints, references, rename, semanticTokens, StdIndex,
  TOKEN_MODIFIERS, TOKEN_TYPES, type DocSymbol,
} from "./features.js";
import { warmUp } from "./warmup.js";
import { isUntitledPath, isUntitledUri, untitledPath, untitledUri } from "./untitled.js";
import { oversized, Workspace, type Analysis } from "./workspace.js";

/** Quiet time after an analysis before the disk is checked for changes the editor did not report. */
const REVALIDATE_AFTER_MS = 1000;
/**
 * For an editor that cannot be asked for file events: how often the files the open documents' analyses
 * read are stat'ed (mtime and size: one stat per file, a few ms per 1,000 files).
 */
const POLL_DISK_MS = 2000;
/** The files whose changes on disk the server asks the editor to report (`workspace/didChangeWatchedFiles`). */
export const WATCHED_GLOB = "**/*.tcod";
/** With no document opened, how long after `initialized` the warm-up (lsp/warmup.ts) starts. */
const WARMUP_AFTER_MS = 500;
/** How long after its last diagnostics the server waits, idle, before the warm-up starts. */
const WARMUP_IDLE_MS = 300;
/**
 * The warm-up types into a copy of the first open document whose analysis took at most this long:
 * its copy's first analysis is one step, and an edit that arrives during a step waits for it (an
 * example's first analysis is 60-170 ms in a new process, ~12 ms in the copy; the 1,000-module
 * project of the benchmarks 2.4 s, then 1.1 s: not copied).
 */
const DOCUMENT_WARMUP_MAX_MS = 300;

/**
 * The path of a document's URI: a local file's, or for an editor's unsaved buffer (`untitled:`) the
 * made-up path it is checked under (lsp/untitled.ts); undefined for another host's file
 * (`file://host/…`), an encoded `/` in a name, another scheme. The server leaves such documents alone
 * (no diagnostics, no features) rather than guess a path.
 */
export const toPath = (uri: string): string | undefined => {
  if (isUntitledUri(uri)) return untitledPath(uri);
  if (!uri.startsWith("file:")) return undefined;
  try { return fileURLToPath(uri); } catch { return undefined; }
};
export const toUri = (path: string): string => (isUntitledPath(path) ? untitledUri(path) : pathToFileURL(path).href);
export const toRange = (s: Span): Range => ({
  start: { line: s.start.line - 1, character: s.start.column - 1 }, end: { line: s.end.line - 1, character: s.end.column - 1 },
});

export function toLspDiagnostic(d: Diagnostic): LspDiagnostic {
  const fix = didYouMeanFix(d.message);
  return {
    range: toRange(d.span),
    severity: d.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    source: "tcod",
    message: d.hint ? `${d.message}\nhint: ${d.hint}` : d.message,
    ...(d.related.length ? { relatedInformation: d.related.map((r) => ({ location: { uri: toUri(r.span.file), range: toRange(r.span) }, message: r.message })) } : {}),
    ...(fix ? { data: { replacement: fix } } : {}),
  };
}

export function startServer(connection: Connection = createConnection(ProposedFeatures.all)): Connection {
  /**
   * The open documents. A change whose version is not newer than the document's is dropped (LSP:
   * a document's versions increase with each change; VS Code at times sends one twice): applied again,
   * an incremental change would edit the text a second time.
   */
  const documents = new TextDocuments<TextDocument>({
    create: TextDocument.create,
    update: (doc, changes, version) => (version > doc.version ? TextDocument.update(doc, changes, version) : doc),
  });
  /** Per open document, the version its last check was scheduled for: a dropped change schedules none. */
  const handled = new Map<string, number>();
  const ws = new Workspace();
  const std = new StdIndex(ws);
  const stdDir = findStdlibDir();
  const isLibrary = (file: string) => file.startsWith(stdDir + sep) || file.includes(`${sep}node_modules${sep}`);
  /**
   * Per open document, its last analysis's diagnostics by file. A file's published diagnostics are
   * the union over the open documents (each analysis sees the program from its own entry: in an import
   * cycle a → b → a, a's analysis reports the cycle in b and b's in a; with either alone shown, the
   * last analysis would clear the other's and the cycle would show in one file only).
   */
  const published = new Map<string, Map<string, LspDiagnostic[]>>();
  const sendMerged = (f: string) => {
    const seen = new Set<string>();
    const diagnostics: LspDiagnostic[] = [];
    for (const byFile of published.values()) {
      for (const d of byFile.get(f) ?? []) {
        const key = JSON.stringify([d.code, d.range, d.message]);
        if (!seen.has(key)) { seen.add(key); diagnostics.push(d); }
      }
    }
    void connection.sendDiagnostics({ uri: toUri(f), version: documents.get(toUri(f))?.version, diagnostics });
  };

  /** A `didOpen` whose `text` is not a string (null, say) is invalid: the document is ignored. */
  const hasText = (doc: TextDocument) => typeof (doc.getText() as unknown) === "string";
  /**
   * Runs work the protocol library does not guard (timers, deferred steps): an exception there would
   * end the process. It is logged to the editor's output instead, and the server keeps serving.
   */
  const guarded = (what: string, f: () => void) => {
    try { f(); } catch (e) { connection.console.error(`tcod lsp: ${what} failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`); }
  };
  const analysisOf = (uri: string): Analysis | undefined => {
    const doc = documents.get(uri);
    const path = toPath(uri);
    if (!doc || path === undefined || !hasText(doc)) return undefined;
    ws.setOpen(path, doc.getText());
    return ws.analyze(path);
  };
  const offsetOf = (uri: string, pos: { line: number; character: number }) => documents.get(uri)!.offsetAt(pos);

  /** Whether the editor can be asked, at `initialized`, for events about files on disk. */
  let canWatch = false;
  connection.onInitialize((params) => {
    canWatch = params.capabilities?.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        completionProvider: { triggerCharacters: [".", "\"", "/", "(", ",", " "], resolveProvider: false },
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: true },
        documentSymbolProvider: true,
        documentFormattingProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        inlayHintProvider: true,
        semanticTokensProvider: { legend: { tokenTypes: [...TOKEN_TYPES], tokenModifiers: [...TOKEN_MODIFIERS] }, full: true },
      },
      serverInfo: { name: "tcod", version: "0.1.0" },
    };
  });

  // Re-check after each change, once per burst of changes.
  const pending = new Set<string>();
  let scheduled = false;
  const schedule = (uri: string) => {
    pending.add(uri);
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const uris = [...pending];
      pending.clear();
      for (const u of uris) guarded(`checking ${u}`, () => publish(u));
    });
  };
  const publish = (uri: string) => {
    const a = analysisOf(uri);
    if (!a) return;
    const byFile = new Map<string, LspDiagnostic[]>([[a.path, []]]);
    for (const d of a.result.diagnostics) {
      if (d.span.file.startsWith("<")) continue;
      const list = byFile.get(d.span.file) ?? [];
      list.push(toLspDiagnostic(d));
      byFile.set(d.span.file, list);
    }
    const files = new Set([...(published.get(uri)?.keys() ?? []), ...byFile.keys()]);
    published.set(uri, byFile);
    for (const f of files) sendMerged(f);
    revalidateWhenIdle();
    warmUpAfter(WARMUP_IDLE_MS);
  };

  // The disk. The editor's file events (asked for at `initialized` where it supports that), and, when
  // idle, a look at what the analyses read (for changes it does not report: files outside its
  // watchers, links); an editor that cannot be asked for events gets that look every POLL_DISK_MS
  // too (the stats of the files read; another program's writes). An open document is re-checked
  // when a file its analysis read changed, not on every event.
  const recheck = (stale: string[]) => {
    const paths = new Set(stale);
    for (const d of documents.all()) if (paths.has(toPath(d.uri) ?? "")) schedule(d.uri);
  };
  connection.onDidChangeWatchedFiles((p) => {
    recheck(ws.filesChanged(p.changes.flatMap((c) => {
      const path = toPath(c.uri);
      return path === undefined ? [] : [{ path, kind: c.type === FileChangeType.Created ? "created" as const : c.type === FileChangeType.Deleted ? "deleted" as const : "changed" as const }];
    })));
  });
  let idle: NodeJS.Timeout | undefined;
  const revalidateWhenIdle = () => {
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => guarded("revalidating", () => { idle = undefined; recheck(ws.revalidate()); }), REVALIDATE_AFTER_MS);
    idle.unref();
  };
  const pollDisk = () => {
    const timer = setInterval(() => guarded("checking the disk", () => {
      if (documents.all().length > 0) recheck(ws.revalidate({ structure: false }));
    }), POLL_DISK_MS);
    timer.unref();
  };
  const watchDisk = () => {
    if (!canWatch) { pollDisk(); return; }
    connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: WATCHED_GLOB }] }).catch((e: unknown) => {
      connection.console.warn(`tcod lsp: the editor refused to report file changes (${e instanceof Error ? e.message : String(e)}); checking the disk every ${POLL_DISK_MS / 1000} s instead`);
      pollDisk();
    });
  };

  // The warm-up (lsp/warmup.ts): once the server has been idle WARMUP_IDLE_MS since it published
  // diagnostics (WARMUP_AFTER_MS after `initialized` if it published none), one step at a time
  // whenever no re-check is pending, until it is done or the first edit (TCOD_LSP_WARMUP=0: none);
  // it types into a copy of an open document first (DOCUMENT_WARMUP_MAX_MS).
  // Started at `initialized`, its first, cold step delayed the first diagnostics by ~70-100 ms; an
  // edit that arrives during a step waits for it (the first step ~50 ms, later ones a few ms).
  let warming: Generator<void, void, void> | undefined;
  let warmStarted = process.env.TCOD_LSP_WARMUP === "0";
  let warmTimer: NodeJS.Timeout | undefined;
  const warmStep = () => {
    if (!warming) return;
    if (scheduled) { setImmediate(warmStep); return; }
    let done = true;
    guarded("warming up", () => { done = !!warming!.next().done; });
    if (done) warming = undefined;
    else setImmediate(warmStep);
  };
  const warmUpAfter = (ms: number) => {
    if (warmStarted) return;
    if (warmTimer) clearTimeout(warmTimer);
    warmTimer = setTimeout(() => guarded("warming up", () => {
      if (warmStarted) return;
      warmStarted = true;
      const doc = ws.allAnalyses().find((a) => ws.isOpen(a.path) && a.ms <= DOCUMENT_WARMUP_MAX_MS);
      warming = warmUp(doc ? [{ path: doc.path, text: doc.text }] : []);
      setImmediate(warmStep);
    }), ms);
    warmTimer.unref();
  };
  connection.onInitialized(() => { watchDisk(); warmUpAfter(WARMUP_AFTER_MS); });

  // TextDocuments reports an open as a content change too, right after `onDidOpen`.
  let opening = false;
  documents.onDidOpen((e) => { opening = true; handled.set(e.document.uri, e.document.version); schedule(e.document.uri); });
  documents.onDidChangeContent((e) => {
    if (!opening && handled.get(e.document.uri) === e.document.version) return;
    handled.set(e.document.uri, e.document.version);
    if (!opening) { warming = undefined; warmStarted = true; if (warmTimer) clearTimeout(warmTimer); }
    opening = false;
    const path = toPath(e.document.uri);
    if (path === undefined || !hasText(e.document)) return;
    ws.setOpen(path, e.document.getText());
    // Files importing this one are re-checked too.
    const importers = new Set(ws.analysesLoading(path).map((a) => a.path));
    for (const other of documents.all()) if (other.uri === e.document.uri || importers.has(toPath(other.uri) ?? "")) schedule(other.uri);
  });
  documents.onDidClose((e) => {
    handled.delete(e.document.uri);
    const path = toPath(e.document.uri);
    // The files importing the closed one were checked with its buffer: check them again from the disk.
    const importers = new Set(path === undefined ? [] : ws.analysesLoading(path).map((a) => a.path));
    if (path !== undefined) ws.close(path);
    const files = [...(published.get(e.document.uri)?.keys() ?? [])];
    published.delete(e.document.uri);
    for (const f of files) sendMerged(f);
    for (const other of documents.all()) if (other.uri !== e.document.uri && importers.has(toPath(other.uri) ?? "")) schedule(other.uri);
  });

  connection.onHover((p) => {
    const a = analysisOf(p.textDocument.uri);
    const h = a && hover(a, offsetOf(p.textDocument.uri, p.position));
    return h ? { contents: { kind: MarkupKind.Markdown, value: h.markdown }, range: toRange(h.span) } : null;
  });

  connection.onCompletion((p) => {
    const a = analysisOf(p.textDocument.uri);
    if (!a) return [];
    const doc = documents.get(p.textDocument.uri)!;
    if (oversized(doc.getText()) !== undefined) return [];
    const entries = complete(a, std, doc.getText(), doc.offsetAt(p.position));
    const imported = new Set(a.program?.modules.get(a.path)?.ast?.decls.flatMap((d) => (d.kind === "import" ? d.names.map((n) => n.alias ?? n.name) : [])) ?? []);
    const kinds = { field: CompletionItemKind.Field, function: CompletionItemKind.Function, variable: CompletionItemKind.Variable, module: CompletionItemKind.Module, keyword: CompletionItemKind.Keyword, argument: CompletionItemKind.Property, file: CompletionItemKind.File, folder: CompletionItemKind.Folder };
    return entries.map((e) => ({
      label: e.label, kind: kinds[e.kind], ...(e.detail ? { detail: e.detail } : {}),
      ...(e.doc ? { documentation: { kind: MarkupKind.Markdown, value: e.doc } } : {}),
      ...(e.insertText ? { insertText: e.insertText } : {}),
      ...(e.addImport && !imported.has(e.addImport.name) ? { additionalTextEdits: [TextEdit.insert({ line: 0, character: 0 }, `import { ${e.addImport.name} } from "${e.addImport.from}"\n`)] } : {}),
    }));
  });

  connection.onDefinition((p) => {
    const a = analysisOf(p.textDocument.uri);
    const s = a && definition(a, offsetOf(p.textDocument.uri, p.position));
    return s ? { uri: toUri(s.file), range: toRange(s) } : null;
  });

  connection.onReferences((p) => {
    const a = analysisOf(p.textDocument.uri);
    if (!a) return [];
    return references(ws, a, offsetOf(p.textDocument.uri, p.position))
      .filter((o) => p.context.includeDeclaration || !o.declaration)
      .map((o) => ({ uri: toUri(o.span.file), range: toRange(o.span) }));
  });

  connection.onPrepareRename((p) => {
    const a = analysisOf(p.textDocument.uri);
    if (!a) return null;
    const r = rename(ws, a, offsetOf(p.textDocument.uri, p.position), "x", isLibrary);
    if ("error" in r) return null;
    const here = r.edits.find((e) => e.span.file === a.path && e.span.start.offset <= offsetOf(p.textDocument.uri, p.position) && offsetOf(p.textDocument.uri, p.position) <= e.span.end.offset);
    return here ? toRange(here.span) : null;
  });

  connection.onRenameRequest((p) => {
    const a = analysisOf(p.textDocument.uri);
    if (!a) return null;
    const r = rename(ws, a, offsetOf(p.textDocument.uri, p.position), p.newName, isLibrary);
    if ("error" in r) throw new Error(r.error);
    const changes: Record<string, TextEdit[]> = {};
    for (const e of r.edits) (changes[toUri(e.span.file)] ??= []).push(TextEdit.replace(toRange(e.span), e.newText));
    return { changes };
  });

  connection.onDocumentSymbol((p) => {
    const a = analysisOf(p.textDocument.uri);
    const ast = a?.program?.modules.get(a.path)?.ast;
    const kinds: Record<DocSymbol["kind"], SymbolKind> = { import: SymbolKind.Namespace, let: SymbolKind.Constant, fn: SymbolKind.Function, model: SymbolKind.Object, curriculum: SymbolKind.Class, sweep: SymbolKind.Array, field: SymbolKind.Field };
    const conv = (s: DocSymbol): DocumentSymbol => ({ name: s.name, kind: kinds[s.kind], ...(s.detail ? { detail: s.detail } : {}), range: toRange(s.span), selectionRange: toRange(s.selection), children: s.children.map(conv) });
    return ast ? documentSymbols(ast.decls).map(conv) : [];
  });

  connection.languages.semanticTokens.on((p) => {
    const a = analysisOf(p.textDocument.uri);
    const b = new SemanticTokensBuilder();
    if (!a) return b.build();
    for (const t of semanticTokens(a, isLibrary)) {
      if (t.span.start.line !== t.span.end.line) continue;
      b.push(t.span.start.line - 1, t.span.start.column - 1, t.span.end.column - t.span.start.column, TOKEN_TYPES.indexOf(t.type), t.modifiers.reduce((m, x) => m | (1 << TOKEN_MODIFIERS.indexOf(x)), 0));
    }
    return b.build();
  });

  connection.languages.inlayHint.on((p) => {
    const a = analysisOf(p.textDocument.uri);
    if (!a) return [];
    return inlayHints(a)
      .filter((h) => h.line - 1 >= p.range.start.line && h.line - 1 <= p.range.end.line)
      .map((h) => ({ position: { line: h.line - 1, character: h.column - 1 }, label: h.label, kind: InlayHintKind.Type, paddingLeft: true, ...(h.tooltip ? { tooltip: h.tooltip } : {}) }));
  });

  connection.onDocumentFormatting((p) => {
    const doc = documents.get(p.textDocument.uri);
    if (!doc || !hasText(doc) || oversized(doc.getText()) !== undefined) return [];
    const r = format(doc.getText(), toPath(p.textDocument.uri) ?? p.textDocument.uri);
    if (!r.ok || !r.changed) return [];
    return [TextEdit.replace({ start: { line: 0, character: 0 }, end: doc.positionAt(doc.getText().length) }, r.text)];
  });

  connection.onCodeAction((p) => p.context.diagnostics.flatMap((d) => {
    const replacement = (d.data as { replacement?: string } | undefined)?.replacement;
    if (!replacement) return [];
    return [{
      title: `Change to '${replacement}'`, kind: CodeActionKind.QuickFix, diagnostics: [d], isPreferred: true,
      edit: { changes: { [p.textDocument.uri]: [TextEdit.replace(d.range, replacement)] } },
    }];
  }));

  documents.listen(connection);
  connection.listen();
  return connection;
}
