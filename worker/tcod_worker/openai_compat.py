"""`POST /v1/completions` in vLLM's response shape (docs/REFERENCES.md#vllm), so the same
TypeScript client drives this worker and a vLLM server.

Supported: `prompt` as a string, a list of token ids, a list of strings or a list of id lists;
`max_tokens` (0 = score only), `temperature`, `top_p`, `seed`, `n`, `stop_token_ids`, `logprobs`,
`echo`, `prompt_logprobs`, `return_token_ids`, `return_tokens_as_token_ids`, vLLM's
`skip_special_tokens` and `add_special_tokens`, `user` (no effect), and the extension `logprobs_mode`
("raw" — vLLM's default: before temperature/top-p — or "processed"). `model` picks the student (its
served name) or the teacher (`--teacher` value).

Unknown fields are refused (400), as OpenAI's own API refuses them ("Unrecognized request argument
supplied"); vLLM accepts and ignores them, which would make a misspelt `max_token` a silent default.
OpenAI's other Completions parameters and vLLM's common sampling extensions are accepted only at the
value that changes nothing (`NO_OP`), so clients that send their defaults keep working.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from .errors import BadRequest
from .fields import Fields
from .validate import get_bool, get_int, get_opt_int, get_str, text, token_ids

#: Parameters the worker does not implement, accepted only at these values (or null), which change
#: nothing: OpenAI's Completions parameters, then vLLM's sampling extensions.
NO_OP: dict[str, tuple[Any, ...]] = {
    "stream": (False,), "stream_options": (), "best_of": (1,), "suffix": ("",), "stop": ([],),
    "frequency_penalty": (0,), "presence_penalty": (0,), "logit_bias": ({},),
    "top_k": (-1, 0), "min_p": (0,), "repetition_penalty": (1,), "min_tokens": (0,), "ignore_eos": (False,),
}
COMPLETIONS = Fields("/v1/completions", (
    "model", "prompt", "max_tokens", "temperature", "top_p", "seed", "n", "stop_token_ids", "logprobs", "echo",
    "prompt_logprobs", "return_token_ids", "return_tokens_as_token_ids", "skip_special_tokens",
    "add_special_tokens", "logprobs_mode", "user", *NO_OP))


def _same(v: Any, a: Any) -> bool:
    return isinstance(v, bool) == isinstance(a, bool) and v == a  # False is not 0 here


def _no_ops(body: dict[str, Any]) -> None:
    for key, values in NO_OP.items():
        v = body.get(key)
        if v is None or any(_same(v, a) for a in values):
            continue
        if key == "stop":
            raise BadRequest("string `stop` is not supported; use `stop_token_ids`")
        allowed = " or ".join(["null", *(json.dumps(a) for a in values)])
        raise BadRequest(f"`{key}` is not supported by the tcod worker; only {allowed} (no effect) is accepted, "
                         f"got {str(v)[:80]}")


def _prompts(worker: Any, prompt: Any, add_special: bool) -> list[list[int]]:
    def one(p: Any, where: str) -> list[int]:
        if isinstance(p, str):
            return [int(i) for i in worker.tokenizer.encode(text(p, where), add_special_tokens=add_special)]
        return token_ids(p, where, worker.vocab_size)

    if isinstance(prompt, str) or (isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt)):
        return [one(prompt, "`prompt`")]
    if isinstance(prompt, list) and prompt:
        return [one(p, f"prompt[{i}]") for i, p in enumerate(prompt)]
    raise BadRequest("`prompt` must be a string, a list of token ids, or a list of those")


def completions(worker: Any, body: Any) -> dict[str, Any]:
    body = COMPLETIONS.accept(body)
    _no_ops(body)
    if body.get("user") is not None:
        text(body["user"], "`user`")  # OpenAI's end-user id: metadata, no effect on the completion
    model = worker.resolve_model_name(body.get("model"))
    prompts = _prompts(worker, body.get("prompt"), get_bool(body, "add_special_tokens", True))
    for i, p in enumerate(prompts):
        if not p:
            raise BadRequest(f"prompt {i} is empty")
    n = get_int(body, "n", 1, lo=1, hi=64)
    max_tokens = get_int(body, "max_tokens", 16, lo=0)
    cap = worker.opts.max_logprobs
    logprobs = get_opt_int(body, "logprobs", lo=0, hi=cap)
    echo = get_bool(body, "echo", False)
    prompt_logprobs = get_opt_int(body, "prompt_logprobs", lo=0, hi=cap)
    if echo and prompt_logprobs is None and logprobs is not None:
        prompt_logprobs = logprobs  # vLLM: with echo and no prompt_logprobs, prompt_logprobs := logprobs
    mode = get_str(body, "logprobs_mode", "raw", choices=("raw", "processed"))
    temperature = body.get("temperature", 1.0)
    seed = body.get("seed")
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little")
    as_ids = get_bool(body, "return_tokens_as_token_ids", False)
    skip_special = get_bool(body, "skip_special_tokens", True)
    want_ids = get_bool(body, "return_token_ids", False)

    expanded = [p for p in prompts for _ in range(n)]
    seeds = [int(seed) + k for k in range(len(expanded))] if isinstance(seed, int) and not isinstance(seed, bool) else seed
    sample_req = worker._sample_request({
        "prompts": expanded, "max_tokens": max_tokens, "temperature": temperature, "top_p": body.get("top_p", 1.0),
        "seed": seeds, "stop_token_ids": body.get("stop_token_ids"), "model": model, "logprobs_mode": mode,
        "topk": logprobs or 0,
    })
    samples = [s for part in worker._samples_many([sample_req]) for s in part] if max_tokens > 0 else \
        [{"tokens": [], "logprobs": [], "finish_reason": "length", "top_logprobs": []} for _ in expanded]

    scored: list[dict[str, Any]] = []
    if prompt_logprobs is not None:
        # Raw mode ignores temperature, as vLLM's raw_logprobs do.
        temp = 1.0 if mode == "raw" or not temperature else float(temperature)
        score_req = worker._score_request({"sequences": prompts, "prompt_lengths": [1] * len(prompts),
                                           "topk": prompt_logprobs, "ranks": True, "temperature": temp, "model": model})
        scored = worker._scores_many([score_req])[0]

    def tok_str(t: int) -> str:
        return f"token_id:{t}" if as_ids else worker.tokenizer.decode([t], skip_special_tokens=False)

    choices = []
    prompt_tokens = 0
    completion_tokens = 0
    for idx, sample in enumerate(samples):
        p_index = idx // n
        prompt = prompts[p_index]
        gen = sample["tokens"]
        completion = worker.tokenizer.decode(gen, skip_special_tokens=skip_special)
        if echo:
            completion = worker.tokenizer.decode(prompt, skip_special_tokens=skip_special) + completion
        choice: dict[str, Any] = {"index": idx, "text": completion, "logprobs": None,
                                  "finish_reason": sample["finish_reason"],
                                  "stop_reason": gen[-1] if sample["finish_reason"] == "stop" and gen else None}
        pl_entries: list[Any] | None = None
        if prompt_logprobs is not None:
            sc = scored[p_index]
            pl_entries = [None]
            for pos, tok in enumerate(prompt[1:]):
                entry = {str(tok): {"logprob": sc["logprobs"][pos], "rank": sc["ranks"][pos], "decoded_token": tok_str(tok)}}
                for r, alt in enumerate(sc.get("topk", [])[pos] if prompt_logprobs else []):
                    entry.setdefault(str(alt["token"]), {"logprob": alt["logprob"], "rank": r + 1,
                                                         "decoded_token": tok_str(alt["token"])})
                pl_entries.append(entry)
        choice["prompt_logprobs"] = pl_entries
        if logprobs is not None:
            toks: list[int] = []
            lps: list[float | None] = []
            tops: list[dict[str, float] | None] = []
            if echo:
                sc = scored[p_index]
                toks += prompt
                lps += [None] + list(sc["logprobs"])
                tops.append(None)
                for j, tok in enumerate(prompt[1:]):
                    alts = sc["topk"][j] if logprobs and "topk" in sc else []
                    top = {tok_str(a["token"]): a["logprob"] for a in alts}
                    top.setdefault(tok_str(tok), sc["logprobs"][j])
                    tops.append(top)
            toks += gen
            lps += sample["logprobs"]
            for j, tok in enumerate(gen):
                alts = sample["top_logprobs"][j] if logprobs else []
                top = {tok_str(a["token"]): a["logprob"] for a in alts}
                top.setdefault(tok_str(tok), sample["logprobs"][j])
                tops.append(top)
            strs = [tok_str(t) for t in toks]
            offsets, at = [], 0
            for s in strs:
                offsets.append(at)
                at += len(s)
            choice["logprobs"] = {"text_offset": offsets, "token_logprobs": lps, "tokens": strs, "top_logprobs": tops}
        if want_ids:
            choice["token_ids"] = gen
            choice["prompt_token_ids"] = prompt
        choices.append(choice)
        completion_tokens += len(gen)
    prompt_tokens = sum(len(p) for p in prompts) * n
    return {
        "id": f"cmpl-{uuid.uuid4().hex}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": worker.served_name if model == "student" else worker.opts.teacher,
        "choices": choices,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }
