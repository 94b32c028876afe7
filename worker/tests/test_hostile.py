"""Hostile requests: each is answered with a 4xx JSON error naming the field (never a 500, a
traceback, NaN in the answer or a silently wrong result), and the worker keeps serving."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request

import pytest


def post_raw(worker, path: str, raw: bytes, ctype: str | None = "application/json", method: str = "POST") -> tuple[int, bytes, dict]:
    req = urllib.request.Request(worker.base + path, data=raw, method=method)
    if ctype is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def strict(raw: bytes):
    """json.loads that refuses NaN/Infinity, as JavaScript's JSON.parse does."""
    def no(name: str):
        raise AssertionError(f"answer is not strict JSON: {name} in {raw[:300]!r}")
    return json.loads(raw, parse_constant=no)


@pytest.mark.parametrize("path,body,fragment", [
    # A chat the template cannot render: transformers' ValueError was a 500.
    ("/tokenize", {"messages": []}, "non-empty"),
    ("/tokenize", {"messages": [{"role": "user", "content": "hi"}], "continue_final_message": True,
                   "add_generation_prompt": True}, "exclude each other"),
    # Temperatures below 1e-6 overflow float32 logits: NaN log-probs (or, at 1e-300, which is 0 in
    # float32, a row sampled at temperature 1); above the cap they are nonsense.
    ("/sample", {"prompts": [[5, 6]], "max_tokens": 2, "temperature": 1e-40}, "`temperature` must be 0 (greedy) or"),
    ("/sample", {"prompts": [[5, 6]], "max_tokens": 2, "temperature": 1e-300}, "`temperature`"),
    ("/sample", {"prompts": [[5, 6]], "max_tokens": 2, "temperature": 1e6}, "`temperature` must be ≤ 100"),
    ("/score", {"sequences": [[5, 6, 7]], "prompt_lengths": [1], "temperature": 1e39}, "`temperature`"),
    ("/v1/completions", {"prompt": [5, 6], "max_tokens": 1, "temperature": 1e-30}, "`temperature`"),
    # Finite in JSON but inf on the device: an infinite loss and poisoned gradients.
    ("/forward_backward", {"loss": "importance_sampling", "rows": [
        {"tokens": [5, 6, 7], "mask": [0, 1, 1], "advantages": [0, 1e308, 1], "old_logprobs": [0, -1, -1]}]},
     "rows[0].advantages[1] must be a finite number (within float32"),
    ("/forward_backward", {"loss": "cross_entropy", "rows": [
        {"tokens": [5, 6, 7], "mask": [0, 1, 1], "loss_weights": [0, 1e39, 1]}]}, "rows[0].loss_weights[1]"),
    ("/forward_backward", {"loss": "cross_entropy", "rows": [
        {"tokens": [5, 6, 7], "mask": [0, 1, 1], "kl_coefs": [0, 1, 0],
         "teacher_distributions": [None, {"tokens": [5], "logprobs": [0.0], "rest": -1e308}, None]}]},
     "teacher_distributions[1].rest"),
    ("/optim_step", {"lr": 1e308}, "`lr` must be a finite number (within float32"),
    ("/optim_step", {"lr": 1e3}, "`lr` must be ≤ 10"),
])
def test_hostile_values_are_a_clear_400(full_worker, path, body, fragment):
    status, payload = full_worker.call(path, body)
    assert status == 400, payload
    assert payload["error"]["type"] == "BadRequestError" and fragment in payload["error"]["message"], payload


@pytest.mark.parametrize("path,raw,fragment", [
    # A lone surrogate (valid JSON escape, invalid Unicode) reached the tokenizer / file system: 500.
    ("/tokenize", b'{"text": "\\ud800"}', "`text` is not valid Unicode"),
    ("/tokenize", b'{"messages": [{"role": "user", "content": "a\\udc00"}]}', "messages[0].content"),
    ("/v1/completions", b'{"prompt": "\\ud800", "max_tokens": 1}', "`prompt` is not valid Unicode"),
    ("/save", b'{"path": "/tmp/\\ud800x", "kind": "full"}', "`path` is not valid Unicode"),
    # int() refuses literals over 4300 digits: a ValueError, was a 500.
    ("/sample", b'{"prompts": [[' + b"9" * 5000 + b"]]}", "4300 digits"),
    # NaN / Infinity are not JSON.
    ("/sample", b'{"prompts": [[5]], "temperature": NaN}', "NaN is not a JSON number"),
    ("/score", b'{"sequences": [[5, 6]], "prompt_lengths": [1], "temperature": -Infinity}', "-Infinity"),
])
def test_hostile_bodies_are_a_clear_400(full_worker, path, raw, fragment):
    status, data, _ = post_raw(full_worker, path, raw)
    payload = strict(data)
    assert status == 400 and fragment in payload["error"]["message"], payload


