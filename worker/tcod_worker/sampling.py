"""Batched autoregressive sampling: one decode loop over every row of every merged request, with a
KV cache, per-row settings (temperature, top-p, seed, stop tokens, max tokens) held as tensors, and
nothing per row in Python inside the loop.

Logprob semantics (a parameter, because vLLM and SGLang disagree — docs/REFERENCES.md#vllm, #sglang):
  - "processed": log-probability under the distribution actually sampled from (temperature applied,
    top-p truncated and renormalised). This is what importance ratios need; /sample's default.
  - "raw": log_softmax of the model's logits before temperature and top-p; vLLM's default, so
    /v1/completions' default.
At temperature 0 (greedy) the sampling distribution is a point mass; both modes then report raw.

Randomness: each row's Gumbel noise is a counter-based hash of (row seed, decode step, token id)
computed on the device in one batched expression, so a row's sample depends only on its own seed
and logits (not on the batch it shares or the rank it lands on) and no per-row generator is launched.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import torch

from . import static_decode

M32 = 0xFFFF_FFFF


@dataclass
class SampleOutput:
    tokens: list[int]
    logprobs: list[float]
    finish_reason: str
    #: Per generated token: the top-k (token, logprob) under the same distribution as `logprobs`.
    top: list[list[tuple[int, float]]] = field(default_factory=list)


@dataclass
class SampleRow:
    """One prompt to continue, with its own settings (rows of different requests share a decode loop)."""
    prompt: list[int]
    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0
    stop_ids: tuple[int, ...] = ()
    raw: bool = False
    topk: int = 0


def sampling_log_probs(logits: torch.Tensor, temperature: torch.Tensor | float, top_p: torch.Tensor | float) -> torch.Tensor:
    """[B, V] fp32 log-probabilities of the sampling distribution (−inf outside the top-p nucleus).
    `temperature` and `top_p` are floats or [B, 1] tensors (one value per row)."""
    lp = torch.log_softmax(logits.float() / temperature, dim=-1)
    if isinstance(top_p, float):
        if top_p >= 1.0:
            return lp
        top_p = torch.full((lp.shape[0], 1), top_p, device=lp.device)
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


def _mix32(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (PCG output permutation) on int64 tensors holding values < 2^32:
    every product stays below 2^63, so int64 arithmetic is exact on CPU and GPU alike."""
    state = (x * 747796405 + 2891336453) & M32
    word = (((state >> ((state >> 28) + 4)) ^ state) * 277803737) & M32
    return ((word >> 22) ^ word) & M32


def seed_keys(seeds: list[int], device: torch.device) -> torch.Tensor:
    """[B, 1] int64 key per row from its (up to 64-bit) seed."""
    lo = torch.tensor([s & M32 for s in seeds], dtype=torch.int64, device=device)
    hi = torch.tensor([(s >> 32) & M32 for s in seeds], dtype=torch.int64, device=device)
    return _mix32(lo ^ _mix32(hi + 0x9E3779B9)).unsqueeze(-1)


def uniform_noise(keys: torch.Tensor, step: int | torch.Tensor, vocab: int) -> torch.Tensor:
    """[B, V] uniforms in (0, 1): a hash of (row key, step, token id). `step` is an int or a [1]
    long tensor on the keys' device (the same arithmetic either way)."""
    ids = torch.arange(vocab, dtype=torch.int64, device=keys.device)
    h = _mix32(_mix32((keys + step * 0x632BE5AB) & M32) ^ ids)
    return (h.to(torch.float64) + 0.5).to(torch.float32) / 4294967296.0


def gumbel_argmax(log_probs: torch.Tensor, keys: torch.Tensor, step: int | torch.Tensor) -> torch.Tensor:
    """One token per row from softmax(log_probs) by the Gumbel-max trick, argmax(log p + G) with
    G = −log(−log U), U from `uniform_noise` (one batched expression for all rows)."""
    u = uniform_noise(keys, step, log_probs.shape[-1]).clamp(min=1e-20, max=1.0 - 1e-7)
    return (log_probs + -torch.log(-torch.log(u))).argmax(dim=-1)


