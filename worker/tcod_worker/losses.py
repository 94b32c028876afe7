"""Per-token policy losses, pure functions on tensors (docs/REFERENCES.md#policy-losses, #tinker).

Every function takes flat tensors over the loss positions and returns per-token losses; the caller
aggregates with `aggregate(per_token, weights)` = Σ weights·loss (weights carry the mask and the
normalisation, as Tinker's `loss_fn_inputs` do).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

#: verl/Trinity clamp the log-ratio before exp() in PPO so one stale token cannot overflow.
PPO_LOG_RATIO_CLAMP = 20.0


def importance_sampling(logprobs: torch.Tensor, old_logprobs: torch.Tensor, advantages: torch.Tensor,
                        log_ratio_clamp: float | None = None) -> torch.Tensor:
    """Tinker's `importance_sampling`: −exp(logp − sampling_logp)·A, no clipping.

    `log_ratio_clamp` (default None = exactly Tinker) optionally clamps logp − old_logp first."""
    log_ratio = logprobs - old_logprobs
    if log_ratio_clamp is not None:
        log_ratio = log_ratio.clamp(-log_ratio_clamp, log_ratio_clamp)
    return -torch.exp(log_ratio) * advantages


@dataclass
class PpoTerms:
    loss: torch.Tensor
    #: 1.0 where the clipped branch (either clip) set the loss, else 0.0 (for the clip fraction).
    clipped: torch.Tensor
    ratio: torch.Tensor


def ppo(logprobs: torch.Tensor, old_logprobs: torch.Tensor, advantages: torch.Tensor,
        clip_low: float = 0.2, clip_high: float = 0.2, dual_clip: float | None = 3.0) -> PpoTerms:
    """verl/Trinity `ppo_policy_loss` with dual clip (defaults: clip 0.2, clip_ratio_c 3.0):

        ratio = exp(clamp(logp − old, ±20))
        l1 = −A·ratio;  l2 = −A·clamp(ratio, 1−clip_low, 1+clip_high);  c1 = max(l1, l2)
        c2 = min(−A·dual_clip, c1);  loss = c2 where A < 0 else c1   (dual clip only for A < 0)
    """
    ratio = torch.exp((logprobs - old_logprobs).clamp(-PPO_LOG_RATIO_CLAMP, PPO_LOG_RATIO_CLAMP))
    l1 = -advantages * ratio
    l2 = -advantages * ratio.clamp(1.0 - clip_low, 1.0 + clip_high)
    c1 = torch.maximum(l1, l2)
    clipped = (l2 > l1).to(l1.dtype)
    if dual_clip is None:
        return PpoTerms(c1, clipped, ratio)
    l3 = -advantages * dual_clip
    c2 = torch.minimum(l3, c1)
    loss = torch.where(advantages < 0, c2, c1)
    dual = ((advantages < 0) & (l3 < c1)).to(l1.dtype)
    return PpoTerms(loss, torch.maximum(clipped, dual), ratio)


def cross_entropy(logprobs: torch.Tensor) -> torch.Tensor:
    """Tinker's `cross_entropy`: −logp of the target token (SFT)."""
    return -logprobs


def reverse_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Exact full-vocabulary reverse KL per position: Σ_v p_S(v)·(log p_S(v) − log p_T(v)).

    Both [N, V]; computed in fp32. Gradients flow into the student only (detach the teacher)."""
    ls = torch.log_softmax(student_logits.float() / temperature, dim=-1)
    lt = torch.log_softmax(teacher_logits.detach().float() / temperature, dim=-1)
    return (ls.exp() * (ls - lt)).sum(dim=-1)


@dataclass
class SparseLogq:
    """Next-token log-distributions q, one per position, given sparsely (a dense [P, V] log q is never
    built: vocabularies reach 150k). `logprobs[p, k]` = log q(`tokens[p, k]`) where `listed[p, k]`
    (padding elsewhere); `rest[p]` = log q of EVERY unlisted token where `has_rest[p]`, else all V
    tokens are listed."""
    tokens: torch.Tensor  # [P, K] long
    logprobs: torch.Tensor  # [P, K] fp32
    listed: torch.Tensor  # [P, K] bool
    rest: torch.Tensor  # [P] fp32
    has_rest: torch.Tensor  # [P] bool


def sparse_logq(dists: list[tuple[list[int], list[float], float | None]], device: torch.device | str = "cpu") -> SparseLogq:
    """SparseLogq from (tokens, logprobs, rest) per position, listed tokens padded to the longest."""
    k = max([1] + [len(t) for t, _, _ in dists])
    tokens = [t + [0] * (k - len(t)) for t, _, _ in dists]
    logprobs = [list(l) + [0.0] * (k - len(l)) for _, l, _ in dists]
    listed = [[True] * len(t) + [False] * (k - len(t)) for t, _, _ in dists]
    rest = [0.0 if r is None else r for _, _, r in dists]
    has_rest = [r is not None for _, _, r in dists]
    return SparseLogq(torch.tensor(tokens, dtype=torch.long).to(device), torch.tensor(logprobs, dtype=torch.float32).to(device),
                      torch.tensor(listed, dtype=torch.bool).to(device), torch.tensor(rest, dtype=torch.float32).to(device),
                      torch.tensor(has_rest, dtype=torch.bool).to(device))


def exact_reverse_kl(log_probs: torch.Tensor, q: SparseLogq) -> torch.Tensor:
    """KL(p ‖ q) per position, p = exp(log_probs) ([P, V] student log-softmax, fp32), L the listed
    tokens, r the rest:  Σ_v p_v·lp_v − Σ_{v∈L} p_v·lq_v − r·(1 − Σ_{v∈L} p_v).

    Same value and gradient as the dense Σ_v p_v (lp_v − lq_v) (runtime/backends/embedded/exact-kl.ts)."""
    p = log_probs.exp()
    neg_entropy = (p * log_probs).sum(-1)
    p_l = torch.where(q.listed, p.gather(-1, q.tokens), 0.0)
    listed = (p_l * torch.where(q.listed, q.logprobs, 0.0)).sum(-1)
    rest = torch.where(q.has_rest, q.rest * (1.0 - p_l.sum(-1)), 0.0)
    return neg_entropy - listed - rest


def exact_forward_kl(log_probs: torch.Tensor, q: SparseLogq) -> torch.Tensor:
    """KL(q ‖ p) per position (GKD's mode-covering term):
    Σ_{v∈L} q_v·(lq_v − lp_v) + e^r·((V − |L|)·r − (Σ_all lp_v − Σ_{v∈L} lp_v))."""
    lp_l = torch.where(q.listed, log_probs.gather(-1, q.tokens), 0.0)
    listed = torch.where(q.listed, q.logprobs.exp() * (q.logprobs - lp_l), 0.0).sum(-1)
    unlisted = log_probs.shape[-1] - q.listed.sum(-1)
    lp_rest = log_probs.sum(-1) - lp_l.sum(-1)
    rest = torch.where(q.has_rest, q.rest.exp() * (unlisted * q.rest - lp_rest), 0.0)
    return listed + rest


def aggregate(per_token: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ weights·loss. Weights are 0 off the mask and sum to 1 over the whole batch by default."""
    return (per_token * weights).sum()
