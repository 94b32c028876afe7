"""The worker's state (student, optional teacher, optimiser, policy version) and its operations.

Public methods take a decoded JSON body, validate it on rank 0 (a 400 before any rank does work)
and return a JSON-able dict. Work that touches the models goes through `Comm.run`, which runs
`handle(op, request)` on every rank over that rank's shard of the items.
"""

from __future__ import annotations

import contextlib
import copy
import glob
import json
import math
import os
import pickle
import sys
import time
from typing import Any

import torch

from . import __version__, losses
from .coalesce import Coalescer
from .comm import Comm
from .decode_cache import SlotCache
from .errors import BadRequest, NotFound, StartupError, WorkerError
from .fields import Fields
from .loading import DTYPES, load_tokenizer_and_model, stop_token_ids, tokenizer_fingerprint, wrap_lora, write_word_tokenizer
from .logprobs import (SelectedLogits, chosen_logprobs, entropy_from_logprobs, micro_batches, pad_values, ranks_of,
                       right_pad, target_selection)
from .options import Options
from .parallel import Parallel, choose_mode
from .paths import confine
from .sampling import SampleRow, generate_rows, resolve_decode
from .trace import Trace
from .validate import (finite32, get_bool, get_float, get_int, get_opt_float, get_str,
                       get_temperature, numbers, text, token_id_lists, token_ids)

LOSSES = ("importance_sampling", "ppo", "cross_entropy", "reverse_kl")
ADAPTER_FILE = "adapter_config.json"
STATE_FILE = "tcod_worker_state.pt"
META_FILE = "tcod_worker.json"

# The fields each route's body may carry (anything else is a 400): the handlers read their bodies
# through these declarations (fields.py), so a field cannot be read without being declared.
TOKENIZE = Fields("/tokenize", ("text", "prompt", "messages", "add_special_tokens", "add_generation_prompt",
                                "continue_final_message", "model"))
DETOKENIZE = Fields("/detokenize", ("tokens", "skip_special_tokens", "model"))
SAMPLE = Fields("/sample", ("prompts", "max_tokens", "temperature", "top_p", "seed", "stop_token_ids", "topk",
                            "logprobs_mode", "model"))
SCORE = Fields("/score", ("sequences", "prompt_lengths", "topk", "entropy", "ranks", "temperature", "model"))
FORWARD_BACKWARD = Fields("/forward_backward", ("rows", "loss", "clip", "clip_low", "clip_high", "dual_clip",
                                                "log_ratio_clamp", "temperature", "return_logprobs"))
TRAIN_ROW = Fields("/forward_backward", ("tokens", "mask", "advantages", "old_logprobs", "loss_weights", "kl_coefs",
                                         "forward_kl_coefs", "teacher_distributions"))
TEACHER_DISTRIBUTION = Fields("/forward_backward", ("tokens", "logprobs", "rest"))
OPTIM_STEP = Fields("/optim_step", ("lr", "betas", "eps", "weight_decay", "grad_clip"))
SAVE = Fields("/save", ("path", "kind", "optimizer"))
LOAD = Fields("/load", ("path", "model", "optimizer"))


def positions(config: Any) -> int:
    """The positions a model's config gives it (max_position_embeddings); 2^30 where it gives none."""
    return int(getattr(config, "max_position_embeddings", 1 << 30) or (1 << 30))


