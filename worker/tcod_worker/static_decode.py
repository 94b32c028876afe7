"""Decode steps over a static KV cache, replayable as one CUDA graph.

HF transformers' forward for one new token per row costs hundreds of kernel launches and as much
Python (mask building, cache bookkeeping): with the small models tcod trains from scratch, a decode
step on an H200 is bound by that, not by the GPU (about 7 ms a step for a 4-layer model whether 32
rows decode or one). Here the prompt is still run by the model's own forward (the prefill), its KV
cache is copied into fixed-size buffers (one column per position the call can reach), and each
decode step — sampling, recording, the next token's forward — runs the model's own submodules
(embedding, norms, projections, rotary embedding, MLP, head) with attention over the static buffers
under a boolean mask. Every shape is then fixed for the whole call, so on CUDA the step is captured
once as a CUDA graph (torch.cuda.graph) and replayed per token: one launch instead of hundreds.

Numerics: the same submodules in the same order and dtypes as HF's decoder layer (Llama and Qwen2
share it); attention runs over the whole static width with the unused columns masked, so results
match the eager decode to rounding, not bit for bit (a masked column adds an exact 0, but the
kernel's reduction order over a longer row can differ). Tests compare the two in fp32.

Supported: LlamaForCausalLM and Qwen2ForCausalLM (tcod's tiny models, and HF checkpoints of those
architectures) with the default rotary embedding and no sliding window, not wrapped by PEFT;
anything else decodes eagerly (`supports`).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import torch
import torch.nn.functional as F

ARCHS = ("LlamaForCausalLM", "Qwen2ForCausalLM")


def supports(model: Any) -> bool:
    """True when `model`'s decode step can run over a static cache here (see the module doc)."""
    if type(model).__name__ not in ARCHS:
        return False
    cfg = model.config
    if getattr(cfg, "use_sliding_window", False):
        return False
    base = getattr(model, "model", None)
    rotary = getattr(base, "rotary_emb", None)
    if rotary is None or getattr(rotary, "rope_type", "default") != "default":
        return False
    if not all(hasattr(base, a) for a in ("embed_tokens", "layers", "norm")) or not hasattr(model, "lm_head"):
        return False
    return all(all(hasattr(layer, a) for a in _LAYER_PARTS) and all(hasattr(layer.self_attn, a) for a in _ATTN_PARTS)
               for layer in base.layers)


#: What `StaticDecoder.forward` reads of each decoder layer and its attention (HF's Llama/Qwen2 layout).
_LAYER_PARTS = ("self_attn", "mlp", "input_layernorm", "post_attention_layernorm")
_ATTN_PARTS = ("q_proj", "k_proj", "v_proj", "o_proj", "head_dim", "scaling")


