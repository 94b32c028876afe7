/**
 * The model config a `.tcod` names for the tcod worker (`model m { path: "cfg.json" serve: worker(…, start: true) }`),
 * hostile: a missing file, not JSON, sizes that do not divide, a folder that is no Hugging Face model.
 * The worker refuses each before it imports torch (worker/tcod_worker/model_config.py) with one JSON
 * line, and `tcod run` reports it as TC7004 at the file and line, with the worker's hint: never a
 * Python traceback, never a wait for a worker that will not listen.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workerRefusal } from "../../runtime/backends/openai/worker-process.js";
import { expectUserError } from "../helpers/cli.js";
import { freePort } from "../helpers/ports.js";
import { tcodRunOnCpu, workerMissing } from "../helpers/worker.js";


describe("workerRefusal: the worker's --error-format json line", () => {
  it("is a TC7004 at the file and line it names, with its hint; other output is none", () => {
    const e = workerRefusal(`some warning\n{"tcod_worker_error": {"message": "model config c.json: bad", "hint": "Fix it.", "file": "c.json", "line": 3, "column": 5}}\n`);
    expect(e?.code).toBe("TC7004");
    expect(e?.problems()).toEqual([{ message: "model config c.json: bad", hint: "Fix it.", where: { file: "c.json", line: 3, column: 5 } }]);
    expect(workerRefusal('{"tcod_worker_error": {"message": "no file"}}')?.problems()).toEqual([{ message: "no file" }]);
    for (const other of ["Traceback (most recent call last):\n  ...", '{"tcod_worker_error": 3}', '{"tcod_worker_error": {"message": ', ""]) {
      expect(workerRefusal(other)).toBeUndefined();
    }
  });
});

const missing = workerMissing("the model-config test");

describe.skipIf(missing !== undefined)("tcod run with a hostile worker model config", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-model-config-"));
  writeFileSync(join(dir, "package.json"), "{}");
  mkdirSync(join(dir, "not-a-model"));
  const tcod = (cfg: string, port: number) => tcodRunOnCpu(dir, ["m.tcod", "--set", `cfg="${cfg}"`, "--set", `url="http://127.0.0.1:${port}"`, "--out", join(dir, `run-${port}`), "-q"], 120_000);
  writeFileSync(join(dir, "m.tcod"), `import { sft } from "std/loss"
import { texthouse } from "std/envs"
import { raw_format } from "std/agent"
let cfg = "cfg.json"
let url = "http://127.0.0.1:8100"
model m { path: cfg serve: worker(url, start: true) }
curriculum c {
  teacher: m
  student: m
  env: texthouse(split: "train", agent: raw_format(memory: "accumulate"), grammar: "move")
  steps: 1
  batch: 1 tasks × 0 rollouts
  loss: sft(coef: 1)
}
`);

  it.each([
    ["a missing file", "none.json", undefined, "none.json", "model config none.json: no such file", "relative to the folder"],
    ["not JSON", "broken.json", '{"arch": "qwen2",\n  "hidden_size": 256,\n', "broken.json:3:1", "model config broken.json is not JSON", "one JSON object"],
    ["heads that do not divide hidden_size", "heads.json", '{\n  "hidden_size": 256,\n  "num_attention_heads": 3\n}\n', "heads.json:3:3",
      "num_attention_heads 3 does not divide hidden_size 256", "e.g. 8, 16, 32, 64"],
    ["a float size", "float.json", '{"hidden_size": 256.5}', "float.json:1:2", "hidden_size must be a whole number from 1 to 65,536, got 256.5", "without a decimal point"],
    ["an unknown key", "typo.json", '{"hidden_size": 256,\n "num_layers": 2}', "typo.json:2:2", "unknown key 'num_layers'", "Remove it or correct its name"],
    ["a folder that is no Hugging Face model", "not-a-model", undefined, "not-a-model", "the folder holds no config.json", "holds config.json and the weights"],
  ])("%s: TC7004 at the file, with a hint, before the worker loads anything", async (_name, cfg, text, at, message, hint) => {
    if (text !== undefined) writeFileSync(join(dir, cfg), text);
    const t0 = Date.now();
    const r = tcod(cfg, await freePort());
    expectUserError(r, "TC7004", { at, message, hint });
    expect(r.stderr).not.toContain("Traceback");
    // Refused before torch is imported: well under the worker's start-up wait.
    expect(Date.now() - t0).toBeLessThan(60_000);
  }, 120_000);
});
