#!/usr/bin/env python3
"""Runs a generated Trinity plugin inside Trinity-RFT's own classes (for tcod's tests).

Needs Trinity-RFT (test/trinity/ci-install.sh) and torch. Reads a JSON request on stdin, prints
JSON results on stdout.

  trinity_classes.py split PLUGIN_DIR
      request: {"step": int, "train_batch_sizes": [int], "seed": int,
                "rows": [{"task": int, "run": int, "turn": int, "reward": float,
                          "logp_student": [...], "logp_teacher": [...], "mask": [...]}]}
      Imports the plugin (its modules register into Trinity's EXPERIENCE_OPERATORS and
      ADVANTAGE_FN registries), builds one trinity.common.experience.Experience per row, runs the
      registered experience operator on every experience of the step (the explorer's experience
      pipeline), then hands the registered advantage function the experiences in train batches of
      `train_batch_size`, cut from a seeded shuffle of the step (the buffer delivers experiences in
      completion order, so a train batch holds fragments of groups and episodes), each as the
      trainer's batch (padded `advantages`, `response_mask`, `old_log_probs`, teacher logprobs and
      `unique_ids`, as trinity/trainer/verl/utils.py `to_data_proto` builds it).
      Prints one {"advantages": [[...] per row, in request order], "fragment_advantages": [...]}
      per train batch size, the latter computed the old way (the whole formula on each train batch
      alone), for contrast.
"""
import importlib.util
import json
import os
import random
import sys

import torch
from trinity.algorithm.advantage_fn import ADVANTAGE_FN
from trinity.buffer.operators import EXPERIENCE_OPERATORS
from trinity.common.experience import EID, Experience


class TrainBatch:
    """The two attributes of verl's DataProto an advantage function reads."""

    def __init__(self, batch, non_tensor_batch):
        self.batch = batch
        self.non_tensor_batch = non_tensor_batch


def load_plugin(plugin_dir):
    """Imports the plugin's advantage module as Trinity's --plugin-dir loader does (by file)."""
    sys.path.insert(0, plugin_dir)
    path = os.path.join(plugin_dir, "tcod_advantage.py")
    spec = importlib.util.spec_from_file_location("tcod_advantage", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    with open(os.path.join(plugin_dir, "tcod_runtime", "spec.json"), encoding="utf-8") as f:
        return json.load(f)


def experiences(req):
    exps = []
    for r in req["rows"]:
        n = len(r["mask"])
        prompt = [7, 8, 9]
        e = Experience(
            eid=EID(batch=req["step"], task=r["task"], run=r["run"], step=r["turn"]),
            tokens=torch.tensor(prompt + list(range(100, 100 + n))), prompt_length=len(prompt),
            logprobs=torch.tensor(r["logp_student"], dtype=torch.float32), reward=float(r["reward"]),
            teacher_logprobs=torch.tensor(r["logp_teacher"], dtype=torch.float32),
            action_mask=torch.tensor([bool(m) for m in r["mask"]]),
        )
        exps.append(e)
    return exps


def pad(rows, width, dtype):
    return torch.tensor([list(r) + [0] * (width - len(r)) for r in rows], dtype=dtype)


def split(spec, req, b):
    adv = spec["advantage"]
    exps = experiences(req)
    index_of = {id(e): i for i, e in enumerate(exps)}
    rng = random.Random(req["seed"] + b)
    arrival = list(exps)
    rng.shuffle(arrival)  # completion order
    operator = EXPERIENCE_OPERATORS.get(adv["operator"])()
    processed, _ = operator.process(arrival)
    fn = ADVANTAGE_FN.get(adv["name"])()
    out = [None] * len(exps)
    fragments = [None] * len(exps)
    from tcod_runtime import core

    for start in range(0, len(processed), b):
        chunk = processed[start:start + b]
        width = max(len(e.action_mask) for e in chunk)
        masks = [[1.0 if m else 0.0 for m in e.action_mask.tolist()] for e in chunk]
        batch = {
            "advantages": pad([e.advantages.tolist() for e in chunk], width, torch.float32),
            "response_mask": pad(masks, width, torch.float32),
            "old_log_probs": pad([e.logprobs.tolist() for e in chunk], width, torch.float32),
            "teacher_logprobs": pad([e.teacher_logprobs.tolist() for e in chunk], width, torch.float32),
        }
        tb = TrainBatch(batch, {"unique_ids": [e.eid.uid for e in chunk]})
        tb, _ = fn(tb)
        for k, e in enumerate(chunk):
            out[index_of[id(e)]] = tb.batch["advantages"][k][: len(e.action_mask)].tolist()
        # The old plugin: every term computed on the train batch alone.
        uids = [e.eid.uid for e in chunk]
        order = core.ordered_rows(uids)
        episode_of, group_of = core.group_rows([uids[i] for i in order])
        reward_of = {episode_of[p]: float(chunk[i].reward) for p, i in enumerate(order)}
        old = core.advantages(adv, spec["exprs"], req["step"], adv["totalSteps"],
                              [chunk[i].logprobs.tolist() for i in order], [chunk[i].teacher_logprobs.tolist() for i in order],
                              [masks[i] for i in order], episode_of, group_of, reward_of)
        for p, i in enumerate(order):
            fragments[index_of[id(chunk[i])]] = old["advantages"][p]
    return {"advantages": out, "fragment_advantages": fragments}


def main():
    cmd, plugin_dir = sys.argv[1], sys.argv[2]
    req = json.load(sys.stdin)
    if cmd == "split":
        spec = load_plugin(plugin_dir)
        print(json.dumps([split(spec, req, b) for b in req["train_batch_sizes"]]))
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
