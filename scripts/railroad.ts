/**
 * Writes docs/grammar.html: railroad (syntax) diagrams of the tcod grammar, from the productions
 * Chevrotain recorded. Regenerate after any change to grammar/parser.ts (no npm script needed):
 *
 *   npx esbuild scripts/railroad.ts --bundle --platform=node --format=esm --outfile=dist/railroad.mjs && node dist/railroad.mjs
 *
 * Chevrotain's page loads its renderer from unpkg; we inline those files from node_modules so the
 * page works offline. test/grammar/railroad.test.ts fails when the committed page is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createSyntaxDiagramsCode } from "chevrotain";
import { tcodParser } from "../grammar/parser.js";

// Both scripts/ and dist/ sit one level below the repository root.
const root = new URL("../", import.meta.url);
const diagramsDir = new URL("node_modules/chevrotain/diagrams/", root);
const out = new URL("docs/grammar.html", root);

const cdn = /https:\/\/unpkg\.com\/chevrotain@[^/]+\/diagrams\/([\w/.-]+)/;
const inlined = createSyntaxDiagramsCode(tcodParser().getSerializedGastProductions())
  .replace(new RegExp(`<link rel='stylesheet' href='${cdn.source}'>`), (_, path: string) =>
    `<style>\n${readFileSync(new URL(path, diagramsDir), "utf8")}\n</style>`)
  .replace(new RegExp(`<script src='${cdn.source}'></script>`, "g"), (_, path: string) =>
    `<script>\n${readFileSync(new URL(path, diagramsDir), "utf8").replace(/<\/script/gi, "<\\/script")}\n</script>`);

if (cdn.test(inlined)) throw new Error("docs/grammar.html would still load files from unpkg; update scripts/railroad.ts");
writeFileSync(out, inlined.replace('<meta charset="utf-8">', '<meta charset="utf-8">\n<title>tcod grammar</title>'));
console.log(`wrote ${out.pathname}`);
