/**
 * A taskset `path` that is a directory (the official WebShop/ScienceWorld layout) means what it means
 * to Trinity's reader, `datasets.load_dataset(dir, split=…)` (plan/taskset.ts), and tcod's runtime
 * reads the same rows from it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EnvConfigError } from "../../runtime/envs/env.js";
import { readTaskFile } from "../../runtime/envs/taskfile/index.js";
import { scienceWorldTaskFile } from "../../runtime/envs/scienceworld/index.js";
import { directorySplitFiles, directorySplits, trinitySplit } from "../../plan/taskset.js";

function dir(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), "tcod-taskset-"));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(d, rel, ".."), { recursive: true });
    writeFileSync(join(d, rel), text);
  }
  return d;
}
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

describe("datasets' split resolution of a directory", () => {
  it("the official WebShop layout: train.jsonl, test.jsonl; dataset_dict.json is no data file", () => {
    expect(directorySplits(["dataset_dict.json", "test.jsonl", "train.jsonl"])).toEqual({
      rule: "file_name", splits: { train: ["train.jsonl"], test: ["test.jsonl"] } });
  });

  it("a split keyword must be a word of the file name, followed by a separator", () => {
    // TCOD's ALFWorld data directory: every train* file is the train split, both test files the test split.
    const alf = ["test.jsonl", "test_unseen.jsonl", "train.jsonl", "train_expert.jsonl", "train_hard.jsonl", "fix_game_paths.py"];
    expect(directorySplits(alf).splits).toEqual({
      train: ["train.jsonl", "train_expert.jsonl", "train_hard.jsonl"], test: ["test.jsonl", "test_unseen.jsonl"] });
    expect(directorySplits(["webshop-test.jsonl", "webshop_train.jsonl", "my dev 1.jsonl"]).splits).toEqual({
      train: ["webshop_train.jsonl"], validation: ["my dev 1.jsonl"], test: ["webshop-test.jsonl"] });
    // "pretrain" and "contest" are not the words train and test; "training" and "evaluation" are keywords.
    expect(directorySplits(["pretrain.jsonl", "contest.jsonl"])).toEqual({ rule: "all_train", splits: { train: ["contest.jsonl", "pretrain.jsonl"] } });
    expect(directorySplits(["training.jsonl", "evaluation.jsonl"]).splits).toEqual({ train: ["training.jsonl"], test: ["evaluation.jsonl"] });
  });

  it("sharded files first, then directory names, then file names; hidden files never", () => {
    expect(directorySplits(["data/train-00000-of-00002.jsonl", "data/train-00001-of-00002.jsonl", "test.jsonl"])).toEqual({
      rule: "sharded", splits: { train: ["data/train-00000-of-00002.jsonl", "data/train-00001-of-00002.jsonl"] } });
    expect(directorySplits(["train/a.jsonl", "test/b.jsonl", "train.jsonl"])).toEqual({
      rule: "directory_name", splits: { train: ["train/a.jsonl"], test: ["test/b.jsonl"] } });
    expect(directorySplits([".cache/train.jsonl", "__tmp/test.jsonl", "tasks.jsonl"])).toEqual({ rule: "all_train", splits: { train: ["tasks.jsonl"] } });
  });

  it("a split the directory lacks is an error naming the splits it has", () => {
    const r = directorySplitFiles(["train.jsonl"], "test");
    expect(r).toMatchObject({ error: expect.stringContaining(`no file of the directory is Trinity's "test" split (train: train.jsonl)`) });
    expect(trinitySplit("train")).toBe("train");
    expect(["valid_seen", "valid_unseen", "hard", "dev", "test"].map(trinitySplit)).toEqual(["test", "test", "test", "test", "test"]);
  });
});

describe("the runtime reads a directory taskset as Trinity does", () => {
  const d = dir({
    "train.jsonl": jsonl([{ task_id: 0, target: "" }, { task_id: 1, target: "", actions: ["search[red shoes]"] }]),
    "test.jsonl": jsonl([{ task_id: 4096, target: "" }]),
    "dataset_dict.json": JSON.stringify({ citation: "", description: "Custom dataset", splits: { train: { name: "train", num_examples: 2 } } }),
  });

  it("train reads train.jsonl; any evaluation split reads test.jsonl", () => {
    expect(readTaskFile(d, "webshop", "train").map((r) => [r.taskId, r.actions])).toEqual([[0, undefined], [1, ["search[red shoes]"]]]);
    expect(readTaskFile(d, "webshop", "train")[0]!.file).toBe(join(d, "train.jsonl"));
    expect(readTaskFile(d, "webshop", "test").map((r) => r.taskId)).toEqual([4096]);
    expect(readTaskFile(d, "webshop", "valid_seen").map((r) => r.taskId)).toEqual([4096]);
  });

  it("a bad row names its file and line; a directory without the split is a coded env error", () => {
    const bad = dir({ "train.jsonl": '{"task_id": 1}\nnot json\n' });
    expect(() => readTaskFile(bad, "webshop", "train")).toThrow(/train\.jsonl:2:2 is not valid JSON/);
    expect(() => readTaskFile(bad, "webshop", "test")).toThrow(EnvConfigError);
    expect(() => readTaskFile(bad, "webshop", "test")).toThrow(/task directory .*: no file of the directory is Trinity's "test" split/);
  });

  it("ScienceWorld's official layout (task_desc JSON, the script's \"targe\" key)", () => {
    const row = (name: string, v: number) => ({ task_desc: JSON.stringify({ task_name: name, var_num: v, jar_path: "" }), targe: "" });
    const sw = dir({ "train.jsonl": jsonl([row("boil", 0), row("melt", 1)]), "test.jsonl": jsonl([row("freeze", 3)]) });
    expect(scienceWorldTaskFile(sw, "train").tasks.map((t) => t.id)).toEqual(["boil:0", "melt:1"]);
    expect(scienceWorldTaskFile(sw, "test").tasks.map((t) => t.id)).toEqual(["freeze:3"]);
  });
});
