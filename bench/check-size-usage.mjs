// Loaded with `node --import` into the `tcod check` child of bench/check-size.bench.mjs: on exit it
// writes the process's own resource usage (CPU seconds, peak RSS) to $TCOD_USAGE_FILE.
import { writeFileSync } from "node:fs";

const out = process.env.TCOD_USAGE_FILE;
if (out) {
  process.on("exit", () => {
    const u = process.resourceUsage();
    writeFileSync(out, JSON.stringify({ cpu: (u.userCPUTime + u.systemCPUTime) / 1e6, peakMb: u.maxRSS / 1024 }));
  });
}