def test_answers_are_strict_json(full_worker):
    # top_p keeps one token, so the other top-k entries have log-probability -inf: written as
    # -Infinity, which JSON.parse (tcod's client) refuses; now -9999.0, vLLM's stand-in.
    body = {"prompts": [[5, 6, 7]], "max_tokens": 2, "top_p": 1e-6, "topk": 3, "seed": 1}
    status, data, _ = post_raw(full_worker, "/sample", json.dumps(body).encode())
    assert status == 200
    top = strict(data)["samples"][0]["top_logprobs"]
    assert top[0][0]["logprob"] == 0.0 and top[0][1]["logprob"] == -9999.0
    status, data, _ = post_raw(full_worker, "/v1/completions", json.dumps(
        {"prompt": [5, 6, 7], "max_tokens": 1, "top_p": 1e-6, "logprobs": 3, "logprobs_mode": "processed"}).encode())
    assert status == 200 and -9999.0 in strict(data)["choices"][0]["logprobs"]["top_logprobs"][0].values()


def test_dump_json_replaces_non_finite_floats():
    from tcod_worker.server import dump_json

    out = json.loads(dump_json({"a": [float("-inf"), float("inf"), float("nan"), 1.5], "b": (2, "x")}))
    assert out == {"a": [-9999.0, None, None, 1.5], "b": [2, "x"]}


def test_wrong_method_and_content_type(full_worker):
    # Another method on a known route: a JSON 405 with Allow (was a 404, or http.server's HTML 501).
    status, data, headers = post_raw(full_worker, "/sample", b"{}", method="PUT")
    assert status == 405 and headers.get("Allow") == "POST" and "use POST" in strict(data)["error"]["message"]
    status, data, _ = post_raw(full_worker, "/health", b"", method="DELETE")
    assert status == 405 and strict(data)["error"]["type"] == "MethodNotAllowedError"
    status, payload = full_worker.call("/sample", method="GET")
    assert status == 405 and "use POST" in payload["error"]["message"]
    # A body that is not declared JSON: 415. (A web page may POST text/plain or a typeless blob to
    # 127.0.0.1 without a CORS preflight; it cannot send application/json without one.)
    for ctype in ("text/plain", None, "application/x-www-form-urlencoded"):
        status, data, _ = post_raw(full_worker, "/tokenize", b'{"text": "open the fridge"}', ctype=ctype)
        assert status == 415 and "application/json" in strict(data)["error"]["message"], (ctype, data)
    status, data, _ = post_raw(full_worker, "/tokenize", b'{"text": "open the fridge"}', ctype="Application/JSON; charset=utf-8")
    assert status == 200 and strict(data)["count"] == 3


def test_tokenize_continue_final_message_alone(full_worker):
    # continue_final_message without add_generation_prompt: the generation prompt defaults to off
    # (it defaulted to on, which transformers refuses alongside continue_final_message: a 500).
    msgs = [{"role": "user", "content": "open"}, {"role": "assistant", "content": "the fridge"}]
    cont = full_worker.ok("/tokenize", {"messages": msgs, "continue_final_message": True})["tokens"]
    closed = full_worker.ok("/tokenize", {"messages": msgs, "add_generation_prompt": False})["tokens"]
    assert cont == closed[: len(cont)] and len(cont) < len(closed)


def test_still_serving_after_the_hostile_requests(full_worker):
    out = full_worker.ok("/sample", {"prompts": [[5, 6, 7]], "max_tokens": 3, "seed": 3})
    assert all(math.isfinite(x) for x in out["samples"][0]["logprobs"])
    assert full_worker.ok("/sample", {"prompts": [[5, 6]], "max_tokens": 2, "temperature": 1e-6})["samples"]
