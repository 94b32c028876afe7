/**
 * A worker model whose context (max_position_embeddings of its config) is shorter than what the run
 * sends is refused at start — after the probe, once the envs are open, before step 1 — as TC7004
 * naming the model, its context, the first prompt's length and what to change; an episode that may
 * outgrow it (memory "accumulate" over max_turns) is a warning with the estimate. Before, the first
 * was a 400 from /forward_backward after step 1's rollouts. A teacher served beside the student
 * (`--teacher`) is held to its own config's positions, not the student's. CPU worker, one tiny step at most.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectUserError } from "../helpers/cli.js";
import { freePort } from "../helpers/ports.js";
import { tcodRunOnCpu, workerMissing } from "../helpers/worker.js";

const missing = workerMissing("the context-length test");

describe.skipIf(missing !== undefined)("tcod run against a worker model of few positions", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-context-"));
  writeFileSync(join(dir, "package.json"), "{}");
  writeFileSync(join(dir, "short.json"), '{"max_position_embeddings": 40}\n');
  writeFileSync(join(dir, "mid.json"), '{"max_position_embeddings": 400}\n');
  writeFileSync(join(dir, "m.tcod"), `import { opd } from "std/loss"
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
  max_turns: 4 turns
  batch: 1 tasks × 1 rollouts
  loss: opd(coef: 1)
}
`);
  const tcod = async (cfg: string) => tcodRunOnCpu(dir, ["m.tcod", "--set", `cfg="${cfg}"`,
    "--set", `url="http://127.0.0.1:${await freePort()}"`, "--out", join(dir, `run-${cfg}`), "-q"], 300_000);

  it("a first prompt longer than the model's positions: TC7004 before step 1, naming the model, both lengths and what to change", async () => {
    const r = await tcod("short.json");
    expect(r.stderr).toContain("context 40 tokens"); // the probe line
    expectUserError(r, "TC7004", {
      message: /^the student model 'short\.json' reads at most 40 tokens \(max_position_embeddings of the worker's model config\), but the first prompt of task '[^']+' \(texthouse, split "train", agent 'raw'\) has \d+ tokens and a reply may add 16 more \(max_response_tokens\): \d+ > 40$/,
      hint: "Give the model more positions (max_position_embeddings in a worker's model config",
    });
    expect(r.stderr).not.toContain("/forward_backward");
  }, 300_000);

  it("a teacher beside the student (--teacher) with fewer positions than the student: TC7004 naming the teacher and its own context (it was read as the student's)", async () => {
    writeFileSync(join(dir, "two.tcod"), `import { opd } from "std/loss"
import { texthouse } from "std/envs"
import { raw_format } from "std/agent"
let url = "http://127.0.0.1:8100"
model s { path: "mid.json" serve: worker(url, start: true) }
model t { path: "short.json" serve: worker(url, start: true) }
curriculum c {
  teacher: t
  student: s
  env: texthouse(split: "train", agent: raw_format(memory: "accumulate"), grammar: "move")
  steps: 1
  max_turns: 4 turns
  batch: 1 tasks × 1 rollouts
  loss: opd(coef: 1)
}
`);
    const r = tcodRunOnCpu(dir, ["two.tcod", "--set", `url="http://127.0.0.1:${await freePort()}"`, "--out", join(dir, "run-two"), "-q"], 300_000);
    expect(r.stderr).toContain("--model mid.json --teacher short.json");
    expectUserError(r, "TC7004", {
      message: /^the teacher model 'short\.json' reads at most 40 tokens \(max_position_embeddings of the worker's teacher config \(--teacher\)\), but the first prompt of task '[^']+' .* has \d+ tokens and a reply may add 16 more \(max_response_tokens\): \d+ > 40$/,
      hint: "Give the model more positions",
    });
    expect(r.stderr).not.toContain("/forward_backward");
  }, 300_000);

  it("an episode that may outgrow the context: a warning with the estimate, and the run goes on", async () => {
    const r = await tcod("mid.json");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning TC7004: the student model 'mid\.json' reads at most 400 tokens \(.*\), but a whole episode may reach about \d+: 4 turns kept in memory \("accumulate"\)/);
    expect(r.stderr).toContain("a shorter agent memory (memory: window), or fewer max_turns");
  }, 300_000);
});
