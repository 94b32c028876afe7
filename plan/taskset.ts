/**
 * What a Trinity-RFT taskset `path` means, as pure functions shared by tcod's runtime (which reads
 * the tasks of an env's `task_file`) and the Trinity export/import (which write and read `path` and
 * `split`), so that `tcod run` and Trinity read the same rows.
 *
 * Trinity's task reader (agentscope-ai/Trinity-RFT trinity/buffer/reader/file_reader.py,
 * `TaskFileReader`; the TCOD fork reads tasksets the same way) calls Hugging Face
 * `datasets.load_dataset(path, split=split)`:
 * - a file path is that file (JSONL for TCOD's tasksets);
 * - a directory path (the official WebShop and ScienceWorld layout: `webshop_data/` with
 *   `train.jsonl`, `test.jsonl` and a `dataset_dict.json`, written by their get_*_data.py) is
 *   resolved by `datasets`' data-file patterns (huggingface/datasets src/datasets/data_files.py):
 *   1. sharded files `data/<split>-NNNNN-of-NNNNN*.*` name their split;
 *   2. else files under a directory whose name contains a split keyword as a word (`train/…`,
 *      `my-test/…`);
 *   3. else files whose name contains a split keyword followed by a separator (`train.jsonl`,
 *      `train_expert.jsonl`, `webshop-test.jsonl`);
 *   4. else every file is the `train` split.
 *   Keywords: train = train, training; validation = validation, valid, dev, val; test = test,
 *   testing, eval, evaluation; a separator is one of `-._ ` or a digit. The first rule that finds
 *   any file decides; every file of the split is read, in order, as one taskset. Hidden files
 *   (a path part starting with `.` or `__`) are never data files. So `dataset_dict.json` is not
 *   read, and a directory holding `test.jsonl` and `test_unseen.jsonl` reads both as `test`.
 *
 * A tcod env split maps to Trinity's split as the export writes it: `train` → `train`, any other
 * split (valid_seen, dev, test…) → `test`.
 */

export type DatasetSplit = "train" | "validation" | "test";

const SPLIT_KEYWORDS: Record<DatasetSplit, readonly string[]> = {
  train: ["train", "training"],
  validation: ["validation", "valid", "dev", "val"],
  test: ["test", "testing", "eval", "evaluation"],
};
const SPLITS: readonly DatasetSplit[] = ["train", "validation", "test"];
const SEP = "[-._ 0-9]";

/** Trinity's taskset `split` for a tcod env split (what `tcod export trinity` writes). */
export function trinitySplit(envSplit: string): "train" | "test" {
  return envSplit === "train" ? "train" : "test";
}

export interface DirectorySplits {
  /** Which rule decided (1–4 above). */
  rule: "sharded" | "directory_name" | "file_name" | "all_train";
  /** Files per split, relative paths with `/`, in reading order. */
  splits: Record<string, string[]>;
}

function visible(rel: string): boolean {
  return !rel.split("/").some((p) => p.startsWith(".") || p.startsWith("__"));
}

/** Splits of a directory taskset, given the relative paths of every file under it. */
export function directorySplits(files: readonly string[]): DirectorySplits {
  const rels = files.map((f) => f.replace(/\\/g, "/")).filter(visible).sort();
  // 1. data/<split>-00000-of-00001*.*
  const sharded: Record<string, string[]> = {};
  for (const f of rels) {
    const m = /^data\/([^/]+?)-\d{5}-of-\d{5}[^/]*\.[^/]*$/.exec(f);
    if (m) (sharded[m[1]!] ??= []).push(f);
  }
  if (Object.keys(sharded).length > 0) return { rule: "sharded", splits: sharded };
  // 2. a directory part naming the split; 3. the file name naming it.
  const byRule = (test: (dirs: string[], name: string, kw: string) => boolean): Record<string, string[]> => {
    const out: Record<string, string[]> = {};
    for (const split of SPLITS) {
      const got: string[] = [];
      for (const kw of SPLIT_KEYWORDS[split]) {
        for (const f of rels) {
          const parts = f.split("/");
          const name = parts.pop()!;
          if (test(parts, name, kw) && !got.includes(f)) got.push(f);
        }
      }
      if (got.length > 0) out[split] = got;
    }
    return out;
  };
  const dirWord = (kw: string) => new RegExp(`^(?:.*${SEP})?${kw}(?:${SEP}.*)?$`);
  const fileWord = (kw: string) => new RegExp(`^(?:.*${SEP})?${kw}${SEP}.*$`);
  const inDir = byRule((dirs, _name, kw) => dirs.some((d) => dirWord(kw).test(d)));
  if (Object.keys(inDir).length > 0) return { rule: "directory_name", splits: inDir };
  const inName = byRule((_dirs, name, kw) => fileWord(kw).test(name));
  if (Object.keys(inName).length > 0) return { rule: "file_name", splits: inName };
  return { rule: "all_train", splits: rels.length > 0 ? { train: rels } : {} };
}

/** The files of a directory taskset Trinity reads for `split`, or an error message. */
export function directorySplitFiles(files: readonly string[], split: string): { files: string[] } | { error: string; hint: string } {
  const found = directorySplits(files);
  const got = found.splits[split];
  if (got && got.length > 0) return { files: got };
  const have = Object.entries(found.splits).map(([s, fs]) => `${s}: ${fs.join(", ")}`);
  return {
    error: `no file of the directory is Trinity's "${split}" split (${have.length ? have.join("; ") : "it holds no data file"})`,
    hint: `Trinity reads the directory with datasets.load_dataset(path, split="${split}"): name the file ${split}.jsonl (or put it under ${split}/), or give the file's own path as task_file`,
  };
}
