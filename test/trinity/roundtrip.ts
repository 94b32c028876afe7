/** Import a Trinity config, write the .tcod to a temp dir and compile it (shared by the tests). */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileFile, render } from "../../compiler/index.js";
import { importTrinity, resolvedConfig } from "../../targets/trinity/import.js";

export function roundTrip(path: string) {
  const text = readFileSync(path, "utf8");
  const imported = importTrinity(text, path);
  const dir = mkdtempSync(join(tmpdir(), "tcod-trinity-"));
  const file = join(dir, `${imported.curriculum}.tcod`);
  writeFileSync(file, imported.source);
  const compiled = compileFile(file);
  const errors = compiled.diagnostics.filter((d) => d.severity === "error").map((d) => render(d, (f) => compiled.sources.get(f)));
  return { imported, compiled, errors, original: resolvedConfig(text, path) };
}

