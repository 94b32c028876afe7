"""Batched autoregressive sampling with a KV cache, per-row seeded generators and per-token logprobs.

Logprob semantics (a parameter, because vLLM and SGLang disagree — docs/REFERENCES.md#vllm, #sglang):
  - "processed": log-probability under the distribution actually sampled from (temperature applied,
    top-p truncated and renormalised). This is what importance ratios need; /sample's default.
  - "raw": log_softmax of the model's logits before temperature and top-p; vLLM's default, so
    /v1/completions' default.
At temperature 0 (greedy) the sampling distribution is a point mass; both modes then report raw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import inspect

import torch


@dataclass
class SampleOutput:
    tokens: list[int]
    logprobs: list[float]
    finish_reason: str
    #: Per generated token: the top-k (token, logprob) under the same distribution as `logprobs`.
    top: list[list[tuple[int, float]]] = field(default_factory=list)


def sampling_log_probs(logits: torch.Tensor, temperature: float, top_p: float) -> torch.Tensor:
    """[B, V] fp32 log-probabilities of the sampling distribution (−inf outside the top-p nucleus)."""
    lp = torch.log_softmax(logits.float() / temperature, dim=-1)
    if top_p >= 1.0:
        return lp
    sorted_lp, order = lp.sort(dim=-1, descending=True)
    probs = sorted_lp.exp()
    # Keep a token while the mass before it is still under top_p (so the top token always stays).
    keep_sorted = (probs.cumsum(dim=-1) - probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    masked = lp.masked_fill(~keep, float("-inf"))
    return masked - torch.logsumexp(masked, dim=-1, keepdim=True)


def _forward_params(model: Any) -> set[str]:
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return set(inspect.signature(type(base).forward).parameters)


def cache_kwarg(model: Any) -> str:
    """Name of the KV-cache argument: `cache` in recent transformers (5.2x), `past_key_values` before."""
    return "cache" if "cache" in _forward_params(model) else "past_key_values"


def _cache_of(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def gumbel_max(log_probs: torch.Tensor, generators: list[torch.Generator]) -> torch.Tensor:
    """Samples one token per row from softmax(log_probs) by the Gumbel-max trick: argmax(log p + G),
    G = −log(−log U). Each row's U comes from that row's generator, so a row's sample depends only on
    its own seed and logits (not on the batch it shares), and the argmax runs once for the batch."""
    u = torch.stack([torch.rand(log_probs.shape[-1], generator=g, device=log_probs.device, dtype=torch.float32)
                     for g in generators])
    gumbel = -torch.log(-torch.log(u.clamp(min=1e-20, max=1.0 - 1e-7)))
    return (log_probs + gumbel).argmax(dim=-1)


def generate(model: Any, prompts: list[list[int]], *, max_tokens: int, temperature: float, top_p: float,
             seeds: list[int], stop_ids: set[int], pad_id: int, device: torch.device,
             logprobs_mode: str = "processed", topk: int = 0) -> list[SampleOutput]:
    batch = len(prompts)
    outs = [SampleOutput([], [], "length") for _ in prompts]
    if max_tokens == 0 or batch == 0:
        return outs
    width = max(len(p) for p in prompts)
    ids = torch.full((batch, width), pad_id, dtype=torch.long)
    attn = torch.zeros((batch, width), dtype=torch.long)
    for i, p in enumerate(prompts):  # left padding: every row's next token sits in the last column
        ids[i, width - len(p):] = torch.tensor(p, dtype=torch.long)
        attn[i, width - len(p):] = 1
    ids, attn = ids.to(device), attn.to(device)
    positions = (attn.cumsum(-1) - 1).clamp(min=0)
    generators = []
    for s in seeds:
        g = torch.Generator(device=device)
        g.manual_seed(int(s) & 0xFFFF_FFFF_FFFF_FFFF)
        generators.append(g)
    done = [False] * batch
    cache_arg = cache_kwarg(model)
    # Only the last position's logits are needed for the prompt (saves a [B, P, V] tensor).
    keep = {"logits_to_keep": 1} if "logits_to_keep" in _forward_params(model) else {}
    out = model(input_ids=ids, attention_mask=attn, position_ids=positions, use_cache=True, **keep)
    past = _cache_of(out)
    logits = out.logits[:, -1, :]
    next_pos = positions[:, -1:] + 1
    for _ in range(max_tokens):
        raw = torch.log_softmax(logits.float(), dim=-1)
        greedy = temperature <= 0.0
        dist = raw if greedy else sampling_log_probs(logits, temperature, top_p)
        reported = raw if (greedy or logprobs_mode == "raw") else dist
        if greedy:
            chosen = raw.argmax(dim=-1)
        else:
            chosen = gumbel_max(dist, generators)
        # One device→host transfer per step: ids and their logprobs together.
        picked = torch.stack([chosen.to(torch.float64), reported.gather(-1, chosen.unsqueeze(-1)).squeeze(-1).to(torch.float64)])
        chosen_ids_f, chosen_lp = picked.tolist()
        chosen_ids = [int(x) for x in chosen_ids_f]
        top_vals = top_ids = None
        if topk > 0:
            tv, ti = reported.topk(min(topk, reported.shape[-1]), dim=-1)
            top_vals, top_ids = tv.tolist(), ti.tolist()
        for i in range(batch):
            if done[i]:
                continue
            outs[i].tokens.append(chosen_ids[i])
            outs[i].logprobs.append(float(chosen_lp[i]))
            if top_ids is not None and top_vals is not None:
                outs[i].top.append(list(zip(top_ids[i], top_vals[i])))
            if chosen_ids[i] in stop_ids:
                done[i] = True
                outs[i].finish_reason = "stop"
        if all(done):
            break
        feed = torch.where(torch.tensor(done, device=device), torch.full_like(chosen, pad_id), chosen)
        attn = torch.cat([attn, torch.ones((batch, 1), dtype=attn.dtype, device=device)], dim=-1)
        out = model(input_ids=feed.unsqueeze(-1), attention_mask=attn, position_ids=next_pos,
                    use_cache=True, **{cache_arg: past})
        past = _cache_of(out)
        logits = out.logits[:, -1, :]
        next_pos = next_pos + 1
    return outs