class _RowSampler:
    """Per-row sampling state of one decode call: settings as [B, 1] tensors, the outputs so far,
    and `pick`, which samples every row's next token from `logits` and records it at column `t`
    (a [1] device tensor, so the same code runs eagerly and inside a CUDA graph)."""

    def __init__(self, rows: list[SampleRow], steps: int, pad_id: int, device: torch.device):
        batch = len(rows)
        self.temps = torch.tensor([[r.temperature] for r in rows], dtype=torch.float32, device=device)
        self.greedy = self.temps <= 0.0  # [B, 1]
        self.safe_t = torch.where(self.greedy, torch.ones_like(self.temps), self.temps)
        self.any_top_p = any(r.top_p < 1.0 for r in rows)
        self.top_p = torch.tensor([[r.top_p] for r in rows], dtype=torch.float32, device=device)
        self.raw_mode = torch.tensor([r.raw for r in rows], dtype=torch.bool, device=device)
        self.max_new = torch.tensor([r.max_tokens for r in rows], dtype=torch.long, device=device)
        n_stop = max((len(r.stop_ids) for r in rows), default=0)
        stops = torch.full((batch, max(1, n_stop)), -1, dtype=torch.long)
        for i, r in enumerate(rows):
            if r.stop_ids:
                stops[i, : len(r.stop_ids)] = torch.tensor(r.stop_ids, dtype=torch.long)
        self.stops = stops.to(device)
        self.keys = seed_keys([r.seed for r in rows], device)
        self.k = k = max(r.topk for r in rows)
        self.out_tok = torch.full((batch, steps), pad_id, dtype=torch.long, device=device)
        self.out_lp = torch.zeros((batch, steps), dtype=torch.float32, device=device)
        self.top_v = torch.zeros((batch, steps, k), dtype=torch.float32, device=device) if k else None
        self.top_i = torch.zeros((batch, steps, k), dtype=torch.long, device=device) if k else None
        self.length = torch.zeros(batch, dtype=torch.long, device=device)
        self.stopped = torch.zeros(batch, dtype=torch.bool, device=device)
        self.done = self.max_new <= 0
        self.pad = torch.full((batch,), pad_id, dtype=torch.long, device=device)
        # The raw distribution is needed only by greedy rows and rows that report raw log-probs; at
        # temperature 1 without top-p it is the sampling distribution itself.
        self.need_raw = any(r.temperature <= 0.0 or r.raw for r in rows) and not all(
            r.temperature == 1.0 and r.top_p >= 1.0 for r in rows)
        self.any_greedy = any(r.temperature <= 0.0 for r in rows)

    def pick(self, logits: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Samples and records step `t`; the tokens to feed next ([B]: pad for rows already done)."""
        dist = sampling_log_probs(logits, self.safe_t, self.top_p if self.any_top_p else 1.0)
        raw = torch.log_softmax(logits.float(), dim=-1) if self.need_raw else dist
        chosen = gumbel_argmax(dist, self.keys, t)
        if self.any_greedy:
            chosen = torch.where(self.greedy.squeeze(-1), raw.argmax(dim=-1), chosen)
        reported = torch.where(self.greedy | self.raw_mode.unsqueeze(-1), raw, dist) if self.need_raw else dist
        live = ~self.done
        self.out_tok.index_copy_(1, t, torch.where(live, chosen, self.pad).unsqueeze(-1))
        self.out_lp.index_copy_(1, t, reported.gather(-1, chosen.unsqueeze(-1)))
        if self.top_v is not None and self.top_i is not None:
            tv, ti = reported.topk(self.k, dim=-1)
            self.top_v.index_copy_(1, t, tv.unsqueeze(1))
            self.top_i.index_copy_(1, t, ti.unsqueeze(1))
        self.length += live.long()
        hit = (chosen.unsqueeze(-1) == self.stops).any(-1) & live
        self.stopped |= hit
        self.done |= hit | (self.length >= self.max_new)  # in place: a CUDA graph replays into the same tensors
        return torch.where(self.done, self.pad, chosen)

    def outputs(self, rows: list[SampleRow]) -> list[SampleOutput]:
        """One transfer back for the whole batch."""
        toks, lps, lens, stp = self.out_tok.tolist(), self.out_lp.tolist(), self.length.tolist(), self.stopped.tolist()
        tv_l = self.top_v.tolist() if self.top_v is not None else None
        ti_l = self.top_i.tolist() if self.top_i is not None else None
        outs = []
        for i, r in enumerate(rows):
            n = lens[i]
            o = SampleOutput(toks[i][:n], lps[i][:n], "stop" if stp[i] else "length")
            if r.topk and tv_l is not None and ti_l is not None:
                o.top = [list(zip(ti_l[i][j][: r.topk], tv_l[i][j][: r.topk])) for j in range(n)]
            outs.append(o)
        return outs


#: How `generate_rows` runs the decode steps after the prompt's forward.
#:   eager:  the model's own forward per step over a growing HF cache (any model; lockstep/FSDP).
#:   static: a static KV cache and the model's submodules per step (static_decode.py), no graph.
#:   graph:  static, with steps 1.. replayed as one CUDA graph (CUDA only).
#:   auto:   graph on CUDA when the model is supported and the decode is not lockstep, else eager.
DECODE_MODES = ("auto", "eager", "static", "graph")


def resolve_decode(mode: str, model: Any, device: torch.device, lockstep: bool) -> str:
    if mode == "auto":
        return "graph" if device.type == "cuda" and not lockstep and static_decode.supports(model) else "eager"
    if mode != "eager" and (lockstep or not static_decode.supports(model)):
        return "eager"
    if mode == "graph" and device.type != "cuda":
        return "static"
    return mode


def generate_rows(model: Any, rows: list[SampleRow], *, pad_id: int, device: torch.device,
                  steps: int | None = None, decode: str = "auto") -> list[SampleOutput]:
    """Continues every row in one batched decode. With `steps` given (FSDP: every rank must run the
    same forwards) exactly that many decode steps run, even after every row is done; otherwise the
    loop ends when every row has stopped or reached its max_tokens. `decode`: see DECODE_MODES."""
    batch = len(rows)
    lockstep = steps is not None
    steps = max((r.max_tokens for r in rows), default=0) if steps is None else steps
    if steps == 0 or batch == 0:
        return [SampleOutput([], [], "length") for _ in rows]
    mode = resolve_decode(decode, model, device, lockstep)
    width = max(len(r.prompt) for r in rows)
    total = width + steps
    ids = torch.full((batch, width), pad_id, dtype=torch.long)
    attn = torch.zeros((batch, total), dtype=torch.long)
    for i, r in enumerate(rows):  # left padding: every row's next token sits in the last column
        ids[i, width - len(r.prompt):] = torch.tensor(r.prompt, dtype=torch.long)
        attn[i, width - len(r.prompt): width] = 1
    ids, attn = ids.to(device), attn.to(device)
    positions = (attn[:, :width].cumsum(-1) - 1).clamp(min=0)
    sampler = _RowSampler(rows, steps, pad_id, device)
    t_dev = torch.zeros(1, dtype=torch.long, device=device)

    cache_arg = cache_kwarg(model)
    # Only the last position's logits are needed for the prompt (saves a [B, P, V] tensor).
    keep = {"logits_to_keep": 1} if "logits_to_keep" in _forward_params(model) else {}
    # Labels for torch.profiler (bench/h200/decode.py --profile); free when no profiler runs.
    with torch.profiler.record_function("tcod.prefill"):
        out = model(input_ids=ids, attention_mask=attn[:, :width], position_ids=positions, use_cache=True, **keep)
    next_pos = positions[:, -1:] + 1

    if mode != "eager":
        with torch.profiler.record_function("tcod.static_cache"):
            dec = static_decode.StaticDecoder(model, _cache_of(out), attn, width, out.logits[:, -1, :], next_pos, t_dev)
        del out

        def step() -> None:
            dec.forward(sampler.pick(dec.logits, t_dev))
            t_dev.add_(1)

        static_decode.run_steps(step, steps, device, mode == "graph", lambda: sampler.done.all())
        return sampler.outputs(rows)

    past = _cache_of(out)
    logits = out.logits[:, -1, :]
    # The "all rows done" flag travels to the host one step late (non-blocking copy + event), so
    # the CPU queues step t+1 while the GPU still runs step t; at most one extra step is decoded.
    flag_host = torch.zeros(1, dtype=torch.bool, pin_memory=device.type == "cuda")
    flag_event = None
    for t in range(steps):
        nxt = sampler.pick(logits, t_dev)
        t_dev.add_(1)
        if t == steps - 1:
            break
        if not lockstep:
            if flag_event is not None:
                flag_event.synchronize()
                if bool(flag_host[0]):
                    break
            flag_host.copy_(sampler.done.all().reshape(1), non_blocking=True)
            if device.type == "cuda":
                flag_event = torch.cuda.Event()
                flag_event.record()
            elif bool(flag_host[0]):
                break
        attn[:, width + t] = 1
        out = model(input_ids=nxt.unsqueeze(-1), attention_mask=attn[:, : width + t + 1],
                    position_ids=next_pos, use_cache=True, **{cache_arg: past})
        past = _cache_of(out)
        logits = out.logits[:, -1, :]
        next_pos = next_pos + 1
    return sampler.outputs(rows)


def generate(model: Any, prompts: list[list[int]], *, max_tokens: int, temperature: float, top_p: float,
             seeds: list[int], stop_ids: set[int], pad_id: int, device: torch.device,
             logprobs_mode: str = "processed", topk: int = 0) -> list[SampleOutput]:
    """One request's prompts with shared settings (see `generate_rows`)."""
    stops = tuple(sorted(stop_ids))
    rows = [SampleRow(p, max_tokens, temperature, top_p, s, stops, logprobs_mode == "raw", topk)
            for p, s in zip(prompts, seeds)]
    return generate_rows(model, rows, pad_id=pad_id, device=device)
