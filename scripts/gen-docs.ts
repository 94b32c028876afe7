// Writes docs/stdlib.md, docs/diagnostics.md, docs/plan.schema.json and the Trinity plugin's range
// table (targets/trinity/plugin/tcod_runtime/range_table.py) from the sources.
// Run: npm run docs   (test/docs.test.ts and test/trinity/ranges-parity.test.ts fail when they are stale)
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { diagnosticsReference, stdlibReference } from "../compiler/docs.js";
import { planJsonSchema } from "../plan/schema.js";
import { renderRangeTable } from "../targets/trinity/plugin/range-table.js";

const root = process.cwd();
writeFileSync(join(root, "docs/stdlib.md"), stdlibReference());
writeFileSync(join(root, "docs/diagnostics.md"), diagnosticsReference());
writeFileSync(join(root, "docs/plan.schema.json"), JSON.stringify(planJsonSchema(), null, 2) + "\n");
writeFileSync(join(root, "targets/trinity/plugin/tcod_runtime/range_table.py"), renderRangeTable());
console.log("wrote docs/stdlib.md, docs/diagnostics.md, docs/plan.schema.json, targets/trinity/plugin/tcod_runtime/range_table.py");
