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
from .decode_cache import SlotCache, bucket_rows, bucket_small, bucket_width

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

    def __init__(self, rows: list[SampleRow], steps: int, pad_id: int, device: torch.device,
                 capacity: int | None = None, stop_width: int | None = None):
        """Tensors for `capacity` rows (default: the rows given) and `steps` columns, loaded with `rows`.
        Rows past the given ones are done from the start (a bucket's unused rows, decode_cache.py)."""
        batch = capacity or len(rows)
        self.k, self.any_top_p, self.need_raw, self.any_greedy = self.flags_of(rows)
        k = self.k
        n_stop = stop_width or max(1, max((len(r.stop_ids) for r in rows), default=0))

        def new(fill: float | int | bool, *shape: int, dtype: torch.dtype) -> torch.Tensor:
            return torch.full(shape, fill, dtype=dtype, device=device)

        self.temps = new(1.0, batch, 1, dtype=torch.float32)
        self.greedy = new(False, batch, 1, dtype=torch.bool)
        self.safe_t = new(1.0, batch, 1, dtype=torch.float32)
        self.top_p = new(1.0, batch, 1, dtype=torch.float32)
        self.raw_mode = new(False, batch, dtype=torch.bool)
        self.max_new = new(0, batch, dtype=torch.long)
        self.stops = new(-1, batch, n_stop, dtype=torch.long)
        self.keys = new(0, batch, 1, dtype=torch.int64)
        self.out_tok = new(pad_id, batch, steps, dtype=torch.long)
        self.out_lp = new(0.0, batch, steps, dtype=torch.float32)
        self.top_v = new(0.0, batch, steps, k, dtype=torch.float32) if k else None
        self.top_i = new(0, batch, steps, k, dtype=torch.long) if k else None
        self.length = new(0, batch, dtype=torch.long)
        self.stopped = new(False, batch, dtype=torch.bool)
        self.done = new(True, batch, dtype=torch.bool)
        self.pad = new(pad_id, batch, dtype=torch.long)
        self.pad_id = pad_id
        self.load(rows)

    @staticmethod
    def flags_of(rows: list[SampleRow]) -> tuple[int, bool, bool, bool]:
        """What `pick` decides on the host, so a graph captured for one set serves only that set:
        the top-k width, whether any row has top-p, needs the raw distribution, or is greedy."""
        # The raw distribution is needed only by greedy rows and rows that report raw log-probs; at
        # temperature 1 without top-p it is the sampling distribution itself.
        need_raw = any(r.temperature <= 0.0 or r.raw for r in rows) and not all(
            r.temperature == 1.0 and r.top_p >= 1.0 for r in rows)
        return (max(r.topk for r in rows), any(r.top_p < 1.0 for r in rows), need_raw,
                any(r.temperature <= 0.0 for r in rows))

    @property
    def nbytes(self) -> int:
        return sum(x.numel() * x.element_size() for x in vars(self).values() if isinstance(x, torch.Tensor))

    def load(self, rows: list[SampleRow]) -> None:
        """Writes `rows`' settings over the tensors in place (a kept graph reads these addresses) and
        clears the outputs; rows past len(rows) are done. `rows` must have this sampler's flags."""
        batch, n = self.temps.shape[0], len(rows)
        assert n <= batch and len(rows) > 0
        pad = [SampleRow([], 0)] * (batch - n)  # temperature 1, no top-p: neutral for every flag
        every = list(rows) + pad
        temps = torch.tensor([[r.temperature] for r in every], dtype=torch.float32)
        self.temps.copy_(temps)
        self.greedy.copy_(temps <= 0.0)
        self.safe_t.copy_(torch.where(temps <= 0.0, torch.ones_like(temps), temps))
        self.top_p.copy_(torch.tensor([[r.top_p] for r in every], dtype=torch.float32))
        self.raw_mode.copy_(torch.tensor([r.raw for r in every], dtype=torch.bool))
        self.max_new.copy_(torch.tensor([r.max_tokens for r in every], dtype=torch.long))
        stops = torch.full(tuple(self.stops.shape), -1, dtype=torch.long)
        for i, r in enumerate(rows):
            if r.stop_ids:
                stops[i, : len(r.stop_ids)] = torch.tensor(r.stop_ids, dtype=torch.long)
        self.stops.copy_(stops)
        self.keys.copy_(seed_keys([r.seed for r in every], self.keys.device))
        self.out_tok.fill_(self.pad_id)
        self.out_lp.zero_()
        if self.top_v is not None and self.top_i is not None:
            self.top_v.zero_()
            self.top_i.zero_()
        self.length.zero_()
        self.stopped.zero_()
        self.done.copy_(self.max_new <= 0)

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
        """One transfer back for the whole batch (its first len(rows) rows: the rest are a bucket's padding)."""
        b = len(rows)
        toks, lps, lens, stp = self.out_tok[:b].tolist(), self.out_lp[:b].tolist(), self.length[:b].tolist(), self.stopped[:b].tolist()
        tv_l = self.top_v[:b].tolist() if self.top_v is not None else None
        ti_l = self.top_i[:b].tolist() if self.top_i is not None else None
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


