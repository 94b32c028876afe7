"""Command-line options of the worker."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field

from .paths import resolve_roots


@dataclass
class Options:
    model: str
    port: int = 8100
    host: str = "127.0.0.1"
    teacher: str | None = None
    vocab: str | None = None
    lora_rank: int = 0
    lora_alpha: float | None = None
    token: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    seed: int = 0
    token_budget: int = 16384
    max_logprobs: int = 20
    served_name: str | None = None
    #: Folders /save and /load may use (resolved); see paths.py.
    roots: list[str] = field(default_factory=list)
    #: Largest request body accepted, in bytes (checked before the body is read).
    max_body: int = 512 * 1024 * 1024
    parallel: str = "auto"
    #: How sampling decodes after the prompt (sampling.DECODE_MODES).
    decode: str = "auto"
    #: Bytes of static decodes (buffers and CUDA graphs) kept between /sample calls (decode_cache.py); 0: none.
    decode_cache: int = 0
    #: Share of the GPU's memory this process's caching allocator may hold (0: no limit); see --memory-fraction.
    memory_fraction: float = 0.0
    #: How a refusal to start is printed: "text" for a person, "json" (one line) for the run that started the worker.
    error_format: str = "text"


def parse_options(argv: list[str] | None = None) -> Options:
    p = argparse.ArgumentParser(
        prog="python -m tcod_worker",
        description="tcod's worker: Tinker-shaped training/sampling endpoints and an OpenAI-compatible "
        "/v1/completions subset over HTTP. Multi-GPU: torchrun --nproc-per-node N -m tcod_worker ...",
    )
    p.add_argument("--model", required=True, help="local Hugging Face directory, `config:tiny`, or a JSON config file (tiny model from scratch)")
    p.add_argument("--port", type=int, default=8100)
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1; exposing it needs --token)")
    p.add_argument("--teacher", default=None, help="a frozen teacher beside the student (same tokenizer); enables score model=teacher and loss=reverse_kl")
    p.add_argument("--vocab", default=None, help="vocabulary file (one word per line) for config models")
    p.add_argument("--lora-rank", type=int, default=0, help="train LoRA adapters of this rank (0 = full fine-tuning)")
    p.add_argument("--lora-alpha", type=float, default=None, help="LoRA alpha (default 2 × rank)")
    p.add_argument("--token", default=None, help="bearer token required on every route but /health (or env TCOD_WORKER_TOKEN)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--dtype", default="auto", choices=["auto", "bf16", "fp16", "fp32"], help="compute dtype (auto: bf16 on GPU, fp32 on CPU)")
    p.add_argument("--seed", type=int, default=0, help="seed for LoRA init")
    p.add_argument("--token-budget", type=int, default=16384, help="max rows × longest row (padded tokens) per forward micro-batch (memory bound); "
                   "/sample's prompt forward runs in such groups of rows too (static and graph decodes)")
    p.add_argument("--max-logprobs", type=int, default=20, help="cap on logprobs/prompt_logprobs/topk (vLLM's --max-logprobs)")
    p.add_argument("--served-name", default=None, help="model id in /v1/models (default: --model)")
    p.add_argument("--root", action="append", default=None,
                   help="a folder /save and /load may use (repeatable; or env TCOD_WORKER_ROOTS, os.pathsep-separated; "
                   "default: the directory the worker starts in)")
    p.add_argument("--max-body-mb", type=float, default=512.0,
                   help="largest request body in MiB (default 512); larger requests get 413 before anything is read")
    p.add_argument("--parallel", default="auto", choices=["auto", "ddp", "fsdp"],
                   help="under torchrun: ddp (replicas, gradients all-reduced in the backward) or fsdp (FSDP2: "
                   "weights, gradients and optimiser state sharded); auto = fsdp when the student's training "
                   "state would fill more than half of one GPU")
    p.add_argument("--decode", default="auto", choices=["auto", "eager", "static", "graph"],
                   help="decode steps of /sample: graph replays one CUDA graph per token over a static KV cache "
                   "(Llama/Qwen2 models on CUDA), eager runs the model's own forward per token; auto = graph where "
                   "it applies, else eager")
    p.add_argument("--decode-cache-mb", type=float, default=0.0,
                   help="MiB of static decode buffers kept between /sample calls, with their CUDA graphs, by shape "
                   "bucket (rows, prompt width, new tokens): a call of a kept bucket replays the prompt's forward and the "
                   "decode step as graphs (no capture) but computes padded to the bucket; least recently used "
                   "evicted first (default 0: every call runs HF's prompt forward and captures afresh)")
    p.add_argument("--memory-fraction", type=float, default=0.0,
                   help="largest share (0-1] of the GPU's memory this worker's PyTorch allocator may hold "
                   "(torch.cuda.set_per_process_memory_fraction): at the limit it hands its cached, unused blocks "
                   "back to the device before allocating more, instead of keeping them, so several workers can share "
                   "one GPU within their shares; a request whose live tensors pass it fails with out of memory "
                   "(default 0: no limit; CUDA only, ignored with a notice on the CPU)")
    p.add_argument("--error-format", default="text", choices=["text", "json"],
                   help="how a refusal to start is printed on stderr: text, or one JSON line {\"tcod_worker_error\": "
                   "{message, hint, file, line, column}} for a program that started the worker (tcod run passes json)")
    a = p.parse_args(argv)
    token = a.token or os.environ.get("TCOD_WORKER_TOKEN") or None
    if not a.max_body_mb > 0:
        p.error(f"--max-body-mb must be positive, got {a.max_body_mb}")
    if not a.decode_cache_mb >= 0:
        p.error(f"--decode-cache-mb must be 0 or more, got {a.decode_cache_mb}")
    if not 0 <= a.memory_fraction <= 1:
        p.error(f"--memory-fraction must be in (0, 1] (0: no limit), got {a.memory_fraction}")
    return Options(a.model, a.port, a.host, a.teacher, a.vocab, a.lora_rank, a.lora_alpha, token, a.device, a.dtype,
                   a.seed, a.token_budget, a.max_logprobs, a.served_name,
                   resolve_roots(a.root, os.environ.get("TCOD_WORKER_ROOTS")), int(a.max_body_mb * 1024 * 1024),
                   a.parallel, a.decode, int(a.decode_cache_mb * 1024 * 1024), a.memory_fraction, a.error_format)
