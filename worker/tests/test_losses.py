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


def _dense_logq(q: losses.SparseLogq, V: int) -> torch.Tensor:
    out = torch.where(q.has_rest, q.rest, float("nan")).unsqueeze(-1).repeat(1, V)
    for p in range(q.tokens.shape[0]):
        for k in range(q.tokens.shape[1]):
            if q.listed[p, k]:
                out[p, q.tokens[p, k]] = q.logprobs[p, k]
    return out


def test_exact_kls_closed_form_by_hand():
    # p = (1/2, 1/4, 1/8, 1/8); q lists 0 → 1/8, 1 → 5/8 and puts 1/8 on each unlisted token (2, 3).
    # reverse: ½·ln 4 + ¼·ln(0.4) + 0 + 0 = ln 2 + ¼·ln 0.4;  forward: ⅛·ln(¼) + ⅝·ln 2.5 + 0 + 0.
    # Second position: the whole vocabulary listed (rest null), q = (¼, ¼, ¼, ¼): reverse = ¼·ln 2 (see
    # test_reverse_kl_closed_form_tiny_vocab's shape), forward = ¼·ln(½) + ¼·ln 1 + ½·ln 2 = ¼·ln 2.
    lp = torch.log(torch.tensor([[0.5, 0.25, 0.125, 0.125]] * 2))
    q = losses.sparse_logq([([0, 1], [math.log(0.125), math.log(0.625)], math.log(0.125)),
                            ([3, 2, 1, 0], [math.log(0.25)] * 4, None)])
    assert q.tokens.shape == (2, 4) and q.listed[0].tolist() == [True, True, False, False]
    assert losses.exact_reverse_kl(lp, q).tolist() == pytest.approx([math.log(2) + 0.25 * math.log(0.4), 0.25 * math.log(2)], abs=1e-6)
    assert losses.exact_forward_kl(lp, q).tolist() == pytest.approx([0.125 * math.log(0.25) + 0.625 * math.log(2.5), 0.25 * math.log(2)], abs=1e-6)


def _random_case(seed: int, P: int = 6, V: int = 9):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(P, V, generator=g) * 2
    dists = []
    for p in range(P):
        k = p % (V + 1) if p < P - 1 else V  # 0..P-2 listed tokens, the last position lists all V
        toks = torch.randperm(V, generator=g)[:k].tolist()
        if k == V:
            probs = torch.softmax(torch.randn(V, generator=g), -1)
            dists.append((toks, torch.log(probs).tolist(), None))
            continue
        listed = torch.softmax(torch.randn(k + 1, generator=g), -1)  # the last share is the unlisted mass
        dists.append((toks, torch.log(listed[:k]).tolist(), math.log(float(listed[k]) / (V - k))))
    return logits, losses.sparse_logq(dists)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_kls_match_the_dense_computation_and_its_gradient(seed):
    logits, q = _random_case(seed)
    V = logits.shape[-1]
    lq = _dense_logq(q, V)
    assert torch.exp(lq).sum(-1).tolist() == pytest.approx([1.0] * lq.shape[0], abs=1e-5)
    for sparse, dense in ((losses.exact_reverse_kl, lambda lp: (lp.exp() * (lp - lq)).sum(-1)),
                          (losses.exact_forward_kl, lambda lp: (lq.exp() * (lq - lp)).sum(-1))):
        coef = torch.linspace(0.5, 2.0, logits.shape[0])  # distinct weights per position
        z1 = logits.clone().requires_grad_(True)
        got = sparse(torch.log_softmax(z1, -1), q)
        (coef * got).sum().backward()
        z2 = logits.clone().requires_grad_(True)
        want = dense(torch.log_softmax(z2, -1))
        (coef * want).sum().backward()
        assert got.tolist() == pytest.approx(want.tolist(), abs=1e-5)
        assert (got > 0).all()
        assert z1.grad.flatten().tolist() == pytest.approx(z2.grad.flatten().tolist(), abs=1e-5)
    # The closed-form gradients (exact-kl.ts): reverse p_k(lp_k − lq_k − KL), forward p_k − q_k.
    z = logits.clone().requires_grad_(True)
    losses.exact_forward_kl(torch.log_softmax(z, -1), q).sum().backward()
    assert z.grad.flatten().tolist() == pytest.approx((torch.softmax(logits, -1) - lq.exp()).flatten().tolist(), abs=1e-5)
    z = logits.clone().requires_grad_(True)
    kl = losses.exact_reverse_kl(torch.log_softmax(z, -1), q)
    kl.sum().backward()
    lp = torch.log_softmax(logits, -1)
    want = lp.exp() * (lp - lq - kl.detach().unsqueeze(-1))
    assert z.grad.flatten().tolist() == pytest.approx(want.flatten().tolist(), abs=1e-5)


def test_exact_kls_vanish_when_q_is_the_student():
    logits = torch.tensor([[1.0, -0.5, 2.0, 0.3, 0.3, 0.3], [0.2, 0.2, 0.2, 0.2, 0.2, 0.2]], requires_grad=True)
    lp = torch.log_softmax(logits.detach(), -1)
    # Row 0 lists 0..2 and gives the unlisted tokens' (equal) log-probability as rest; row 1 lists all.
    q = losses.sparse_logq([([2, 0, 1], [lp[0, 2].item(), lp[0, 0].item(), lp[0, 1].item()], lp[0, 3].item()),
                            (list(range(6)), lp[1].tolist(), None)])
    for fn in (losses.exact_reverse_kl, losses.exact_forward_kl):
        logits.grad = None
        kl = fn(torch.log_softmax(logits, -1), q)
        assert kl.tolist() == pytest.approx([0.0, 0.0], abs=1e-6)
        kl.sum().backward()
        assert logits.grad.abs().max().item() == pytest.approx(0.0, abs=1e-6)
