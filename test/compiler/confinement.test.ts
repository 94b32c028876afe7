/**
 * Module confinement: an import reaches only the project root, the stdlib, or the node_modules folder
 * a package was found in — through symlinks, `..` in `std/` and package specifiers, and paths that
 * merely contain `/node_modules/` alike — and no error shows the content of a file outside the root.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compileFile, render } from "../../compiler/index.js";

const SECRET = "TOP-SECRET-CONTENT line that must never be printed";
let base: string;
let proj: string;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "tcod-confine-"));
  proj = join(base, "proj");
  mkdirSync(join(proj, "lib"), { recursive: true });
  writeFileSync(join(proj, "package.json"), "{}");
  // Outside the root: a .tcod file that would parse (so its exports would be listed), and a text file.
  mkdirSync(join(base, "outside", "node_modules", "evil"), { recursive: true });
  writeFileSync(join(base, "outside", "secret.tcod"), `export let leaked = 1\n${SECRET}\n`);
  writeFileSync(join(base, "outside", "node_modules", "evil", "x.tcod"), `${SECRET}\n`);
  writeFileSync(join(base, "secret.txt"), `${SECRET}\n`);
  symlinkSync(join(base, "secret.txt"), join(proj, "linked.tcod"));
  symlinkSync(join(base, "outside"), join(proj, "dirlink"));
  writeFileSync(join(proj, "lib", "ok.tcod"), "export let fine = 2\n");
  // A package whose relative import climbs out of node_modules.
  mkdirSync(join(proj, "node_modules", "pkg"), { recursive: true });
  writeFileSync(join(proj, "node_modules", "pkg", "climb.tcod"), `import { leaked } from "../../../outside/secret"\nexport let y = leaked\n`);
  writeFileSync(join(proj, "node_modules", "pkg", "good.tcod"), `import { z } from "./inner"\nexport let g = z\n`);
  writeFileSync(join(proj, "node_modules", "pkg", "inner.tcod"), "export let z = 3\n");
  symlinkSync(join(base, "outside", "secret.tcod"), join(proj, "node_modules", "pkg", "sym.tcod"));
});

function check(importLine: string) {
  const file = join(proj, "main.tcod");
  writeFileSync(file, importLine + "\n");
  const r = compileFile(file);
  const text = r.diagnostics.map((x) => render(x, (f) => r.sources.get(f))).join("\n");
  return { r, text, codes: r.diagnostics.map((x) => x.code) };
}

describe("module confinement", () => {
  const escapes: [string, string][] = [
    ["a symlinked file", `import { leaked } from "./linked.tcod"`],
    ["a symlinked folder", `import { leaked } from "./dirlink/secret"`],
    ["std/ with ..", `import { leaked } from "std/../../../../../../../../../..${"/tmp"}/x"`],
    ["std/ with .. to a real file", `import { leaked } from "std/${"../".repeat(30)}${"BASE"}/outside/secret"`],
    ["a package specifier with ..", `import { leaked } from "pkg/../../../outside/secret"`],
    ["a relative path through another folder's node_modules", `import { leaked } from "../outside/node_modules/evil/x"`],
    ["a package's relative import that leaves node_modules", `import { y } from "pkg/climb"`],
    ["a symlink inside node_modules", `import { leaked } from "pkg/sym"`],
  ];
  for (const [what, line] of escapes) {
    it(`refuses ${what} (TC1104) and prints nothing of the file`, () => {
      const { r, text, codes } = check(line.replace("BASE", base.slice(1)));
      expect(r.ok).toBe(false);
      expect(codes).toContain("TC1104");
      expect(text).not.toContain("TOP-SECRET");
      expect(text).not.toContain("leaked = 1");
      // Nothing outside the root was read: no source of it is kept for rendering.
      for (const f of r.sources.keys()) expect(f.startsWith(join(base, "outside")) || f === join(base, "secret.txt")).toBe(false);
    });
  }

  it("still loads files in the root, the stdlib and a package (with its own relative imports)", () => {
    const { r, text } = check(`import { fine } from "./lib/ok"\nimport { g } from "pkg/good"\nimport { opd } from "std/loss"\nlet a = fine + g`);
    expect(text).toBe("");
    expect(r.ok).toBe(true);
  });
});