class Worker:
    def __init__(self, opts: Options, comm: Comm):
        self.opts = opts
        self.comm = comm
        if opts.device == "auto":
            kind = "cuda" if torch.cuda.is_available() else "cpu"
        else:
            kind = opts.device
        if kind == "cuda" and not torch.cuda.is_available():
            raise StartupError("--device cuda but torch sees no GPU; use --device cpu")
        self.device = comm.device or (torch.device("cuda", torch.cuda.current_device()) if kind == "cuda" else torch.device("cpu"))
        # Before anything is loaded, so the weights count against the share too. Without a limit the
        # caching allocator keeps every block it ever held (a student's worker reached 18-33 GiB on the
        # H200 with ~8 GiB live), and several workers on one GPU run each other out of memory.
        if opts.memory_fraction > 0:
            if self.device.type == "cuda":
                torch.cuda.set_per_process_memory_fraction(opts.memory_fraction, self.device)
            else:
                print(f"tcod_worker: --memory-fraction {opts.memory_fraction} applies to CUDA devices; ignored on {self.device}",
                      file=sys.stderr, flush=True)
        dtype_name = opts.dtype if opts.dtype != "auto" else ("bf16" if kind == "cuda" else "fp32")
        self.dtype_name = dtype_name
        self.dtype = DTYPES[dtype_name]
        lora = opts.lora_rank > 0
        # Trainable full weights stay fp32 (master weights); autocast does the low-precision compute.
        student = load_tokenizer_and_model(opts.model, opts.vocab, self.dtype if lora else torch.float32)
        self.tokenizer = student.tokenizer
        self.word_tokenizer = (student.words, student.lowercase)
        model = student.model
        if lora:
            for p in model.parameters():
                p.requires_grad_(False)
            model = wrap_lora(model, opts.lora_rank, opts.lora_alpha, opts.seed)
        n_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        self.par = Parallel(comm, choose_mode(opts.parallel, comm.world, n_trainable, self.device))
        if self.par.mode == "fsdp" and lora:
            raise StartupError("--lora-rank with FSDP sharding is not supported; LoRA adapters are small, use --parallel ddp")
        self.student = self.par.shard_model(model.to(self.device).eval())
        self.teacher = None
        teacher_config = None
        if opts.teacher:
            t = load_tokenizer_and_model(opts.teacher, opts.vocab, self.dtype)
            if tokenizer_fingerprint(t.tokenizer) != tokenizer_fingerprint(self.tokenizer):
                raise StartupError(
                    f"teacher {opts.teacher} and student {opts.model} have different tokenizers (vocabulary or chat "
                    "template); token-level distillation needs one shared tokenizer"
                )
            teacher_config = t.model.config
            teacher = t.model.to(self.device).eval()
            for p in teacher.parameters():
                p.requires_grad_(False)
            self.teacher = self.par.shard_model(teacher)
        self.fingerprint = tokenizer_fingerprint(self.tokenizer)
        self.vocab_size = int(self.student.get_input_embeddings().weight.shape[0])
        self.stop_ids = stop_token_ids(self.tokenizer, self.student)
        self.pad_id = int(self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.stop_ids[0])
        #: Positions each model reads (its own config's max_position_embeddings; 2^30: none given). A
        #: teacher may read fewer than the student: /v1/models and /info report each model's own.
        self.max_len = positions(self._base_config())
        self.teacher_max_len = positions(teacher_config) if teacher_config is not None else None
        self.version = 0
        self.optimizer: torch.optim.Optimizer | None = None
        self.pending_tokens = 0
        # The training forward (DDP-wrapped under ddp) and no-grad scorers at selected positions.
        self.train_head = self.par.train_module(self.student)
        full = self.par.mode == "fsdp"
        self.heads = {"student": SelectedLogits(self.student, full_forward=full)}
        if self.teacher is not None:
            self.heads["teacher"] = SelectedLogits(self.teacher, full_forward=full)
        #: Static decodes kept between /sample calls (--decode-cache-mb; decode_cache.py).
        self.decode_cache = SlotCache(opts.decode_cache) if opts.decode_cache > 0 else None
        #: Concurrent /sample and /score requests run as one batch (set by the server: its model thread).
        self.coalescer: Coalescer | None = None
        self.trace = Trace.from_env() if comm.rank == 0 else Trace(None)

    # ---------------------------------------------------------------- helpers
    def _base_config(self) -> Any:
        return self.student.config

    @property
    def lora(self) -> bool:
        return self.opts.lora_rank > 0

    def _trainable(self) -> list[torch.nn.Parameter]:
        return [p for p in self.student.parameters() if p.requires_grad]

    def _autocast(self) -> Any:
        if self.dtype == torch.float32:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.dtype)

    def _model(self, name: str) -> Any:
        if name == "teacher":
            if self.teacher is None:
                raise BadRequest("this worker holds no teacher; start it with --teacher PATH to score or train against one")
            return self.teacher
        return self.student

    def _head(self, name: str) -> SelectedLogits:
        self._model(name)
        return self.heads[name]

    @property
    def served_name(self) -> str:
        return self.opts.served_name or self.opts.model

    def _max_len(self, name: str) -> int:
        """Positions model `name` ("student" or "teacher") reads."""
        return self.teacher_max_len if name == "teacher" and self.teacher_max_len is not None else self.max_len

    def _check_length(self, n: int, what: str, model: str = "student") -> None:
        limit = self._max_len(model)
        if n > limit:
            raise BadRequest(f"{what} has {n} tokens, more than the {model} model's {limit} positions",
                             hint=f"The {model} model reads at most {limit} tokens (max_position_embeddings in its config): give it "
                             "more positions, or make episodes shorter (fewer max_turns, an agent format whose memory keeps fewer turns).")

    def handle(self, op: str, req: dict[str, Any]) -> Any:
        """Runs on every rank (rank 0 included) for ops that touch the models."""
        if op == "sample":
            return self._sample_local(req)
        if op == "score":
            return self._score_local(req)
        if op == "forward_backward":
            return self._forward_backward_local(req)
        if op == "optim_step":
            return self._optim_step_local(req)
        if op == "load":
            return self._load_local(req)
        if op == "save":
            # FSDP: every rank takes part in gathering the full weights; rank 0 writes them.
            return self._save_local(req) if self.comm.rank == 0 or self.par.mode == "fsdp" else None
        raise WorkerError(f"unknown internal op {op!r}")

    def _run(self, op: str, req: dict[str, Any]) -> list[Any]:
        return self.comm.run(op, req, self.handle)

    # ---------------------------------------------------------------- info
    def _memory_info(self) -> dict[str, Any]:
        """The allocator's limit (--memory-fraction; None when there is none or on the CPU) and its
        reserved memory now and at its peak, in GiB (None on the CPU)."""
        cuda = self.device.type == "cuda"
        frac = self.opts.memory_fraction if cuda and self.opts.memory_fraction > 0 else None
        total = torch.cuda.get_device_properties(self.device).total_memory if cuda else 0
        gib = lambda b: round(b / 2**30, 3)  # noqa: E731
        return {"fraction": frac, "limit_gib": gib(frac * total) if frac else None,
                "reserved_gib": gib(torch.cuda.memory_reserved(self.device)) if cuda else None,
                "peak_reserved_gib": gib(torch.cuda.max_memory_reserved(self.device)) if cuda else None}

    def info(self) -> dict[str, Any]:
        return {
            "model": self.served_name,
            "teacher": self.opts.teacher,
            "vocab_size": self.vocab_size,
            "tokenizer_vocab_size": len(self.tokenizer),
            "tokenizer_fingerprint": self.fingerprint,
            "stop_token_ids": self.stop_ids,
            "pad_token_id": self.pad_id,
            "max_model_len": self.max_len,
            "teacher_max_model_len": self.teacher_max_len,
            "device": str(self.device),
            "dtype": self.dtype_name,
            "lora_rank": self.opts.lora_rank,
            "world_size": self.comm.world,
            "parallel": self.par.mode,
            "decode": resolve_decode(self.opts.decode, self.student, self.device, self.par.lockstep),
            "decode_cache": None if self.decode_cache is None else {
                "budget_mib": self.decode_cache.budget / 2**20, "slots": len(self.decode_cache),
                "mib": round(self.decode_cache.nbytes() / 2**20, 1), "hits": self.decode_cache.hits,
                "misses": self.decode_cache.misses, "dropped": self.decode_cache.dropped},
            "peak_memory_gib": (torch.cuda.max_memory_allocated(self.device) / 2**30) if self.device.type == "cuda" else None,
            "memory": self._memory_info(),
            "version": self.version,
            "worker_version": __version__,
            "losses": [l for l in LOSSES if l != "reverse_kl" or self.teacher is not None],
            "endpoints": {
                "sample": True, "score": True, "forward_backward": True, "optim_step": True, "save": True,
                "load": True, "tokenize": True, "detokenize": True, "v1_completions": True, "v1_models": True,
                "score_teacher": self.teacher is not None, "reverse_kl": self.teacher is not None,
                "save_lora": self.lora,
            },
        }

    # ---------------------------------------------------------------- tokenizer
    @staticmethod
    def _tokenizer_model(body: dict[str, Any]) -> None:
        """`model` on /tokenize and /detokenize: vLLM's shape (tcod's client sends it). Student and
        teacher share one tokenizer (a teacher whose tokenizer differs is refused at start), so it
        selects nothing; it must still be a string."""
        if body.get("model") is not None:
            text(body["model"], "`model`")

    def tokenize(self, body: Any) -> dict[str, Any]:
        body = TOKENIZE.accept(body)
        self._tokenizer_model(body)
        given = [k for k in ("messages", "text", "prompt") if body.get(k) is not None]
        if len(given) > 1:
            both = " and ".join(f"`{k}`" for k in given)
            raise BadRequest(f"send one of `messages`, `text` or `prompt` to tokenize, not {both}")
        if "messages" in body:
            msgs = body["messages"]
            if not isinstance(msgs, list) or not msgs or not all(
                    isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                    for m in msgs):
                raise BadRequest("`messages` must be a non-empty list of {role: string, content: string}")
            for i, m in enumerate(msgs):
                text(m["role"], f"messages[{i}].role")
                text(m["content"], f"messages[{i}].content")
            if not self.tokenizer.chat_template:
                raise BadRequest("this model's tokenizer has no chat template; send `text` instead")
            # Continuing the final message and opening a new assistant turn exclude each other; the
            # generation prompt defaults to off when the final message is continued.
            cont = get_bool(body, "continue_final_message", False)
            gen = get_bool(body, "add_generation_prompt", not cont)
            if cont and gen:
                raise BadRequest("`continue_final_message` and `add_generation_prompt` exclude each other: continue "
                                 "the final message or open a new assistant turn, not both")
            if get_bool(body, "add_special_tokens", False):
                # vLLM's meaning: special tokens (a BOS) on top of what the chat template writes.
                rendered = self.tokenizer.apply_chat_template(
                    msgs, tokenize=False, add_generation_prompt=gen, continue_final_message=cont)
                ids = self.tokenizer.encode(rendered, add_special_tokens=True)
            else:
                ids = self.tokenizer.apply_chat_template(
                    msgs, tokenize=True, add_generation_prompt=gen, continue_final_message=cont, return_dict=False)
            if isinstance(ids, dict) or hasattr(ids, "keys"):
                ids = ids["input_ids"]
        else:
            for chat_only in ("add_generation_prompt", "continue_final_message"):
                if body.get(chat_only) is not None:
                    raise BadRequest(f"`{chat_only}` applies to `messages` (a chat); this request tokenizes text")
            key = "text" if body.get("text") is not None else "prompt"
            s = body.get(key)
            if not isinstance(s, str):
                raise BadRequest("send `text` (a string; `prompt` is the same field in vLLM's shape) or `messages` "
                                 "(a chat) to tokenize")
            ids = self.tokenizer.encode(text(s, f"`{key}`"), add_special_tokens=get_bool(body, "add_special_tokens", True))
        ids = [int(i) for i in ids]
        return {"tokens": ids, "count": len(ids), "max_model_len": self.max_len}

    def detokenize(self, body: Any) -> dict[str, Any]:
        body = DETOKENIZE.accept(body)
        self._tokenizer_model(body)
        ids = token_ids(body.get("tokens"), "`tokens`", self.vocab_size)
        text = self.tokenizer.decode(ids, skip_special_tokens=get_bool(body, "skip_special_tokens", False))
        return {"prompt": text, "text": text}

    # ---------------------------------------------------------------- sample
    def _sample_request(self, body: dict[str, Any], *, default_mode: str = "processed") -> dict[str, Any]:
        prompts = token_id_lists(body, "prompts", self.vocab_size)
        max_tokens = get_int(body, "max_tokens", 64, lo=0)
        model = get_str(body, "model", "student", choices=("student", "teacher"))
        for i, p in enumerate(prompts):
            if not p:
                raise BadRequest(f"prompts[{i}] is empty; a prompt needs at least one token")
            self._check_length(len(p) + max_tokens, f"prompts[{i}] plus max_tokens", model)
        seed = body.get("seed", 0)
        if isinstance(seed, list):
            if len(seed) != len(prompts) or not all(isinstance(s, int) and not isinstance(s, bool) for s in seed):
                raise BadRequest("`seed` must be an integer or a list of one integer per prompt")
            seeds = [int(s) for s in seed]
        else:
            base = get_int(body, "seed", 0)
            seeds = [base + i for i in range(len(prompts))]  # row i of a batch: seed + i
        stops = body.get("stop_token_ids")
        stop_ids = self.stop_ids if stops is None else token_ids(stops, "`stop_token_ids`", self.vocab_size)
        return {
            "prompts": prompts, "max_tokens": max_tokens,
            "temperature": get_temperature(body, greedy=True),
            "top_p": get_float(body, "top_p", 1.0, lo=1e-6, hi=1.0),
            "seeds": seeds, "stop_ids": list(stop_ids),
            "model": model,
            "logprobs_mode": get_str(body, "logprobs_mode", default_mode, choices=("processed", "raw")),
            "topk": get_int(body, "topk", 0, lo=0, hi=self.opts.max_logprobs),
        }

    def _sample_local(self, req: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        """Rows of one or more merged requests (`req["rows"]`), this rank's share; (index, sample) pairs."""
        rows = [SampleRow(**r) for r in req["rows"]]
        mine = self.par.my_share([len(r.prompt) + r.max_tokens for r in rows])
        work = [rows[i] for i in mine]
        steps = None
        if self.par.lockstep:  # every rank decodes the same number of steps, a rank without rows a dummy row
            steps = self.par.lockstep_max(max((r.max_tokens for r in work), default=0))
            work = work or [SampleRow([self.pad_id], steps)]
        with torch.no_grad(), self._autocast():
            outs = generate_rows(self._model(req["model"]), work, pad_id=self.pad_id, device=self.device, steps=steps,
                                 decode=self.opts.decode, cache=self.decode_cache, prefill_tokens=self.opts.token_budget)
        if self.decode_cache is not None and self.device.type == "cuda":  # what an eviction freed goes back to the device
            self.decode_cache.release(torch.cuda.empty_cache)
        result = []
        for i, o in zip(mine, outs):
            item: dict[str, Any] = {"tokens": o.tokens, "logprobs": o.logprobs, "finish_reason": o.finish_reason}
            if rows[i].topk:
                item["top_logprobs"] = [[{"token": t, "logprob": lp} for t, lp in pos] for pos in o.top]
            result.append((i, item))
        return result

    @staticmethod
    def _sample_rows(req: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"prompt": p, "max_tokens": req["max_tokens"], "temperature": req["temperature"], "top_p": req["top_p"],
                 "seed": s, "stop_ids": tuple(req["stop_ids"]), "raw": req["logprobs_mode"] == "raw", "topk": req["topk"]}
                for p, s in zip(req["prompts"], req["seeds"])]

    def _samples_many(self, reqs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        """Validated sample requests (same model) as one decode; the samples of each request."""
        rows = [r for req in reqs for r in self._sample_rows(req)]
        t0 = self.trace.start()
        flat = self._gathered("sample", {"rows": rows, "model": reqs[0]["model"]}, len(rows))
        if self.trace.on:
            self.trace.write("sample", t0, {"model": reqs[0]["model"], "prompts": [r["prompt"] for r in rows],
                                            "responses": [x["tokens"] for x in flat],
                                            "max_tokens": [r["max_tokens"] for r in rows]})
        out, at = [], 0
        for req in reqs:
            out.append(flat[at: at + len(req["prompts"])])
            at += len(req["prompts"])
        return out

    def _samples(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        if self.coalescer is None:
            return self._samples_many([req])[0]
        return self.coalescer.submit(("sample", req["model"]), req, self._samples_many)

    def _gathered(self, op: str, req: dict[str, Any], n: int) -> list[Any]:
        """Runs `op` on every rank; the (index, item) pairs of all ranks, back in request order."""
        out: list[Any] = [None] * n
        for part in self._run(op, req):
            for i, item in part:
                out[i] = item
        return out

    def sample(self, body: Any) -> dict[str, Any]:
        req = self._sample_request(SAMPLE.accept(body))
        return {"samples": self._samples(req), "version": self.version}

    # ---------------------------------------------------------------- score
    def _score_request(self, body: dict[str, Any]) -> dict[str, Any]:
        seqs = token_id_lists(body, "sequences", self.vocab_size)
        pls = body.get("prompt_lengths")
        model = get_str(body, "model", "student", choices=("student", "teacher"))
        if not isinstance(pls, list) or len(pls) != len(seqs):
            raise BadRequest("`prompt_lengths` must be a list with one integer per sequence")
        for i, (s, pl) in enumerate(zip(seqs, pls)):
            if isinstance(pl, bool) or not isinstance(pl, int) or pl < 1 or pl > len(s):
                raise BadRequest(f"prompt_lengths[{i}] = {pl!r} must be an integer in [1, {len(s)}] "
                                 "(the first token has no context to be scored in)")
            self._check_length(len(s), f"sequences[{i}]", model)
        return {
            "sequences": seqs, "prompt_lengths": pls,
            "topk": get_int(body, "topk", 0, lo=0, hi=self.opts.max_logprobs),
            "entropy": get_bool(body, "entropy", False),
            "ranks": get_bool(body, "ranks", False),
            "temperature": get_temperature(body),
            "model": model,
        }

    def _synchronized_clock(self) -> float:
        """perf_counter once the device has finished the work queued so far (traced timings only)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter()

    def _score_local(self, req: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        """Sequences of one or more merged requests: teacher or student log-probs of every token after
        its prompt, in length-sorted micro-batches of at most --token-budget padded tokens, the output
        head run only at scored positions; extras (top-k, entropy, ranks) only where asked."""
        seqs, pls, temps = req["sequences"], req["prompt_lengths"], req["temperatures"]
        topks, ents, rks = req["topk"], req["entropy"], req["ranks"]
        mine = self.par.my_share([len(s) for s in seqs])
        head = self._head(req["model"])
        groups = self.par.equalize([[mine[j] for j in g] for g in micro_batches([len(seqs[i]) for i in mine],
                                                                                 self.opts.token_budget)])
        results: list[tuple[int, dict[str, Any]]] = []
        for group in groups:
            if not group:  # lockstep filler: the same collectives, no rows
                with torch.no_grad(), self._autocast():
                    ids = torch.full((1, 2), self.pad_id, dtype=torch.long, device=self.device)
                    head(ids, torch.ones_like(ids, dtype=torch.bool))
                continue
            rows = [seqs[i] for i in group]
            lengths = [len(r) for r in rows]
            ids = right_pad(rows, self.pad_id, self.device)
            sel = target_selection(lengths, [pls[i] for i in group], ids.shape[1], self.device)
            counts = [n - pls[i] for n, i in zip(lengths, group)]
            targets = torch.cat([ids[:, 1:], ids[:, :1]], dim=1)[sel]
            t = torch.tensor([temps[i] for i in group], dtype=torch.float32).to(self.device, non_blocking=True)
            t = t.repeat_interleave(torch.tensor(counts, device=self.device)).unsqueeze(-1)
            timed = self.trace.on
            if timed:
                f0 = self._synchronized_clock()
            with torch.no_grad(), self._autocast():
                logits = head(ids, sel)
            with torch.no_grad():
                chosen = chosen_logprobs(logits, targets, t)
                if timed:
                    self.trace.add("forward_s", self._synchronized_clock() - f0)
                extras: dict[str, list[Any]] = {}
                k = max(topks[i] for i in group)
                if k or any(ents[i] for i in group) or any(rks[i] for i in group):
                    lp_all = torch.log_softmax(logits.float() / t, dim=-1)
                    if k:
                        tv, ti = lp_all.topk(min(k, lp_all.shape[-1]), dim=-1)
                        extras["topk"] = list(zip(ti.tolist(), tv.tolist()))
                    if any(ents[i] for i in group):
                        extras["entropy"] = entropy_from_logprobs(lp_all).tolist()
                    if any(rks[i] for i in group):
                        extras["ranks"] = ranks_of(lp_all, chosen).tolist()
                flat = chosen.tolist()
            at = 0
            for i, c in zip(group, counts):
                res: dict[str, Any] = {"logprobs": flat[at: at + c]}
                if topks[i]:
                    res["topk"] = [[{"token": tok, "logprob": v} for tok, v in zip(tis[: topks[i]], tvs[: topks[i]])]
                                   for tis, tvs in extras["topk"][at: at + c]]
                if ents[i]:
                    res["entropy"] = extras["entropy"][at: at + c]
                if rks[i]:
                    res["ranks"] = extras["ranks"][at: at + c]
                results.append((i, res))
                at += c
            del logits
        return results

    def _scores_many(self, reqs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        """Validated score requests (same model) as one batch; the results of each request."""
        merged: dict[str, Any] = {"sequences": [], "prompt_lengths": [], "temperatures": [], "topk": [], "entropy": [],
                                  "ranks": [], "model": reqs[0]["model"]}
        for req in reqs:
            n = len(req["sequences"])
            merged["sequences"] += req["sequences"]
            merged["prompt_lengths"] += req["prompt_lengths"]
            merged["temperatures"] += [req["temperature"]] * n
            for key in ("topk", "entropy", "ranks"):
                merged[key] += [req[key]] * n
        t0 = self.trace.start()
        flat = self._gathered("score", merged, len(merged["sequences"]))
        if self.trace.on:
            self.trace.write("score", t0, {"model": merged["model"], "sequences": merged["sequences"],
                                           "prompt_lengths": merged["prompt_lengths"]})
        out, at = [], 0
        for req in reqs:
            out.append(flat[at: at + len(req["sequences"])])
            at += len(req["sequences"])
        return out

    def _scores(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        if self.coalescer is None:
            return self._scores_many([req])[0]
        return self.coalescer.submit(("score", req["model"]), req, self._scores_many)

    def score(self, body: Any) -> dict[str, Any]:
        req = self._score_request(SCORE.accept(body))
        return {"results": self._scores(req), "version": self.version}

    # ---------------------------------------------------------------- forward_backward
    def _fb_request(self, body: dict[str, Any]) -> dict[str, Any]:
        loss = get_str(body, "loss", choices=LOSSES)
        if loss == "reverse_kl" and self.teacher is None:
            raise BadRequest("loss reverse_kl needs the teacher beside the student: start the worker with --teacher PATH")
        rows_in = body.get("rows")
        if not isinstance(rows_in, list) or not rows_in:
            raise BadRequest("`rows` must be a non-empty list of {tokens, mask, advantages, old_logprobs, loss_weights}")
        needs_policy = loss in ("importance_sampling", "ppo")
        rows = []
        total_mask = 0.0
        for i, row in enumerate(rows_in):
            row = TRAIN_ROW.accept(row, f"rows[{i}]")
            toks = token_ids(row.get("tokens"), f"rows[{i}].tokens", self.vocab_size)
            if len(toks) < 2:
                raise BadRequest(f"rows[{i}].tokens needs at least 2 tokens (a context and a target)")
            self._check_length(len(toks), f"rows[{i}].tokens")
            if loss == "reverse_kl":  # the teacher reads the row too
                self._check_length(len(toks), f"rows[{i}].tokens", "teacher")
            n = len(toks)
            mask = numbers(row.get("mask"), f"rows[{i}].mask", n)
            if any(m not in (0.0, 1.0) for m in mask):
                raise BadRequest(f"rows[{i}].mask must hold only 0 and 1")
            if mask[0] != 0.0:
                raise BadRequest(f"rows[{i}].mask[0] must be 0: the first token has no context to be predicted from")
            out = {"tokens": toks, "mask": mask}
            for key in ("advantages", "old_logprobs"):
                if needs_policy or row.get(key) is not None:
                    if row.get(key) is None:
                        if key == "old_logprobs" and "old_logprobs" in row:
                            # An explicit null: the model's own log-probabilities at this update, so the
                            # ratio is exactly 1 and the loss is −A·logp's gradient (SFT demonstrations,
                            # which then need no /score call before training).
                            out["self_scored"] = True
                            continue
                        raise BadRequest(f"rows[{i}].{key} is required for loss {loss} (old_logprobs may be "
                                         "null: the model's own log-probabilities at this update, ratio 1)")
                    out[key] = numbers(row.get(key), f"rows[{i}].{key}", n)
            if row.get("loss_weights") is not None:
                out["loss_weights"] = numbers(row.get("loss_weights"), f"rows[{i}].loss_weights", n)
            kl = self._kl_targets(row, i, mask)
            if kl:
                if loss == "reverse_kl":
                    raise BadRequest(f"rows[{i}]: kl_coefs / forward_kl_coefs add to importance_sampling, ppo or "
                                     "cross_entropy; loss reverse_kl already is the KL to this worker's teacher")
                out["kl"] = kl
            out["selected"] = int(sum(mask))
            total_mask += sum(mask)
            rows.append(out)
        if total_mask == 0:
            raise BadRequest("no row has a 1 in its mask: nothing to train on")
        given = [("loss_weights" in r) for r in rows]
        if any(given) and not all(given):
            raise BadRequest("give loss_weights on every row or on none (none = token mean over the batch)")
        if not any(given):  # default aggregate: token mean over the whole request (all ranks)
            for r in rows:
                r["loss_weights"] = [m / total_mask for m in r["mask"]]
        clip = get_float(body, "clip", 0.2, lo=0.0)
        # dual_clip: 3.0 by default (verl/Trinity clip_ratio_c); an explicit null turns it off.
        dual = None if ("dual_clip" in body and body["dual_clip"] is None) else get_float(body, "dual_clip", 3.0, lo=1.0)
        return {
            "loss": loss, "rows": rows,
            "clip_low": get_float(body, "clip_low", clip, lo=0.0),
            "clip_high": get_float(body, "clip_high", clip, lo=0.0),
            "dual_clip": dual,
            "log_ratio_clamp": get_opt_float(body, "log_ratio_clamp", lo=0.0),
            "temperature": get_temperature(body),
            "return_logprobs": get_bool(body, "return_logprobs", False),
        }

    def _kl_targets(self, row: dict[str, Any], i: int, mask: list[float]) -> list[tuple[Any, ...]]:
        """A row's exact-KL targets, checked: (index among the row's masked positions, reverse coef,
        forward coef, tokens, logprobs, rest) for each position with a nonzero coefficient."""
        n = len(mask)
        rc = numbers(row["kl_coefs"], f"rows[{i}].kl_coefs", n) if row.get("kl_coefs") is not None else None
        fc = (numbers(row["forward_kl_coefs"], f"rows[{i}].forward_kl_coefs", n)
              if row.get("forward_kl_coefs") is not None else None)
        dists = row.get("teacher_distributions")
        if dists is None:
            if fc is not None:
                raise BadRequest(f"rows[{i}]: forward_kl_coefs come with teacher_distributions "
                                 "(the next-token distributions the KL is taken to); they are missing")
            t = next((t for t, a in enumerate(rc or []) if a != 0.0), None)
            if t is not None:
                raise BadRequest(f"rows[{i}] position {t}: kl coefficient {rc[t]} but the row has no "
                                 "teacher_distributions (the next-token distributions the KL is taken to)")
            return []
        if not isinstance(dists, list) or len(dists) != n:
            got = len(dists) if isinstance(dists, list) else type(dists).__name__
            raise BadRequest(f"rows[{i}].teacher_distributions must be a list of {n} entries (one per token, "
                             f"each null or {{tokens, logprobs, rest}}), got {got}")
        out: list[tuple[Any, ...]] = []
        before = 0  # masked positions before token t: t's index among the row's selected positions
        for t in range(n):
            a = rc[t] if rc is not None else 0.0
            b = fc[t] if fc is not None else 0.0
            d = dists[t]
            q = None if d is None else self._teacher_distribution(d, f"rows[{i}].teacher_distributions[{t}]")
            if a != 0.0 or b != 0.0:
                if mask[t] != 1.0:
                    raise BadRequest(f"rows[{i}] position {t}: kl coefficient {a}, forward {b} where mask is 0; "
                                     "KL targets train masked positions only")
                if q is None:
                    raise BadRequest(f"rows[{i}] position {t}: kl coefficient {a}, forward {b} but "
                                     f"teacher_distributions[{t}] is null")
                out.append((before, a, b, *q))
            before += int(mask[t])
        return out

    def _teacher_distribution(self, d: Any, where: str) -> tuple[list[int], list[float], float | None]:
        """One next-token distribution {tokens, logprobs, rest}, checked like the embedded student's
        (ids distinct and in range, finite, normalised) but to 1e-3: served teachers report bf16
        log-probabilities."""
        if not isinstance(d, dict):
            raise BadRequest(f"{where} must be null or {{tokens, logprobs, rest}}, got {type(d).__name__}")
        d = TEACHER_DISTRIBUTION.accept(d, where)
        V = self.vocab_size
        toks = token_ids(d.get("tokens"), f"{where}.tokens", V)
        lps = d.get("logprobs")
        if not isinstance(lps, list) or len(lps) != len(toks):
            got = len(lps) if isinstance(lps, list) else type(lps).__name__
            raise BadRequest(f"{where}: tokens lists {len(toks)} ids but logprobs has {got} entries; give one per token")
        lps = numbers(lps, f"{where}.logprobs", len(toks))
        if len(set(toks)) != len(toks):
            raise BadRequest(f"{where}: tokens repeat an id; list each token once")
        rest = d.get("rest")
        if rest is None:
            if len(toks) != V:
                raise BadRequest(f"{where}: lists {len(toks)} of {V} tokens and rest is null; give rest, the "
                                 "log-probability of every unlisted token, or list the whole vocabulary")
        elif isinstance(rest, bool) or not isinstance(rest, (int, float)) or not finite32(rest):
            raise BadRequest(f"{where}.rest must be a finite number or null (within float32's ±3.4e38), got {rest!r}")
        total = math.fsum(math.exp(min(x, 700.0)) for x in lps)  # min: a huge logprob fails the sum, not exp()
        if rest is not None:
            total += (V - len(toks)) * math.exp(min(rest, 700.0))
        if abs(total - 1.0) > 1e-3:
            raise BadRequest(f"{where}: the distribution sums to {total:.6g}, not 1 (listed tokens plus "
                             f"{V - len(toks)} unlisted at exp(rest)); normalise the teacher's next-token distribution")
        return toks, lps, None if rest is None else float(rest)

    def _forward_backward_local(self, req: dict[str, Any]) -> dict[str, Any]:
        """This rank's share of the rows in length-sorted micro-batches; gradients accumulate locally
        and synchronise (DDP/FSDP) in the backward of the last micro-batch. Statistics are summed on
        the device and read once."""
        rows = req["rows"]
        mine = self.par.my_share([len(x["tokens"]) for x in rows])
        groups = self.par.equalize([[mine[j] for j in g] for g in micro_batches([len(rows[i]["tokens"]) for i in mine],
                                                                                self.opts.token_budget)])
        if not groups:  # DDP: a rank without rows still takes part in the gradient all-reduce
            groups = [[]]
        # loss, tokens, ratio_sum, clipped, kl_sum, logprob_sum, then the exact-KL targets' sums and
        # counts, then the logprob sum and token count of self-scored rows (old_logprobs null)
        acc = torch.zeros(12, dtype=torch.float64, device=self.device)
        row_logprobs: list[tuple[int, list[float]]] = []
        loss_name = req["loss"]
        temp = req["temperature"] if loss_name == "reverse_kl" else 1.0
        module = self.train_head
        for k, group in enumerate(groups):
            with self.par.accumulate(module, last=k == len(groups) - 1):
                if not group:
                    ids = torch.full((1, 2), self.pad_id, dtype=torch.long, device=self.device)
                    with self._autocast():
                        logits = module(ids, torch.ones_like(ids, dtype=torch.bool))
                    (logits.float().sum() * 0.0).backward()
                    continue
                grp = [rows[i] for i in group]
                ids = right_pad([x["tokens"] for x in grp], self.pad_id, self.device)
                width = ids.shape[1]
                # Position p predicts token p + 1: every per-token array is read from offset 1.
                sel = pad_values([x["mask"] for x in grp], width, self.device, offset=1) > 0
                weights = pad_values([x["loss_weights"] for x in grp], width, self.device, offset=1)[sel]
                targets = torch.cat([ids[:, 1:], ids[:, :1]], dim=1)[sel]
                with self._autocast():
                    logits = module(ids, sel)
                lp = chosen_logprobs(logits, targets, temp)
                if loss_name == "reverse_kl":
                    with torch.no_grad(), self._autocast():
                        t_logits = self.heads["teacher"](ids, sel)
                    per = losses.reverse_kl(logits, t_logits, temp)
                    acc[4] += per.detach().sum()
                elif loss_name == "cross_entropy":
                    per = losses.cross_entropy(lp)
                else:
                    adv = pad_values([x["advantages"] for x in grp], width, self.device, offset=1)[sel]
                    old = pad_values([x.get("old_logprobs", []) for x in grp], width, self.device, offset=1)[sel]
                    if any(x.get("self_scored") for x in grp):
                        own = torch.tensor([bool(x.get("self_scored")) for x in grp], device=self.device)
                        own = own.unsqueeze(1).expand(-1, width)[sel]
                        old = torch.where(own, lp.detach(), old)
                        acc[10] += (lp.detach() * own).sum()
                        acc[11] += own.sum()
                    if loss_name == "importance_sampling":
                        per = losses.importance_sampling(lp, old, adv, req["log_ratio_clamp"])
                        ratio = torch.exp(lp.detach() - old)
                    else:
                        terms = losses.ppo(lp, old, adv, req["clip_low"], req["clip_high"], req["dual_clip"])
                        per, ratio = terms.loss, terms.ratio.detach()
                        acc[3] += terms.clipped.sum()
                    acc[2] += ratio.sum()
                    acc[4] += (old - lp.detach()).sum()
                if any(x.get("kl") for x in grp):
                    per = self._add_kl_targets(per, logits, grp, acc)
                loss = losses.aggregate(per, weights)
                (loss * self.par.grad_scale).backward()
                acc[0] += loss.detach()
                acc[1] += sel.sum()
                acc[5] += lp.detach().sum()
                if req["return_logprobs"]:
                    full = torch.zeros(sel.shape, dtype=torch.float32, device=self.device)
                    full[sel] = lp.detach().float()
                    full_l = full.tolist()
                    for j, i in enumerate(group):
                        row_logprobs.append((i, [0.0] + full_l[j][: len(rows[i]["tokens"]) - 1]))
                del logits, lp
        keys = ("loss", "tokens", "ratio_sum", "clipped", "kl_sum", "logprob_sum",
                "target_rkl_sum", "target_rkl_n", "target_fkl_sum", "target_fkl_n", "self_logprob_sum", "self_n")
        return {"stats": dict(zip(keys, acc.tolist())), "logprobs": row_logprobs}

    def _add_kl_targets(self, per: torch.Tensor, logits: torch.Tensor, grp: list[dict[str, Any]],
                        acc: torch.Tensor) -> torch.Tensor:
        """per + kl_coef·KL(p_S ‖ q) + forward_kl_coef·KL(q ‖ p_S) at the group's positions with KL
        targets. `per` and `logits` run over the selected positions row by row (row-major, as `sel`),
        so a target's position is its row's offset plus its index among the row's masked tokens."""
        idx, rc, fc, dists = [], [], [], []
        offset = 0
        for x in grp:
            for at, a, b, toks, lps, rest in x.get("kl", ()):
                idx.append(offset + at)
                rc.append(a)
                fc.append(b)
                dists.append((toks, lps, rest))
            offset += x["selected"]
        at = torch.tensor(idx, dtype=torch.long).to(self.device)
        q = losses.sparse_logq(dists, self.device)
        # fp32 at temperature 1, as the policy loss; only the positions with targets.
        log_probs = torch.log_softmax(logits[at].float(), dim=-1)
        extra = torch.zeros(len(idx), dtype=torch.float32, device=self.device)
        for coefs, fn, k in ((rc, losses.exact_reverse_kl, 6), (fc, losses.exact_forward_kl, 8)):
            on = [c != 0.0 for c in coefs]
            if not any(on):
                continue
            kl = fn(log_probs, q)
            c = torch.tensor(coefs, dtype=torch.float32).to(self.device)
            extra = extra + c * kl
            acc[k] += (kl.detach() * (c != 0)).sum()
            acc[k + 1] += sum(on)
        return per.index_add(0, at, extra)

    def forward_backward(self, body: Any) -> dict[str, Any]:
        req = self._fb_request(FORWARD_BACKWARD.accept(body))
        t0 = self.trace.start()
        parts = self._run("forward_backward", req)
        if self.trace.on:
            self.trace.write("forward_backward", t0, {"loss": req["loss"], "rows": [
                {"tokens": r["tokens"], "mask": r["mask"]} for r in req["rows"]]})
        total = {k: sum(p["stats"][k] for p in parts) for k in parts[0]["stats"]}
        tokens = total["tokens"]
        self.pending_tokens += int(tokens)
        out: dict[str, Any] = {"loss": total["loss"], "tokens": int(tokens), "rows": len(req["rows"]),
                               "loss_fn": req["loss"], "version": self.version,
                               "metrics": {"logprob_mean": total["logprob_sum"] / tokens}}
        if req["loss"] in ("importance_sampling", "ppo"):
            out["metrics"]["ratio_mean"] = total["ratio_sum"] / tokens
            out["metrics"]["kl_sampled_mean"] = total["kl_sum"] / tokens
        if req["loss"] == "ppo":
            out["metrics"]["clip_fraction"] = total["clipped"] / tokens
        if total["self_n"]:  # rows with old_logprobs null: their mean −logp before this update
            out["metrics"]["self_scored_nll"] = -total["self_logprob_sum"] / total["self_n"]
            out["metrics"]["self_scored_tokens"] = total["self_n"]
        if req["loss"] == "reverse_kl":
            out["metrics"]["reverse_kl_mean"] = total["kl_sum"] / tokens
        # Exact-KL targets: means over the positions whose coefficient is nonzero.
        if total["target_rkl_n"]:
            out["metrics"]["reverse_kl_mean"] = total["target_rkl_sum"] / total["target_rkl_n"]
        if total["target_fkl_n"]:
            out["metrics"]["forward_kl_mean"] = total["target_fkl_sum"] / total["target_fkl_n"]
        if req["return_logprobs"]:
            lps: list[Any] = [None] * len(req["rows"])
            for p in parts:
                for i, lp in p["logprobs"]:
                    lps[i] = lp
            out["logprobs"] = lps
        return out

    # ---------------------------------------------------------------- optim_step
    def _optim_request(self, body: dict[str, Any]) -> dict[str, Any]:
        betas = body.get("betas", [0.9, 0.95])
        if (not isinstance(betas, list) or len(betas) != 2
                or not all(isinstance(b, (int, float)) and not isinstance(b, bool) and 0 <= b < 1 for b in betas)):
            raise BadRequest("`betas` must be [beta1, beta2] with each in [0, 1)")
        grad_clip = get_opt_float(body, "grad_clip", lo=0.0)
        return {
            "lr": get_float(body, "lr", lo=0.0, hi=10.0),  # the language's own guard bound (lr ≤ 10)
            "betas": [float(b) for b in betas],
            "eps": get_float(body, "eps", 1e-8, lo=0.0),
            "weight_decay": get_float(body, "weight_decay", 0.0, lo=0.0),
            "grad_clip": grad_clip if grad_clip else None,
        }

    def _optim_step_local(self, req: dict[str, Any]) -> dict[str, Any]:
        params = self._trainable()
        for p in params:  # a parameter no loss reached (e.g. a LoRA layer outside the batch) has no gradient
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        # Gradients are already the batch's on every rank (DDP/FSDP synchronised them in the backward).
        norm = self.par.clip_grad_norm(params, req["grad_clip"])
        if not math.isfinite(norm):
            for p in params:
                p.grad = None
            raise WorkerError(f"gradient norm is {norm}; the step was skipped and the gradients cleared "
                              "(lower the learning rate, check advantages and old_logprobs for extreme values)")
        if self.optimizer is None:
            self.optimizer = torch.optim.AdamW(params, lr=req["lr"], betas=tuple(req["betas"]), eps=req["eps"],
                                               weight_decay=req["weight_decay"])
        for g in self.optimizer.param_groups:
            g.update(lr=req["lr"], betas=tuple(req["betas"]), eps=req["eps"], weight_decay=req["weight_decay"])
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.version += 1
        return {"grad_norm": norm}

    def optim_step(self, body: Any) -> dict[str, Any]:
        req = self._optim_request(OPTIM_STEP.accept(body))
        if self.pending_tokens == 0:
            raise BadRequest("no gradients accumulated since the last optim_step: call /forward_backward first")
        t0 = self.trace.start()
        try:
            parts = self._run("optim_step", req)
        finally:
            self.pending_tokens = 0
        self.trace.write("optim_step", t0, {"lr": req["lr"]})
        return {"grad_norm": parts[0]["grad_norm"], "version": self.version, "lr": req["lr"]}

    # ---------------------------------------------------------------- save / load
    def _save_local(self, req: dict[str, Any]) -> dict[str, Any]:
        path, kind = req["path"], req["kind"]
        if self.par.mode == "fsdp":
            return self._save_sharded(req)
        os.makedirs(path, exist_ok=True)
        if kind == "lora":
            self.student.save_pretrained(path)
        elif self.lora:  # merged copy: the adapters folded into the base weights
            merged = copy.deepcopy(self.student).merge_and_unload()
            merged.save_pretrained(path)
            self.tokenizer.save_pretrained(path)
            write_word_tokenizer(path, *self.word_tokenizer)
        else:
            self.student.save_pretrained(path)
            self.tokenizer.save_pretrained(path)
            write_word_tokenizer(path, *self.word_tokenizer)
        if req["optimizer"]:
            torch.save({"optimizer": self.optimizer.state_dict() if self.optimizer else None, "version": self.version},
                       os.path.join(path, STATE_FILE))
        with open(os.path.join(path, META_FILE), "w", encoding="utf-8") as f:
            json.dump({"kind": kind, "version": self.version, "model": self.served_name,
                       "tokenizer_fingerprint": self.fingerprint, "lora_rank": self.opts.lora_rank}, f, indent=2)
        return {"path": os.path.abspath(path), "kind": kind, "version": self.version}

    def _save_sharded(self, req: dict[str, Any]) -> dict[str, Any]:
        """FSDP: the full weights gathered (every rank) and written by rank 0; each rank's optimiser
        shard in its own file (restored by a worker of the same world size)."""
        path = req["path"]
        full = self.par.full_state_dict(self.student)
        if self.comm.rank == 0:
            os.makedirs(path, exist_ok=True)
            self.student.save_pretrained(path, state_dict=full)
            self.tokenizer.save_pretrained(path)
            write_word_tokenizer(path, *self.word_tokenizer)
            with open(os.path.join(path, META_FILE), "w", encoding="utf-8") as f:
                json.dump({"kind": "full", "version": self.version, "model": self.served_name, "world_size": self.comm.world,
                           "tokenizer_fingerprint": self.fingerprint, "lora_rank": 0}, f, indent=2)
        torch.distributed.barrier()
        if req["optimizer"]:
            torch.save({"optimizer": self.optimizer.state_dict() if self.optimizer else None, "version": self.version},
                       os.path.join(path, f"rank{self.comm.rank}-of-{self.comm.world}.{STATE_FILE}"))
        return {"path": os.path.abspath(path), "kind": "full", "version": self.version}

    def save(self, body: Any) -> dict[str, Any]:
        body = SAVE.accept(body)
        path = confine(get_str(body, "path"), self.opts.roots, "save")
        kind = get_str(body, "kind", "lora" if self.lora else "full", choices=("lora", "full"))
        if kind == "lora" and not self.lora:
            raise BadRequest("kind lora needs a LoRA student (start with --lora-rank R); use kind full")
        if os.path.exists(path) and not os.path.isdir(path):
            raise BadRequest(f"save path {path} exists and is not a directory")
        req = {"path": path, "kind": kind, "optimizer": get_bool(body, "optimizer", True)}
        return self._run("save", req)[0]

    def _load_local(self, req: dict[str, Any]) -> dict[str, Any]:
        from safetensors.torch import load_file

        path = req["path"]
        if os.path.isfile(os.path.join(path, ADAPTER_FILE)):
            from peft.utils import set_peft_model_state_dict

            weights = os.path.join(path, "adapter_model.safetensors")
            if not os.path.isfile(weights):
                raise BadRequest(f"{path} has adapter_config.json but no adapter_model.safetensors")
            with open(os.path.join(path, ADAPTER_FILE), encoding="utf-8") as f:
                rank = json.load(f).get("r")
            if rank != self.opts.lora_rank:
                raise BadRequest(f"adapter in {path} has rank {rank}, this worker's LoRA rank is {self.opts.lora_rank}")
            result = set_peft_model_state_dict(self.student, load_file(weights, device=str(self.device)))
            unexpected = list(getattr(result, "unexpected_keys", []) or [])
            if unexpected:
                raise BadRequest(f"adapter in {path} does not fit this model; unexpected keys: {unexpected[:5]}")
            kind = "lora"
        else:
            files = sorted(glob.glob(os.path.join(path, "*.safetensors")))
            if not files:
                raise BadRequest(f"{path} holds neither a PEFT adapter (adapter_config.json) nor safetensors weights")
            state: dict[str, torch.Tensor] = {}
            for f in files:
                state.update(load_file(f, device=str(self.device)))
            target = self._model(req["model"])
            if req["model"] == "student" and self.lora:
                target = self.student.get_base_model()
            tied = getattr(target.config, "tie_word_embeddings", False)
            missing, unexpected = self.par.load_full_state_dict(target, state)
            missing = [k for k in missing if not (tied and k.endswith("lm_head.weight")) and "lora_" not in k]
            if missing or unexpected:
                raise BadRequest(f"weights in {path} do not fit the {req['model']}: missing {missing[:5]}, "
                                 f"unexpected {unexpected[:5]}")
            kind = "full"
        state_path = os.path.join(path, STATE_FILE if self.par.mode != "fsdp"
                                  else f"rank{self.comm.rank}-of-{self.comm.world}.{STATE_FILE}")
        restored = False
        if req["optimizer"] and req["model"] == "student" and os.path.isfile(state_path):
            # weights_only: tensors and plain containers only; a pickle in a folder cannot run code here.
            try:
                saved = torch.load(state_path, map_location=self.device, weights_only=True)
            except pickle.UnpicklingError as e:
                raise BadRequest(f"{state_path} holds more than tensors and plain values; it is not loaded "
                                 f"(weights_only): {str(e).splitlines()[0]}") from None
            self.version = int(saved.get("version", self.version))
            if saved.get("optimizer") is not None:
                params = self._trainable()
                self.optimizer = torch.optim.AdamW(params)
                self.optimizer.load_state_dict(saved["optimizer"])
                restored = True
        for p in self._trainable():
            p.grad = None
        return {"path": os.path.abspath(path), "kind": kind, "version": self.version, "optimizer_restored": restored}

    def load(self, body: Any) -> dict[str, Any]:
        body = LOAD.accept(body)
        path = confine(get_str(body, "path"), self.opts.roots, "load")
        if not os.path.isdir(path):
            raise BadRequest(f"load path {path} is not a directory (a PEFT adapter or save_pretrained output)")
        req = {"path": path, "model": get_str(body, "model", "student", choices=("student", "teacher")),
               "optimizer": get_bool(body, "optimizer", True)}
        parts = self._run("load", req)
        self.pending_tokens = 0
        return parts[0]

    # ---------------------------------------------------------------- OpenAI-compatible
    def resolve_model_name(self, name: Any) -> str:
        if name is None or name in ("student", self.served_name):
            return "student"
        if name == "teacher" or (self.opts.teacher is not None and name == self.opts.teacher):
            if self.teacher is None:
                raise NotFound(f"model {name!r} is not served here (no --teacher)")
            return "teacher"
        raise NotFound(f"model {name!r} is not served here; GET /v1/models lists the served ids")

    def models(self) -> dict[str, Any]:
        data = [{"id": self.served_name, "object": "model", "created": 0, "owned_by": "tcod", "root": self.opts.model,
                 "parent": None, "max_model_len": self.max_len}]
        if self.teacher is not None and self.opts.teacher:
            data.append({"id": self.opts.teacher, "object": "model", "created": 0, "owned_by": "tcod",
                         "root": self.opts.teacher, "parent": None, "max_model_len": self.teacher_max_len})
        return {"object": "list", "data": data}

    def completions(self, body: Any) -> dict[str, Any]:
        from .openai_compat import completions

        return completions(self, body)
