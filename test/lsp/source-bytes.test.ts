/**
 * Bytes that are not UTF-8 and the character U+FFFD in the language server: a file it reads from disk
 * is decoded from its bytes, as `tcod check` reads it (such bytes named by TC1008, a U+FFFD the file
 * holds a character); an open buffer arrives decoded by the editor, which cannot tell the two apart,
 * so there every U+FFFD is TC1008, whatever was read from disk before.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render, type CompileResult } from "../../compiler/index.js";
import { Workspace } from "../../lsp/workspace.js";

const shown = (r: CompileResult) => r.diagnostics.map((d) => render(d, (f) => r.sources.get(f)));
const utf8Errors = (r: CompileResult) => r.diagnostics.filter((d) => d.code === "TC1008" || d.code === "TC1003").map((d) => `${d.code} ${d.span.file.split("/").at(-1)}:${d.span.start.line}:${d.span.start.column} ${d.message}`);
const UNNAMED = "Not valid UTF-8: U+FFFD here, the character that bytes which are not UTF-8 are read as.";

function project(bad: Buffer): { dir: string; main: string; lib: string } {
  const dir = mkdtempSync(join(tmpdir(), "tcod-lsp-bytes-"));
  writeFileSync(join(dir, "package.json"), "{}\n");
  const lib = join(dir, "lib.tcod"), main = join(dir, "main.tcod");
  writeFileSync(lib, bad);
  writeFileSync(main, 'import { a } from "./lib"\nlet b = a\n');
  return { dir, main, lib };
}

describe("bytes that are not UTF-8: files from disk and open buffers", () => {
  it("an import read from disk names the byte, as tcod check does; the same text as an open buffer says U+FFFD, whichever was read first (were: both unnamed)", () => {
    const bytes = Buffer.concat([Buffer.from('export let a = "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]);
    const { main, lib } = project(bytes);
    const ws = new Workspace();
    ws.setOpen(main, 'import { a } from "./lib"\nlet b = a\n');
    const fromDisk = ws.analyze(main).result;
    expect(utf8Errors(fromDisk)).toEqual(["TC1008 lib.tcod:1:20 Not valid UTF-8: the byte 0xE9 here."]);
    expect(shown(fromDisk)).toEqual(shown(compileFile(main)));
    // The same text, opened: the editor decoded it, so its U+FFFD is all there is to say.
    ws.setOpen(lib, bytes.toString("utf8"));
    expect(utf8Errors(ws.analyze(lib).result)).toEqual([`TC1008 lib.tcod:1:20 ${UNNAMED}`]);
    expect(utf8Errors(ws.analyze(main).result)).toEqual([`TC1008 lib.tcod:1:20 ${UNNAMED}`]);
    // Closed again: the disk's, named.
    ws.close(lib);
    expect(utf8Errors(ws.analyze(main).result)).toEqual(["TC1008 lib.tcod:1:20 Not valid UTF-8: the byte 0xE9 here."]);
  });

  it("a U+FFFD a file on disk holds is a character in a string or comment (no error, as tcod check says); opened as a buffer it is TC1008, even after the disk's clean parse was kept (were: TC1008 either way)", () => {
    const { main, lib } = project(Buffer.from('export let a = "caf\uFFFD" // \uFFFD\n'));
    const ws = new Workspace();
    ws.setOpen(main, 'import { a } from "./lib"\nlet b = a\n');
    expect(shown(ws.analyze(main).result)).toEqual([]);
    expect(shown(compileFile(main))).toEqual([]);
    // The clean module of the disk is not adopted for the buffer: same text, read otherwise.
    ws.setOpen(lib, 'export let a = "caf\uFFFD" // \uFFFD\n');
    expect(utf8Errors(ws.analyze(main).result)).toEqual([`TC1008 lib.tcod:1:20 ${UNNAMED}`, `TC1008 lib.tcod:1:26 ${UNNAMED}`]);
    expect(utf8Errors(ws.analyze(lib).result)).toHaveLength(2);
    ws.close(lib);
    expect(shown(ws.analyze(main).result)).toEqual([]);
  });

  it("a U+FFFD in code, read from disk, is an invalid character (TC1003) as tcod check says", () => {
    const { main } = project(Buffer.from("export let a\uFFFD = 1\nexport let a = 2\n"));
    const ws = new Workspace();
    const r = ws.analyze(main).result;
    expect(utf8Errors(r)).toEqual(["TC1003 lib.tcod:1:13 Invalid character U+FFFD."]);
    expect(shown(r)).toEqual(shown(compileFile(main)));
  });
});
