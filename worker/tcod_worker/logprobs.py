"""Log-probabilities from a causal LM: micro-batch planning, padded batches, and a forward that
computes the output head only at the positions that are scored or trained (pure tensor helpers)."""

from __future__ import annotations

from typing import Any

import torch


def right_pad(seqs: list[list[int]], pad_id: int, device: torch.device) -> torch.Tensor:
    """[B, Lmax] with pad on the right. With causal attention a real token never sees the pad after
    it, and positions 0..len−1 stay correct, so no attention mask is needed."""
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [pad_id] * (width - len(s)) for s in seqs], dtype=torch.long).to(device, non_blocking=True)


def pad_values(rows: list[list[float]], width: int, device: torch.device, offset: int = 0) -> torch.Tensor:
    """[B, width] float32 of rows[j][offset:] padded with 0 (one host→device copy)."""
    return torch.tensor([r[offset: offset + width] + [0.0] * (width - len(r[offset: offset + width])) for r in rows],
                        dtype=torch.float32).to(device, non_blocking=True)


def gather_logprobs(log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def chosen_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: torch.Tensor | float = 1.0) -> torch.Tensor:
    """log softmax(logits / T)[target] per row of [N, V] logits, as logit − logsumexp (fp32),
    without keeping an [N, V] log-softmax for the backward."""
    z = logits.float() / temperature
    return z.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(z, dim=-1)


def entropy_from_logprobs(log_probs: torch.Tensor) -> torch.Tensor:
    return -(log_probs.exp() * log_probs).sum(dim=-1)


def ranks_of(log_probs: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """vLLM's rank: 1 + number of tokens strictly more likely than the chosen one."""
    return (log_probs > chosen.unsqueeze(-1)).sum(dim=-1) + 1


def micro_batches(lengths: list[int], token_budget: int) -> list[list[int]]:
    """Groups row indices so each group's rows × longest row stays within the budget. Rows are taken
    longest first, so rows of similar length share a batch and padding stays small; every index
    appears once. A row longer than the budget gets a batch of its own."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    groups: list[list[int]] = []
    cur: list[int] = []
    longest = 0
    for i in order:
        n = lengths[i]
        new_longest = max(longest, n)
        if cur and new_longest * (len(cur) + 1) > token_budget:
            groups.append(cur)
            cur, new_longest = [], n
        cur.append(i)
        longest = new_longest
    if cur:
        groups.append(cur)
    return groups


def _unwrap(model: Any) -> Any:
    return model.get_base_model() if hasattr(model, "get_base_model") else model


class SelectedLogits(torch.nn.Module):
    """A causal LM whose forward returns the logits of selected positions only: [N, V] for
    `select` a [B, L] bool mask (the output head, the widest matrix product for a small model with
    a large vocabulary, runs on N rows instead of B·L). This module is what DDP / FSDP wrap, so
    their hooks see one forward per micro-batch."""

    def __init__(self, model: Any, full_forward: bool = False):
        super().__init__()
        self.model = model
        base = _unwrap(model)
        # FSDP2 unshards the model's own parameters (embeddings, norm, head) in the model's forward,
        # so a sharded model is called whole and its logits selected afterwards.
        # Plain attributes, not submodules: the parameters are registered once, under `model`.
        object.__setattr__(self, "_decoder", None if full_forward else (base.get_decoder() if hasattr(base, "get_decoder") else None))
        object.__setattr__(self, "_head", base.get_output_embeddings())

    def forward(self, input_ids: torch.Tensor, select: torch.Tensor) -> torch.Tensor:
        if self._decoder is None or self._head is None:
            return self.model(input_ids=input_ids, use_cache=False).logits[select]
        hidden = self._decoder(input_ids=input_ids, use_cache=False).last_hidden_state
        return self._head(hidden[select])


def target_selection(lengths: list[int], starts: list[int], width: int, device: torch.device) -> torch.Tensor:
    """[B, width] bool: position p of row j is selected when it predicts a target token, i.e.
    starts[j] − 1 ≤ p < lengths[j] − 1 (built on the device from two small vectors)."""
    pos = torch.arange(width, device=device).unsqueeze(0)
    lo = torch.tensor(starts, dtype=torch.long).to(device, non_blocking=True).unsqueeze(-1) - 1
    hi = torch.tensor(lengths, dtype=torch.long).to(device, non_blocking=True).unsqueeze(-1) - 1
    return (pos >= lo) & (pos < hi)
