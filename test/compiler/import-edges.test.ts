/**
 * Imports at their edges: a file that imports itself (directly or through a symlink) is one error at
 * the import (TC1110); a cycle closed through a symlink, or entered through one, is an ordinary import
 * cycle (TC1102, its hint); a chain of imports deeper than MAX_IMPORT_DEPTH is TC1111 at the import
 * that goes past it, never the stack running out (TC2022), however deep the chain; a path that runs
 * into a loop of symlinks is TC1109 saying so. An entry file given through a symlink finds its relative
 * imports from the real file's folder (as Node does), not the link's.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { catalogue } from "../../compiler/diagnostics/catalogue.js";
import { compileFile, render } from "../../compiler/index.js";
import { MAX_IMPORT_DEPTH } from "../../compiler/modules.js";

let base: string;

/** A project folder (package.json: its root) with these files; a value `{ link }` is a symlink to it. */
function project(name: string, files: Record<string, string | { link: string }>): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), "{}");
  for (const [f, v] of Object.entries(files)) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    if (typeof v === "string") writeFileSync(join(dir, f), v);
    else symlinkSync(v.link, join(dir, f));
  }
  return dir;
}

function check(file: string) {
  const r = compileFile(file);
  const text = r.diagnostics.map((x) => render(x, (f) => r.sources.get(f))).join("\n\n");
  return { r, text, codes: r.diagnostics.map((x) => x.code) };
}

/** f0 imports f1 imports … f{n}: each file's value reads the next one's. */
function chain(name: string, n: number): string {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`f${i}.tcod`] = `import { v as next } from "./f${i + 1}"\nexport let v = next + 1\n`;
  files[`f${n}.tcod`] = "export let v = 0\n";
  return project(name, files);
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "tcod-import-edges-"));
});

describe("a file that imports itself", () => {
  it("is one TC1110 at the import, with its hint, and not also 'declared twice' (TC1105)", () => {
    const dir = project("self", { "a.tcod": `import { a } from "./a.tcod"\nexport let a = 1\nlet b = a + 1\n` });
    const { codes, text } = check(join(dir, "a.tcod"));
    expect(codes).toEqual(["TC1110"]);
    expect(text).toContain("a.tcod:1:19 error TC1110: 'a.tcod' imports itself ('./a.tcod' is this file).");
    expect(text).toContain(`hint: ${catalogue.TC1110.hint}`);
  });

  it("through a symlink to itself, checked by either name", () => {
    const dir = project("self-link", { "a.tcod": `import { a } from "./link"\nexport let a = 1\n`, "link.tcod": { link: "a.tcod" } });
    expect(check(join(dir, "a.tcod")).codes).toEqual(["TC1110"]);
    // Named through the link, the entry is the same file: the same one error (was TC1102 in a.tcod
    // and a bogus "not exported" TC1106 in link.tcod, as if they were two modules).
    const viaLink = check(join(dir, "link.tcod"));
    expect(viaLink.codes).toEqual(["TC1110"]);
    expect(viaLink.text).toContain("'link.tcod' imports itself ('./link' is this file)");
  });

  it("through a symlinked folder that leads back to its own folder", () => {
    const dir = project("self-dirlink", { "a.tcod": `import { a } from "./d/up/a"\nexport let a = 1\n`, "d/up": { link: ".." } });
    expect(check(join(dir, "a.tcod")).codes).toEqual(["TC1110"]);
    expect(check(join(dir, "d", "up", "a.tcod")).codes).toEqual(["TC1110"]);
  });
});

