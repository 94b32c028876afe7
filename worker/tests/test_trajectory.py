"""Whole-trajectory sequences give what per-turn rows give: the teacher's log-probs of every turn
from one forward over the episode, and the same loss and gradients from one trajectory row as from
one row per turn (causal attention: a token sees only the tokens before it). In-process, CPU, fp32."""

from __future__ import annotations

import torch

from tcod_worker.comm import Comm
from tcod_worker.options import Options
from tcod_worker.worker import Worker

import pytest


@pytest.fixture(scope="module")
def worker(assets):
    torch.manual_seed(0)
    return Worker(Options(model=str(assets["student"]), teacher=str(assets["teacher"]), device="cpu", dtype="fp32",
                          token_budget=64), Comm())


def episode(w: Worker) -> tuple[list[list[int]], list[list[int]]]:
    """Three turns whose prompts accumulate: prompt_t+1 = prompt_t + response_t + observation_t."""
    enc = lambda s: w.tokenizer.encode(s, add_special_tokens=False)  # noqa: E731
    p0 = enc("you are in the kitchen . find the mug")
    responses = [enc("go to the desk 1"), enc("open the fridge"), enc("take the mug from the shelf")]
    observations = [enc("you see a lamp"), enc("the fridge is open")]
    prompts = [p0]
    for r, o in zip(responses[:-1], observations):
        prompts.append(prompts[-1] + r + o)
    return prompts, responses


def grads(w: Worker) -> torch.Tensor:
    g = torch.cat([p.grad.reshape(-1).clone() for p in w.student.parameters() if p.grad is not None])
    for p in w.student.parameters():
        p.grad = None
    w.pending_tokens = 0
    return g


def test_one_forward_over_the_episode_scores_every_turn(worker):
    prompts, responses = episode(worker)
    per_turn = worker.score({"sequences": [p + r for p, r in zip(prompts, responses)],
                             "prompt_lengths": [len(p) for p in prompts], "model": "teacher"})["results"]
    full = prompts[-1] + responses[-1]
    one = worker.score({"sequences": [full], "prompt_lengths": [len(prompts[0])], "model": "teacher"})["results"][0]["logprobs"]
    for p, r, res in zip(prompts, responses, per_turn):
        a = len(p) - len(prompts[0])
        assert one[a: a + len(r)] == pytest.approx(res["logprobs"], abs=1e-5)


@pytest.mark.parametrize("loss", ["importance_sampling", "ppo", "cross_entropy", "reverse_kl"])
def test_a_trajectory_row_trains_like_its_turn_rows(worker, loss):
    prompts, responses = episode(worker)
    rng = torch.Generator().manual_seed(1)
    adv = [torch.randn(len(r), generator=rng).tolist() for r in responses]
    old = [(-torch.rand(len(r), generator=rng) * 3).tolist() for r in responses]
    turn_rows = [{"tokens": p + r, "mask": [0] * len(p) + [1] * len(r), "advantages": [0.0] * len(p) + a,
                  "old_logprobs": [0.0] * len(p) + o} for p, r, a, o in zip(prompts, responses, adv, old)]
    full = prompts[-1] + responses[-1]
    mask, A, O = [0] * len(full), [0.0] * len(full), [0.0] * len(full)
    for p, r, a, o in zip(prompts, responses, adv, old):
        for j in range(len(r)):
            mask[len(p) + j], A[len(p) + j], O[len(p) + j] = 1, a[j], o[j]
    traj = [{"tokens": full, "mask": mask, "advantages": A, "old_logprobs": O}]
    f1 = worker.forward_backward({"rows": turn_rows, "loss": loss})
    g1 = grads(worker)
    f2 = worker.forward_backward({"rows": traj, "loss": loss})
    g2 = grads(worker)
    assert f1["tokens"] == f2["tokens"] == sum(len(r) for r in responses)
    assert f2["loss"] == pytest.approx(f1["loss"], abs=1e-5)
    assert torch.allclose(g1, g2, atol=1e-6, rtol=1e-4)
    assert g1.abs().sum() > 0
