#!/usr/bin/env node
// The tcod command in Node.js, on every platform: what bin/tcod (POSIX sh) runs for every command but
// `tcod check` from the start-up snapshot, what bin/tcod.js (the npm bin; on Windows npm's .cmd and
// .ps1 shims run it with node) imports, and what tests and editors start with `node bin/tcod.mjs`.
// `tcod --version` is answered here, from package.json, without loading the CLI.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { readFileSync } = await import("node:fs");
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
} else {
  await import("../dist/tcod.js");
}
