/**
 * What `worker(url, start: true)` starts: the worker tcod ships (found from the package, never from
 * the current directory), or the python the user named in $TCOD_PYTHON; never on a non-loopback host
 * without a token.
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { BackendError } from "../../runtime/backends/backend.js";
import { defaultWorkerPython, isLoopbackHost, packageWorkerDir, startWorkerForSpec } from "../../runtime/backends/openai/worker-process.js";

const ROOT = resolve(import.meta.dirname, "../..");

describe("starting a worker", () => {
  it("finds the shipped worker from the module's location, whatever the current directory", () => {
    expect(packageWorkerDir()).toBe(join(ROOT, "worker"));
    expect(packageWorkerDir(join(ROOT, "dist", "chunks"))).toBe(join(ROOT, "worker"));
    expect(() => packageWorkerDir("/")).toThrow(BackendError);
  });

  it("runs $TCOD_PYTHON when set, else the venv beside the shipped worker, else python3 — never ./worker/.venv of the cwd", () => {
    const saved = process.env.TCOD_PYTHON;
    try {
      process.env.TCOD_PYTHON = "/opt/my/python";
      expect(defaultWorkerPython()).toBe("/opt/my/python");
      delete process.env.TCOD_PYTHON;
      const py = defaultWorkerPython();
      expect(py === "python3" || py === join(ROOT, "worker", ".venv", "bin", "python")).toBe(true);
      expect(defaultWorkerPython("/nonexistent/worker")).toBe("python3");
    } finally {
      if (saved === undefined) delete process.env.TCOD_PYTHON; else process.env.TCOD_PYTHON = saved;
    }
  });

  it("knows loopback hosts", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "[::1]", "::1"]) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ["0.0.0.0", "10.0.0.5", "[::]", "example.com", "128.0.0.1", "::ffff:7f00:1"]) expect(isLoopbackHost(h)).toBe(false);
  });

  it("refuses a non-loopback host without a token, before starting anything", () => {
    for (const url of ["http://0.0.0.0:8100", "http://10.1.2.3:8100", "http://[::]:8100"]) {
      const start = () => startWorkerForSpec({ url }, { student: "config:tiny", python: "/nonexistent/python" });
      expect(start).toThrow(BackendError);
      expect(start).toThrow(/refusing to start a worker on .* without a token/);
    }
  });

  it("refuses a tokenEnv that names an unset variable", () => {
    delete process.env.TCOD_TEST_UNSET_TOKEN;
    expect(() => startWorkerForSpec({ url: "http://0.0.0.0:8100", tokenEnv: "TCOD_TEST_UNSET_TOKEN" }, { student: "config:tiny", python: "/nonexistent/python" }))
      .toThrow(/TCOD_TEST_UNSET_TOKEN.*is not set/);
  });
});
