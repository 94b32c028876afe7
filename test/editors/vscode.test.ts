/**
 * The VS Code extension: its TextMate grammar, run by vscode-textmate with the Oniguruma engine VS
 * Code uses, colours every example as a reader expects; its language configuration is valid JSON
 * with the comment and bracket pairs of the language; the .vsix builds (offline) with @vscode/vsce.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadWASM, OnigScanner, OnigString } from "vscode-oniguruma";
import { INITIAL, parseRawGrammar, Registry, type IGrammar } from "vscode-textmate";

const ROOT = join(import.meta.dirname, "../..");
const EXT = join(ROOT, "editors/vscode");

function tcodFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tcodFiles(p) : n.endsWith(".tcod") ? [p] : [];
  });
}

async function grammar(): Promise<IGrammar> {
  await loadWASM(readFileSync(join(ROOT, "node_modules/vscode-oniguruma/release/onig.wasm")).buffer as ArrayBuffer);
  const registry = new Registry({
    onigLib: Promise.resolve({ createOnigScanner: (p: string[]) => new OnigScanner(p), createOnigString: (s: string) => new OnigString(s) }),
    loadGrammar: async (scope) => (scope === "source.tcod" ? parseRawGrammar(readFileSync(join(EXT, "syntaxes/tcod.tmLanguage.json"), "utf8"), "tcod.tmLanguage.json") : null),
  });
  return (await registry.loadGrammar("source.tcod"))!;
}

/** Every token of a text: its text and innermost scope. */
function tokens(g: IGrammar, text: string): { text: string; scope: string }[] {
  let state = INITIAL;
  const out: { text: string; scope: string }[] = [];
  for (const line of text.split("\n")) {
    const r = g.tokenizeLine(line, state);
    for (const t of r.tokens) out.push({ text: line.slice(t.startIndex, t.endIndex), scope: t.scopes.at(-1)! });
    state = r.ruleStack;
  }
  return out;
}

describe("the TextMate grammar", () => {
  it("colours every example: keywords, declared names, comments, strings, numbers and units; nothing invalid", async () => {
    const g = await grammar();
    const files = tcodFiles(join(ROOT, "examples"));
    expect(files.length).toBeGreaterThan(15);
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      const ts = tokens(g, text);
      const scopeOf = (s: string) => ts.filter((t) => t.text.trim() === s).map((t) => t.scope);
      expect(ts.filter((t) => t.scope.startsWith("invalid")), f).toEqual([]);
      if (text.includes("curriculum ")) expect(scopeOf("curriculum"), f).toContain("storage.type.tcod");
      if (text.includes("import ")) expect(scopeOf("import"), f).toContain("keyword.control.import.tcod");
      // Every comment line is a comment from its `//` to the end.
      for (const line of text.split("\n").filter((l) => l.trimStart().startsWith("//"))) {
        const lt = tokens(g, line);
        expect(lt.every((t) => t.scope.startsWith("comment") || t.text.trim() === ""), `${f}: ${line}`).toBe(true);
      }
      // Strings outside comments are strings.
      for (const line of text.split("\n")) {
        for (const m of line.matchAll(/"(?:[^"\\]|\\.)*"/g)) {
          if (line.slice(0, m.index).includes("//") || m[0] === '""') continue;
          expect(ts.some((t) => t.text === m[0].slice(1, -1) && t.scope === "string.quoted.double.tcod"), `${f}: ${m[0]}`).toBe(true);
        }
      }
    }
  });

  it("gives units, doc comments, fields and parameters their scopes", async () => {
    const g = await grammar();
    const ts = tokens(g, `/// The horizon.\nexport fn f(every: steps) : turns = min(1 turn + floor(step / every) * 1 turn, 30 turns)\ncurriculum c {\n  batch: 16 tasks × 4 rollouts  // note\n  lr: 1e-6\n  s: "a\\q"\n}`);
    const scope = (text: string) => ts.find((t) => t.text === text)?.scope;
    expect(scope("/// The horizon.")).toBe("comment.line.documentation.tcod");
    expect(scope("f")).toBe("entity.name.function.tcod");
    expect(scope("turn")).toBe("keyword.other.unit.tcod");
    expect(scope("tasks")).toBe("keyword.other.unit.tcod");
    expect(scope("16")).toBe("constant.numeric.tcod");
    expect(scope("1e-6")).toBe("constant.numeric.tcod");
    expect(scope("batch")).toBe("variable.other.property.tcod");
    expect(scope("step")).toBe("variable.language.tcod");
    expect(scope("min")).toBe("entity.name.function.call.tcod");
    expect(scope("// note")).toBe("comment.line.double-slash.tcod");
    expect(scope("\\q")).toBe("invalid.illegal.escape.tcod");
  });
});

describe("the extension package", () => {
  it("declares the language, its configuration and grammar", () => {
    const pkg = JSON.parse(readFileSync(join(EXT, "package.json"), "utf8")) as { contributes: { languages: { id: string; extensions: string[] }[]; grammars: { path: string }[] }; dependencies: Record<string, string> };
    expect(pkg.contributes.languages[0]).toMatchObject({ id: "tcod", extensions: [".tcod"] });
    expect(existsSync(join(EXT, pkg.contributes.grammars[0]!.path))).toBe(true);
    const conf = JSON.parse(readFileSync(join(EXT, "language-configuration.json"), "utf8")) as { comments: { lineComment: string; blockComment: string[] } };
    expect(conf.comments).toEqual({ lineComment: "//", blockComment: ["/*", "*/"] });
    for (const v of Object.values(pkg.dependencies)) expect(v).toMatch(/^\d+\.\d+\.\d+$/);
  });

  const installed = existsSync(join(EXT, "node_modules/@vscode/vsce"));
  it.runIf(installed || !!process.env.CI)("builds the .vsix with @vscode/vsce (no network needed)", () => {
    if (!installed) throw new Error("CI must install editors/vscode (npm ci --prefix editors/vscode) to build the .vsix");
    rmSync(join(EXT, "tcod.vsix"), { force: true });
    const r = spawnSync("npm", ["run", "package"], { cwd: EXT, encoding: "utf8" });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    const zip = readFileSync(join(EXT, "tcod.vsix"));
    for (const name of ["extension/package.json", "extension/dist/extension.js", "extension/syntaxes/tcod.tmLanguage.json", "extension/language-configuration.json"]) {
      expect(zip.includes(Buffer.from(name)), name).toBe(true);
    }
  }, 120_000);
});
