import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "runtime/**/*.test.ts"],
    testTimeout: 180_000, // CLI and worker tests spawn processes; a loaded 2-core machine needs the margin
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup-fast-check.ts"],
  },
});
