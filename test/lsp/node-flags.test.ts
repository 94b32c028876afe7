/**
 * The V8 flags of `tcod lsp` (lsp/node-flags.ts): bin/tcod passes them when it starts the server, and
 * so does the VS Code extension when it starts Node.js itself.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LSP_NODE_FLAGS } from "../../lsp/node-flags.js";

const ROOT = join(import.meta.dirname, "../..");

describe("the language server's V8 flags", () => {
  it("bin/tcod starts `tcod lsp` with them", () => {
    const traced = spawnSync("sh", ["-x", join(ROOT, "bin/tcod"), "lsp", "--help"], { cwd: ROOT, encoding: "utf8" });
    expect(traced.status).toBe(0);
    expect(traced.stderr).toContain(`exec node ${LSP_NODE_FLAGS.join(" ")} ${join(ROOT, "bin")}/tcod.mjs lsp --help`);
    expect(traced.stdout).toContain("lsp");
    // Any other command is started without them.
    const other = spawnSync("sh", ["-x", join(ROOT, "bin/tcod"), "fmt", "--help"], { cwd: ROOT, encoding: "utf8" });
    expect(other.stderr).toContain(`exec node ${join(ROOT, "bin")}/tcod.mjs fmt --help`);
  });

  it("the VS Code extension passes the same list", () => {
    const source = readFileSync(join(ROOT, "editors/vscode/src/extension.ts"), "utf8");
    expect(source).toContain(`const NODE_FLAGS = ${JSON.stringify(LSP_NODE_FLAGS)};`);
    expect(source.match(/args: \[\.\.\.NODE_FLAGS, /g)).toHaveLength(2);
  });
});
