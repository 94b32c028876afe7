/** tcod's version, from package.json (bundled into the CLI at build time). */
import pkg from "../package.json" with { type: "json" };

export const TCOD_VERSION: string = pkg.version;