describe("an import cycle through a symlink", () => {
  const files = {
    "a.tcod": `import { b } from "./b"\nexport let a = 1\n`,
    "b.tcod": `import { a } from "./link"\nexport let b = 1\n`,
    "link.tcod": { link: "a.tcod" },
  };

  it("is TC1102 with the cycle's hint, by real paths", () => {
    const dir = project("cycle-link", files);
    const { codes, text } = check(join(dir, "a.tcod"));
    expect(codes).toEqual(["TC1102"]);
    expect(text).toContain("Import cycle: a.tcod → b.tcod → a.tcod.");
    expect(text).toContain(`hint: ${catalogue.TC1102.hint}`);
  });

  it("entered through the symlink, names the entry as given", () => {
    const dir = project("cycle-link-entry", files);
    const { codes, text } = check(join(dir, "link.tcod"));
    expect(codes).toEqual(["TC1102"]);
    expect(text).toContain("Import cycle: link.tcod → b.tcod → link.tcod.");
    expect(text).toContain(`hint: ${catalogue.TC1102.hint}`);
  });

  it("through a symlinked folder, entered through it", () => {
    const dir = project("cycle-dirlink", {
      "a.tcod": `import { b } from "./b"\nexport let a = 1\n`,
      "b.tcod": `import { a } from "./d/up/a"\nexport let b = 1\n`,
      "d/up": { link: ".." },
    });
    const { codes, text } = check(join(dir, "d", "up", "a.tcod"));
    expect(codes).toEqual(["TC1102"]);
    expect(text).toContain(`hint: ${catalogue.TC1102.hint}`);
  });
});

describe("an import into a loop of symlinks (a → b → a, resolving to no file)", () => {
  it("is TC1109 saying so, not 'cannot find module' with 'check the path' (TC1101)", () => {
    const dir = project("eloop", { "main.tcod": `import { x } from "./loop1/x"\n`, loop1: { link: "loop2" }, loop2: { link: "loop1" } });
    const { codes, text } = check(join(dir, "main.tcod"));
    expect(codes).toEqual(["TC1109"]);
    expect(text).toContain("error TC1109: Cannot read 'loop1/x.tcod': the path has a loop of symbolic links.");
    expect(text).toContain("a loop of symbolic links.");
  });
});

describe("a deep chain of imports", () => {
  it(`up to ${MAX_IMPORT_DEPTH} files deep compiles`, () => {
    const dir = chain("chain-ok", MAX_IMPORT_DEPTH - 1);
    expect(check(join(dir, "f0.tcod")).codes).toEqual([]);
  });

  for (const n of [MAX_IMPORT_DEPTH, 1000, 5000]) {
    it(`${n + 1} files deep is one TC1111 at the import past the limit, with its hint (not TC2022)`, () => {
      const dir = chain(`chain-${n}`, n);
      const { codes, text, r } = check(join(dir, "f0.tcod"));
      expect(codes).toEqual(["TC1111"]);
      const at = MAX_IMPORT_DEPTH - 1;
      expect(r.diagnostics[0]!.span.file).toBe(join(dir, `f${at}.tcod`));
      expect(text).toContain(`error TC1111: Import './f${at + 1}' nests imports more than ${MAX_IMPORT_DEPTH} files deep (f0.tcod → f1.tcod → … → f${at}.tcod → f${at + 1}.tcod).`);
      expect(text).toContain("hint: tcod follows imports at most 100 files deep");
    });
  }
});

describe("an entry file given through a symlink", () => {
  // As Node resolves a main module: relative imports from the real file's folder, not the link's.
  const main = (lib: string) => `import { v } from "./lib"\nlet w = v + ${lib}\n`;

  it("imports relative to the real file, not to the link's folder (which has its own lib.tcod)", () => {
    const real = project("entry-real", { "src/main.tcod": main("0"), "src/lib.tcod": "export let v = 1\n" });
    const links = project("entry-links", { "lib.tcod": "export let other = 2\n", "main.tcod": { link: join(real, "src/main.tcod") } });
    const { codes, text } = check(join(links, "main.tcod"));
    expect(text).toBe("");
    expect(codes).toEqual([]);
  });

  it("in the same project, one folder up: the real file's sibling is found", () => {
    const dir = project("entry-up", { "deep/main.tcod": main("1"), "deep/lib.tcod": "export let v = 1\n", "main.tcod": { link: "deep/main.tcod" } });
    expect(check(join(dir, "main.tcod")).codes).toEqual([]);
  });
});