@dataclass
class _DecodeSlot:
    """A static decode kept between calls of one bucket (decode_cache.py): buffers, sampler, step counter, graph."""
    decoder: static_decode.StaticDecoder
    sampler: _RowSampler
    t: torch.Tensor
    graph: Any = None
    #: The prompts' forward (StaticDecoder.prefill) as a graph, captured at the bucket's second call.
    prefill_graph: Any = None
    #: GPU memory the graphs' private pools took when captured.
    graph_bytes: int = 0

    @property
    def nbytes(self) -> int:
        return self.decoder.nbytes + self.sampler.nbytes + self.graph_bytes


def generate_rows(model: Any, rows: list[SampleRow], *, pad_id: int, device: torch.device,
                  steps: int | None = None, decode: str = "auto", cache: SlotCache | None = None,
                  prefill_tokens: int | None = None) -> list[SampleOutput]:
    """Continues every row in one batched decode. With `steps` given (FSDP: every rank must run the
    same forwards) exactly that many decode steps run, even after every row is done; otherwise the
    loop ends when every row has stopped or reached its max_tokens. `decode`: see DECODE_MODES.
    `cache`: a static or graph decode keeps its buffers and graph there for the next call of its
    bucket (decode_cache.py); without it every call allocates (and captures) afresh.
    `prefill_tokens`: a static or graph decode runs HF's forward of the prompts in groups of rows of
    at most this many padded tokens (the worker's --token-budget), so its memory does not grow with
    rows × width² (the [rows, 1, width, width] attention mask of left-padded prompts: 140 evaluation
    rows of 5,000 tokens would need 3.5 GB for it alone); the rows decode together after."""
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

    if mode != "eager" and cache is not None:
        key = _bucket_key(rows, width, steps, mode, device)
        slot = cache.get(model, key)
        if slot is not None:  # the prompts' forward and every decode step replay the bucket's graphs
            with torch.profiler.record_function("tcod.static_cache"):
                slot.decoder.load_prompts(ids, attn[:, :width].bool())
                slot.sampler.load(rows)
                slot.t.zero_()
            with torch.profiler.record_function("tcod.prefill"):
                static_decode.run_kept(slot.decoder.prefill, slot, "prefill_graph", device, mode == "graph")
            outs = _decode_static(slot.decoder, slot.sampler, slot.t, rows, steps, device, mode, slot)
            cache.put(model, key, slot)  # again: a capture made it larger
            return outs

    positions = (attn[:, :width].cumsum(-1) - 1).clamp(min=0)  # a kept bucket's prefill computes its own
    cache_arg = cache_kwarg(model)
    # Only the last position's logits are needed for the prompt (saves a [B, P, V] tensor).
    keep = {"logits_to_keep": 1} if "logits_to_keep" in _forward_params(model) else {}
    # Labels for torch.profiler (bench/h200/decode.py --profile); free when no profiler runs.
    group = max(1, prefill_tokens // width) if prefill_tokens else batch
    with torch.profiler.record_function("tcod.prefill"):
        if mode != "eager" and not lockstep and group < batch:  # lockstep (FSDP): every rank the same forwards
            out = _grouped_prefill(model, ids, attn[:, :width], positions, group, keep)
        else:
            out = model(input_ids=ids, attention_mask=attn[:, :width], position_ids=positions, use_cache=True, **keep)
    next_pos = positions[:, -1:] + 1

    if mode != "eager":
        past, last = _cache_of(out), out.logits[:, -1, :]
        with torch.profiler.record_function("tcod.static_cache"):
            if cache is None:
                t_dev = torch.zeros(1, dtype=torch.long, device=device)
                sampler = _RowSampler(rows, steps, pad_id, device)
                dec = static_decode.StaticDecoder(model, past, attn[:, :width], last, next_pos, t_dev, total=total)
                slot = None
            else:  # a bucket's first call: its buffers take this prefill's cache (and dtypes)
                slot = _new_slot(model, rows, steps, key, past, attn[:, :width], last, next_pos, pad_id)
                t_dev, sampler, dec = slot.t, slot.sampler, slot.decoder
        del out, past, last
        outs = _decode_static(dec, sampler, t_dev, rows, steps, device, mode, slot)
        if cache is not None and slot is not None:
            cache.put(model, key, slot)
        return outs

    sampler = _RowSampler(rows, steps, pad_id, device)
    t_dev = torch.zeros(1, dtype=torch.long, device=device)
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


class _StackedCache:
    """Per layer, the keys and values of several prefills' caches stacked by row ([B, kv_heads, W,
    head_dim]), in the `layers[i].keys / .values` shape static_decode reads (what it needs of an HF cache)."""

    def __init__(self, caches: list[Any], n_layers: int):
        self.layers = []
        for i in range(n_layers):
            kv = [static_decode.cache_tensors(c, i) for c in caches]
            self.layers.append(_LayerKV(torch.cat([k for k, _ in kv]), torch.cat([v for _, v in kv])))


@dataclass
class _LayerKV:
    keys: torch.Tensor
    values: torch.Tensor


@dataclass
class _Prefill:
    """What `generate_rows` reads of HF's forward output: the last position's logits and the cache."""
    logits: torch.Tensor
    past_key_values: Any
    cache: Any = None


def _grouped_prefill(model: Any, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, group: int,
                     keep: dict[str, int]) -> _Prefill:
    """HF's forward of the prompts `group` rows at a time: the rows' caches stacked, their last logits
    concatenated (each row's values are those of the whole batch's forward, to rounding)."""
    caches, logits = [], []
    for a in range(0, ids.shape[0], group):
        out = model(input_ids=ids[a:a + group], attention_mask=mask[a:a + group], position_ids=positions[a:a + group],
                    use_cache=True, **keep)
        caches.append(_cache_of(out))
        logits.append(out.logits[:, -1:, :])
        del out
    return _Prefill(torch.cat(logits), _StackedCache(caches, len(model.model.layers)))  # StaticDecoder's layers


def _bucket_key(rows: list[SampleRow], width: int, steps: int, mode: str, device: torch.device) -> tuple:
    """A call's bucket (decode_cache.py): shapes rounded up, `pick`'s host-side flags, and the autocast
    in force (it decides the buffers' dtypes)."""
    kind = device.type
    cast = torch.get_autocast_dtype(kind) if torch.is_autocast_enabled(kind) else None
    n_stop = max(1, max(len(r.stop_ids) for r in rows))
    return (mode, bucket_rows(len(rows)), bucket_width(width), bucket_small(steps), bucket_small(n_stop),
            _RowSampler.flags_of(rows), cast)


def _new_slot(model: Any, rows: list[SampleRow], steps: int, key: tuple, past: Any, prompt_mask: torch.Tensor,
              logits: torch.Tensor, next_pos: torch.Tensor, pad_id: int) -> _DecodeSlot:
    """A bucket's buffers, loaded with this call (whose prompts' forward HF's model already ran)."""
    _, rows_b, width_b, steps_b, stop_b, *_ = key
    t = torch.zeros(1, dtype=torch.long, device=prompt_mask.device)
    sampler = _RowSampler(rows, steps_b, pad_id, prompt_mask.device, capacity=rows_b, stop_width=stop_b)
    dec = static_decode.StaticDecoder(model, past, prompt_mask, logits, next_pos, t, rows=rows_b, width=width_b,
                                      total=width_b + steps_b)
    return _DecodeSlot(dec, sampler, t)


def _decode_static(dec: static_decode.StaticDecoder, sampler: _RowSampler, t_dev: torch.Tensor, rows: list[SampleRow],
                   steps: int, device: torch.device, mode: str, slot: _DecodeSlot | None) -> list[SampleOutput]:
    def step() -> None:
        dec.forward(sampler.pick(dec.logits, t_dev))
        t_dev.add_(1)

    static_decode.run_steps(step, steps, device, mode == "graph", lambda: sampler.done.all(), kept=slot)
    return sampler.outputs(rows)


def generate(model: Any, prompts: list[list[int]], *, max_tokens: int, temperature: float, top_p: float,
             seeds: list[int], stop_ids: set[int], pad_id: int, device: torch.device,
             logprobs_mode: str = "processed", topk: int = 0) -> list[SampleOutput]:
    """One request's prompts with shared settings (see `generate_rows`)."""
    stops = tuple(sorted(stop_ids))
    rows = [SampleRow(p, max_tokens, temperature, top_p, s, stops, logprobs_mode == "raw", topk)
            for p, s in zip(prompts, seeds)]
    return generate_rows(model, rows, pad_id=pad_id, device=device)
