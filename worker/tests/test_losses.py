"""The loss functions against hand-computed numbers (docs/REFERENCES.md#policy-losses, #tinker)."""

from __future__ import annotations

import math

import pytest
import torch

from tcod_worker import losses


def test_importance_sampling_value_and_gradient_by_hand():
    lp = torch.tensor([-1.0, -2.0, -0.5], requires_grad=True)
    old = torch.tensor([-1.0, -1.5, -1.0])
    adv = torch.tensor([2.0, -1.0, 0.5])
    w = torch.tensor([0.5, 0.25, 0.25])
    loss = losses.aggregate(losses.importance_sampling(lp, old, adv), w)
    # ratios: e^0 = 1, e^-0.5, e^0.5 ; loss = -(0.5·1·2 + 0.25·e^-0.5·(-1) + 0.25·e^0.5·0.5)
    r1, r2 = math.exp(-0.5), math.exp(0.5)
    assert loss.item() == pytest.approx(-(1.0 - 0.25 * r1 + 0.125 * r2), abs=1e-6)
    loss.backward()
    # d/dlp of -w·A·e^(lp-old) = -w·A·ratio
    assert lp.grad.tolist() == pytest.approx([-1.0, 0.25 * r1, -0.125 * r2], abs=1e-6)


def test_ppo_clip_and_dual_clip_by_hand():
    ratios = torch.tensor([1.5, 0.5, 5.0, 1.1, 0.7])
    lp = torch.log(ratios).requires_grad_(True)
    old = torch.zeros(5)
    adv = torch.tensor([1.0, -1.0, -1.0, 1.0, 1.0])
    t = losses.ppo(lp, old, adv, clip_low=0.2, clip_high=0.2, dual_clip=3.0)
    # 1.5, A=+1: max(-1.5, -1.2) = -1.2 (clipped)      0.5, A=-1: max(0.5, 0.8) = 0.8 (clipped)
    # 5.0, A=-1: max(5, 1.2) = 5 → dual: min(3, 5) = 3  1.1: inside → -1.1      0.7, A=+1: max(-0.7,-0.8) = -0.7
    assert t.loss.tolist() == pytest.approx([-1.2, 0.8, 3.0, -1.1, -0.7], abs=1e-6)
    assert t.clipped.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    t.loss.sum().backward()
    # clipped tokens carry no gradient; unclipped: d(-A·ratio)/dlp = -A·ratio
    assert lp.grad.tolist() == pytest.approx([0.0, 0.0, 0.0, -1.1, -0.7], abs=1e-6)
    no_dual = losses.ppo(torch.log(ratios), old, adv, dual_clip=None)
    assert no_dual.loss.tolist()[2] == pytest.approx(5.0)


def test_ppo_log_ratio_clamped_at_20():
    t = losses.ppo(torch.tensor([100.0]), torch.tensor([0.0]), torch.tensor([1.0]))
    assert t.ratio.item() == pytest.approx(math.exp(20.0), rel=1e-5)


def test_cross_entropy_is_negative_logprob():
    assert losses.cross_entropy(torch.tensor([-0.25, -3.0])).tolist() == [0.25, 3.0]


def test_reverse_kl_closed_form_tiny_vocab():
    s = torch.log(torch.tensor([[0.5, 0.25, 0.25]]))
    t = torch.log(torch.tensor([[0.25, 0.25, 0.5]]))
    # Σ p_S (log p_S − log p_T) = 0.5·ln2 + 0 + 0.25·ln(0.5) = 0.25·ln 2
    assert losses.reverse_kl(s, t).item() == pytest.approx(0.25 * math.log(2), abs=1e-6)
    # Shifted logits are the same distribution: KL 0; logits need not be normalised.
    assert losses.reverse_kl(s + 3.0, s - 1.0).item() == pytest.approx(0.0, abs=1e-6)
    logits = torch.tensor([[1.0, 2.0, 0.0]], requires_grad=True)
    losses.reverse_kl(logits, t).backward()
    p = torch.softmax(logits.detach(), -1)
    d = torch.log(p) - t
    # ∂KL/∂z_j = p_j (d_j − Σ p d)
    want = p * (d - (p * d).sum())
    assert logits.grad.tolist()[0] == pytest.approx(want.tolist()[0], abs=1e-6)
