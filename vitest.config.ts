import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "runtime/**/*.test.ts"],
    testTimeout: 180_000, // CLI and worker tests spawn processes; a loaded 2-core machine needs the margin
    hookTimeout: 120_000,
    pool: "forks",
    // Two files at a time: on CI's 2-core machine vitest's default is one (cores − 1), and most of the
    // slow files wait on a child process (a JVM, a Python worker, a run) rather than on their own core.
    maxWorkers: 2,
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup-fast-check.ts"],
  },
});
