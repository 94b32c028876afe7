#!/usr/bin/env python3
"""Runs Trinity-RFT's own importance_sampling policy loss (what an exported plan trains with) on the
shared vectors (test/vectors/importance-sampling.json) whose clamp is Trinity's fixed ±20, and prints
per case the token-mean loss and the gradient with respect to each token's log-probability, as JSON.
Needs Trinity-RFT and torch (test/trinity/ci-install.sh); test/trinity/is-vectors.test.ts compares."""
import json
import sys

import torch
from trinity.algorithm.policy_loss_fn import POLICY_LOSS_FN

vectors = json.load(open(sys.argv[1]))
loss_fn = POLICY_LOSS_FN.get("importance_sampling")(backend="verl", loss_agg_mode="token-mean")
out = {}
for case in vectors["cases"]:
    if case["clamp"] != 20:
        continue
    lp = torch.tensor([case["lp"]], dtype=torch.float64, requires_grad=True)
    old = torch.tensor([case["old"]], dtype=torch.float64)
    adv = torch.tensor([case["adv"]], dtype=torch.float64)
    mask = torch.ones_like(old)
    loss, _ = loss_fn(logprob=lp, old_logprob=old, action_mask=mask, advantages=adv)
    loss.backward()
    out[case["name"]] = {"loss": loss.item(), "grad": lp.grad[0].tolist()}
print(json.dumps(out))
