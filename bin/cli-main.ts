/** The entry of the CLI bundle (dist/tcod.js, started by bin/tcod.mjs). */
import { main } from "./cli.js";
import { COMMANDS } from "./commands/index.js";
import { buildSnapshotLater } from "./snapshot-cache.js";

buildSnapshotLater(process.argv);
await main(process.argv, COMMANDS);