def cache_tensors(past: Any, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(keys, values) [B, kv_heads, width, head_dim] of one layer of an HF DynamicCache (or of the
    rows-stacked cache of a grouped prefill, sampling._StackedCache)."""
    layers = getattr(past, "layers", None)
    if layers is not None:  # transformers ≥ 4.56
        return layers[layer].keys, layers[layer].values
    return past.key_cache[layer], past.value_cache[layer]


class StaticDecoder:
    """The KV cache of a prefill, in buffers of `total` columns, and a one-token forward over them.

    `forward(tokens)` writes the new token's keys and values at column `width + t` (t the device
    counter `self.t`), attends over every column the mask allows and leaves the last position's
    logits in `self.logits`; then the caller advances `self.t`. Nothing in it reads a value back
    to the host, so it can be captured in a CUDA graph.

    The buffers may be larger than the call (`rows`, `width` and `total` of a bucket, decode_cache.py):
    a prompt of w < `width` columns sits right-aligned in columns width − w … width − 1, with the
    columns before it masked, so the next token is always at column `width + t`; rows past the call's
    attend to one column and are done from the start. `load` puts a later call of the same bucket
    into the same buffers, so a graph captured over them replays for it.
    """

    def __init__(self, model: Any, past: Any, prompt_mask: torch.Tensor, logits: torch.Tensor,
                 next_pos: torch.Tensor, t: torch.Tensor, *, rows: int | None = None, width: int | None = None,
                 total: int):
        self.model = model
        self.base = model.model
        batch = rows or prompt_mask.shape[0]
        self.width = width or prompt_mask.shape[1]
        self.t = t
        device = prompt_mask.device
        self.mask = torch.zeros((batch, total), dtype=torch.bool, device=device)  # decode columns set as they fill
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        for i in range(len(self.base.layers)):
            k, v = cache_tensors(past, i)
            self.keys.append(k.new_zeros((batch, k.shape[1], total, k.shape[3])))
            self.values.append(v.new_zeros((batch, v.shape[1], total, v.shape[3])))
        self.logits = logits.new_zeros((batch, logits.shape[-1]))
        self.pos = next_pos.new_zeros((batch, 1))
        self.rope = _rope_function(self.base.layers[0].self_attn)
        self.load(past, prompt_mask, logits, next_pos)

    @property
    def nbytes(self) -> int:
        tensors = [*self.keys, *self.values, self.mask, self.logits, self.pos]
        tensors += [getattr(self, a) for a in ("in_ids", "in_keep", "in_pos", "causal", "eye") if hasattr(self, a)]
        return sum(x.numel() * x.element_size() for x in tensors)

    def load(self, past: Any, prompt_mask: torch.Tensor, logits: torch.Tensor, next_pos: torch.Tensor) -> None:
        """A prefill's cache ([b, heads, w, dim] a layer), its prompt mask [b, w], last logits [b, V] and
        next positions [b, 1], written in place (b ≤ rows, w ≤ width)."""
        b, w = prompt_mask.shape
        start = self.width - w
        for i in range(len(self.keys)):
            k, v = cache_tensors(past, i)
            self.keys[i][:b, :, start: self.width] = k
            self.values[i][:b, :, start: self.width] = v
        self.mask.zero_()
        self.mask[:b, start: self.width] = prompt_mask.bool()
        self.mask[b:, self.width - 1] = True  # a padding row attends to one column: no empty softmax
        self.logits.zero_()
        self.logits[:b] = logits
        self.pos.zero_()
        self.pos[:b] = next_pos

    def forward(self, tokens: torch.Tensor) -> None:
        col = self.t + self.width  # [1]
        self.mask.index_fill_(1, col, True)
        x = self.base.embed_tokens(tokens.unsqueeze(-1))  # [B, 1, H]
        cos, sin = self.base.rotary_emb(x, self.pos)
        mask = self.mask[:, None, None, :]
        batch = tokens.shape[0]
        for i, layer in enumerate(self.base.layers):
            attn = layer.self_attn
            residual = x
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(batch, 1, -1, attn.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(batch, 1, -1, attn.head_dim).transpose(1, 2)
            v = attn.v_proj(h).view(batch, 1, -1, attn.head_dim).transpose(1, 2)
            q, k = self.rope(q, k, cos, sin)
            self.keys[i].index_copy_(2, col, k.to(self.keys[i].dtype))
            self.values[i].index_copy_(2, col, v.to(self.values[i].dtype))
            o = F.scaled_dot_product_attention(q, self.keys[i], self.values[i], attn_mask=mask,
                                               scale=attn.scaling, enable_gqa=True)
            x = residual + attn.o_proj(o.transpose(1, 2).reshape(batch, 1, -1))
            residual = x
            x = residual + layer.mlp(layer.post_attention_layernorm(x))
        x = self.base.norm(x)
        self.logits.copy_(self.model.lm_head(x[:, -1, :]))
        self.pos += 1

    # ------------------------------------------------------------------ the prompt's forward, kept
    def load_prompts(self, ids: torch.Tensor, keep: torch.Tensor) -> None:
        """A call's prompts for `prefill`: ids [b, w] left-padded and keep [b, w] (True on prompt
        tokens), b ≤ rows and w ≤ width, written in place right-aligned; the rows after b and the
        columns before width − w are padding."""
        if not hasattr(self, "in_ids"):
            rows, dev = self.mask.shape[0], self.mask.device
            self.in_ids = torch.zeros((rows, self.width), dtype=torch.long, device=dev)
            self.in_keep = torch.zeros((rows, self.width), dtype=torch.bool, device=dev)
            self.in_pos = torch.zeros((rows, self.width), dtype=torch.long, device=dev)
            self.causal = torch.ones((self.width, self.width), dtype=torch.bool, device=dev).tril()
            self.eye = torch.eye(self.width, dtype=torch.bool, device=dev)
        b, w = ids.shape
        self.in_ids.zero_()
        self.in_ids[:b, self.width - w:] = ids
        self.in_keep.zero_()
        self.in_keep[:b, self.width - w:] = keep
        self.in_pos.copy_((self.in_keep.long().cumsum(-1) - 1).clamp(min=0))

    def prefill(self) -> None:
        """The prompts' forward through the model's own submodules over the loaded prompts (as HF's
        forward with their attention mask and positions computes it, to rounding): their keys and
        values fill columns 0 … width − 1, the last column's logits land in `self.logits`, and the
        mask and positions are set for the decode. Reads nothing back to the host, so it can be a
        CUDA graph too. A query attends to the prompt's earlier tokens and, so that padding columns
        (no earlier prompt token) stay finite, to itself."""
        rows, width = self.in_ids.shape
        keep = self.in_keep
        mask = ((self.causal & keep[:, None, :]) | self.eye)[:, None, :, :]  # [B, 1, W, W]
        x = self.base.embed_tokens(self.in_ids)
        cos, sin = self.base.rotary_emb(x, self.in_pos)
        for i, layer in enumerate(self.base.layers):
            attn = layer.self_attn
            residual = x
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(rows, width, -1, attn.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(rows, width, -1, attn.head_dim).transpose(1, 2)
            v = attn.v_proj(h).view(rows, width, -1, attn.head_dim).transpose(1, 2)
            q, k = self.rope(q, k, cos, sin)
            self.keys[i][:, :, :width].copy_(k)
            self.values[i][:, :, :width].copy_(v)
            # Key/value heads repeated for the query heads rather than `enable_gqa`: SDPA runs GQA only
            # in its flash and math kernels, flash takes no mask, and math holds [B, heads, W, W] scores.
            rep = q.shape[1] // k.shape[1]
            k = k.to(self.keys[i].dtype).repeat_interleave(rep, dim=1)
            v = v.to(self.values[i].dtype).repeat_interleave(rep, dim=1)
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=attn.scaling)
            x = residual + attn.o_proj(o.transpose(1, 2).reshape(rows, width, -1))
            residual = x
            x = residual + layer.mlp(layer.post_attention_layernorm(x))
        x = self.base.norm(x[:, -1:, :])
        self.logits.copy_(self.model.lm_head(x[:, -1, :]))
        self.mask.zero_()
        self.mask[:, :width].copy_(keep)
        self.mask[:, width - 1] |= ~keep.any(-1)  # a padding row attends to one column: no empty softmax
        self.pos.copy_(self.in_pos[:, -1:] + 1)


def run_kept(fn: Callable[[], None], kept: Any, attr: str, device: torch.device, use_graph: bool) -> None:
    """Runs `fn` once: as the CUDA graph held in `kept.<attr>` when there is one, else eagerly, and
    on CUDA with `use_graph` captures it there for the next call (its pool added to
    `kept.graph_bytes`). `fn` must read and write only tensors kept with the graph: later calls
    replay it over them."""
    graph = getattr(kept, attr, None)
    if graph is not None:
        graph.replay()
    elif not use_graph:
        fn()
    else:  # capture records without running; the warm-up in `_capture` did this call's work
        graph, pool = _capture(fn, device, "tcod.capture_prefill")
        setattr(kept, attr, graph)
        kept.graph_bytes += pool


def _capture(fn: Callable[[], None], device: torch.device, label: str) -> tuple[Any, int]:
    """Runs `fn` once on a side stream (the warm-up capture needs), then captures it as a CUDA graph;
    the graph and the bytes its private memory pool took (the growth of reserved memory)."""
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    # torch.cuda.graph() empties the allocator's cache as it enters, so reserved memory measured
    # before that counts the cached blocks it hands back against the pool: a capture after a large
    # prompt forward measured a negative pool, the slot cache's total went below zero and its
    # budget stopped evicting. Empty it first, as the capture would, then measure.
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved(device)
    with torch.profiler.record_function(label), _capture_autocast(device), torch.cuda.graph(graph):
        fn()
    return graph, max(0, torch.cuda.memory_reserved(device) - before)


def _rope_function(attn: Any) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """The installed transformers' `apply_rotary_pos_emb` of the attention module's own file."""
    return getattr(sys.modules[type(attn).__module__], "apply_rotary_pos_emb")


def run_steps(step: Callable[[], None], steps: int, device: torch.device, use_graph: bool,
              all_done: Callable[[], torch.Tensor], kept: Any = None) -> None:
    """Runs `step` (one decode step, its counter advanced inside) `steps` times, stopping early once
    every row is done. With `use_graph`, step 0 runs eagerly (on a side stream: it is also the
    warm-up capture needs) and the rest replay one CUDA graph of `step`. `kept` (an object with
    `graph` and `graph_bytes` attributes, decode_cache.py) holds the graph between calls: one it
    already holds is replayed without a capture (step 0 then runs eagerly on the current stream),
    and one captured here is left in it. The "all done" flag travels to the host one step late
    (non-blocking copy + event), so the host queues the next step while the device runs this one;
    at most one extra step is decoded, which changes no output."""
    flag_host = torch.zeros(1, dtype=torch.bool, pin_memory=device.type == "cuda")
    flag_event = None
    use_graph = use_graph and steps > 1
    graph = kept.graph if kept is not None and use_graph else None
    for t in range(steps):
        if t == 0 and graph is not None:
            step()
        elif t == 0 and use_graph:
            graph, pool = _capture(step, device, "tcod.capture")
            if kept is not None:
                kept.graph = graph
                kept.graph_bytes += pool
        elif graph is not None:
            graph.replay()
        else:
            step()
        if t == steps - 1:
            break
        if flag_event is not None:
            flag_event.synchronize()
            if bool(flag_host[0]):
                break
        flag_host.copy_(all_done().reshape(1), non_blocking=True)
        if device.type == "cuda":
            flag_event = torch.cuda.Event()
            flag_event.record()
        elif bool(flag_host[0]):
            break


def _capture_autocast(device: torch.device) -> Any:
    """The autocast in force, with its weight-cast cache off: a cached cast made during capture
    would be a tensor the graph reads but nothing keeps current (PyTorch's CUDA-graph notes)."""
    kind = device.type
    return torch.autocast(device_type=kind, dtype=torch.get_autocast_dtype(kind),
                          enabled=torch.is_autocast_enabled(kind), cache_enabled=False)
