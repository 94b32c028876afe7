"""Data parallelism: torchrun with 2 CPU processes (gloo) must match one process exactly."""

from __future__ import annotations

import math
import sys

import pytest

from .conftest import DEVICE, DTYPE, WorkerProcess


@pytest.fixture(scope="module")
def pair(assets, full_worker, tmp_path_factory):
    """The session's one-process worker and a 2-rank one, brought to the same weights, optimiser
    state and version through /save and /load."""
    args = ["--model", str(assets["student"]), "--teacher", str(assets["teacher"]), "--device", DEVICE, "--dtype", DTYPE]
    dp = WorkerProcess(args, launcher=[sys.executable, "-m", "torch.distributed.run", "--standalone",
                                       "--nproc-per-node", "2"])
    state = tmp_path_factory.mktemp("dp") / "state"
    full_worker.ok("/save", {"path": str(state), "kind": "full"})
    dp.ok("/load", {"path": str(state)})
    yield full_worker, dp
    dp.stop()


def _batch(w):
    texts = ["go to the desk 1", "open the fridge", "take the mug from the shelf", "look", "put the key in the box"]
    return [w.ok("/tokenize", {"text": t})["tokens"] for t in texts]


def test_two_ranks_match_one_process(pair):
    single, dp = pair
    assert dp.ok("/info")["world_size"] == 2
    prompts = _batch(single)
    req = {"prompts": prompts, "max_tokens": 6, "seed": 5}
    s1, s2 = single.ok("/sample", req)["samples"], dp.ok("/sample", req)["samples"]
    assert [s["tokens"] for s in s1] == [s["tokens"] for s in s2]
    assert [s["logprobs"] for s in s1] == [pytest.approx(s["logprobs"], abs=1e-5) for s in s2]

    seqs = [p + s["tokens"] for p, s in zip(prompts, s1)]
    score = {"sequences": seqs, "prompt_lengths": [len(p) for p in prompts], "model": "teacher"}
    t1, t2 = single.ok("/score", score)["results"], dp.ok("/score", score)["results"]
    assert [r["logprobs"] for r in t1] == [pytest.approx(r["logprobs"], abs=1e-5) for r in t2]

    rows = []
    for p, s, t in zip(prompts, s1, t1):
        n = len(p) + len(s["tokens"])
        mask = [0] * len(p) + [1] * len(s["tokens"])
        old = [0.0] * len(p) + s["logprobs"]
        adv = [0.0] * len(p) + [tl - sl for tl, sl in zip(t["logprobs"], s["logprobs"])]
        rows.append({"tokens": p + s["tokens"], "mask": mask, "old_logprobs": old, "advantages": adv})
        assert len(rows[-1]["tokens"]) == n
    for loss in ("importance_sampling", "reverse_kl"):
        f1 = single.ok("/forward_backward", {"rows": rows, "loss": loss})
        f2 = dp.ok("/forward_backward", {"rows": rows, "loss": loss})
        assert f2["loss"] == pytest.approx(f1["loss"], abs=1e-5) and f1["tokens"] == f2["tokens"]
    # Exact-KL targets (sparse teacher distributions) on every other masked token, rows split over ranks.
    V = single.ok("/info")["vocab_size"]
    q = lambda t: {"tokens": [t % V, (t + 3) % V], "logprobs": [math.log(0.6), math.log(0.2)],  # noqa: E731
                   "rest": math.log(0.2 / (V - 2))}
    kl_rows = []
    for r in rows:
        dists = [q(t) if m and t % 2 else None for t, m in enumerate(r["mask"])]
        kl_rows.append({**r, "teacher_distributions": dists, "kl_coefs": [1.0 if d else 0.0 for d in dists],
                        "forward_kl_coefs": [0.5 if d else 0.0 for d in dists]})
    f1 = single.ok("/forward_backward", {"rows": kl_rows, "loss": "importance_sampling"})
    f2 = dp.ok("/forward_backward", {"rows": kl_rows, "loss": "importance_sampling"})
    assert f2["loss"] == pytest.approx(f1["loss"], abs=1e-5)
    for k in ("reverse_kl_mean", "forward_kl_mean"):
        assert f2["metrics"][k] == pytest.approx(f1["metrics"][k], abs=1e-5)
    o1 = single.ok("/optim_step", {"lr": 1e-2, "grad_clip": 1.0})
    o2 = dp.ok("/optim_step", {"lr": 1e-2, "grad_clip": 1.0})
    assert o2["grad_norm"] == pytest.approx(o1["grad_norm"], rel=1e-4) and o1["version"] == o2["version"]
    after = {"sequences": seqs, "prompt_lengths": [len(p) for p in prompts]}
    a1, a2 = single.ok("/score", after)["results"], dp.ok("/score", after)["results"]
    assert [r["logprobs"] for r in a1] == [pytest.approx(r["logprobs"], abs=1e-5) for r in a2]


def test_bad_input_under_torchrun_is_a_400_and_the_ranks_keep_serving(pair):
    _single, dp = pair
    status, payload = dp.call("/score", {"sequences": [[2, 3]], "prompt_lengths": [5]})
    assert status == 400 and "prompt_lengths[0]" in payload["error"]["message"]
    # one row for two ranks: rank 1's shard is empty and contributes zero gradient
    fb = dp.ok("/forward_backward", {"rows": [{"tokens": [2, 3, 4], "mask": [0, 1, 1]}], "loss": "cross_entropy"})
    assert fb["tokens"] == 2
    assert dp.ok("/optim_step", {"lr": 1e-3})["grad_norm"] > 0
    assert dp.ok("/health") == {"status": "ok"}
