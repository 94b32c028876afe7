"""Unknown request fields are refused: a misspelt `max_token` was silently ignored (its route took
`max_tokens`' default). Every POST route, and every object the worker defines inside a body, answers
an unknown field with a 400 naming it (with its path) and the closest declared name, and the
declared fields are exactly what the handlers read and what README.md documents."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from tcod_worker import openai_compat, worker as worker_module
from tcod_worker.errors import BadRequest, WorkerError
from tcod_worker.fields import Body, Fields
from tcod_worker.server import make_routes

README = Path(__file__).resolve().parent.parent / "README.md"
#: Every declaration, by the README table row that documents it (None: documented beside the table).
DECLARED = {
    worker_module.TOKENIZE: "POST /tokenize", worker_module.DETOKENIZE: "POST /detokenize",
    worker_module.SAMPLE: "POST /sample", worker_module.SCORE: "POST /score",
    worker_module.FORWARD_BACKWARD: "POST /forward_backward", worker_module.TRAIN_ROW: "POST /forward_backward",
    worker_module.TEACHER_DISTRIBUTION: None, worker_module.OPTIM_STEP: "POST /optim_step",
    worker_module.SAVE: "POST /save", worker_module.LOAD: "POST /load",
    openai_compat.COMPLETIONS: "POST /v1/completions",
}


class _AnyWorker:
    def __getattr__(self, name: str):
        return lambda _b: None


POST_ROUTES = sorted(p for (m, p) in make_routes(_AnyWorker()) if m == "POST")


def _error(worker, path: str, body) -> str:
    status, payload = worker.call(path, body)
    assert status == 400 and payload["error"]["type"] == "BadRequestError", payload
    return payload["error"]["message"]


@pytest.mark.parametrize("path", POST_ROUTES)
def test_every_post_route_refuses_an_unknown_field(full_worker, path):
    # Checked first: the body is otherwise incomplete, yet the unknown field is what is named.
    msg = _error(full_worker, path, {"surely_not_a_field": 1})
    assert msg.startswith(f"unknown field `surely_not_a_field` in the {path} body; its fields are: "), msg


@pytest.mark.parametrize("path,body,message", [
    ("/sample", {"prompts": [[5, 6]], "max_token": 3},
     "unknown field `max_token` in the /sample body (did you mean `max_tokens`?)"),
    ("/score", {"sequences": [[5, 6]], "prompt_length": [1]},
     "unknown field `prompt_length` in the /score body (did you mean `prompt_lengths`?)"),
    ("/forward_backward", {"rows": [{"tokens": [5, 6], "mask": [0, 1]}], "loss": "ppo", "clip_hi": 0.3},
     "unknown field `clip_hi` in the /forward_backward body (did you mean `clip_high`?)"),
    ("/optim_step", {"lr": 1e-4, "weight_decays": 0.1},
     "unknown field `weight_decays` in the /optim_step body (did you mean `weight_decay`?)"),
    ("/save", {"path": "/tmp/x", "optimiser": False},
     "unknown field `optimiser` in the /save body (did you mean `optimizer`?)"),
    ("/load", {"path": "/tmp/x", "optimiser": False},
     "unknown field `optimiser` in the /load body (did you mean `optimizer`?)"),
    ("/tokenize", {"text": "go", "add_special_token": False},
     "unknown field `add_special_token` in the /tokenize body (did you mean `add_special_tokens`?)"),
    ("/detokenize", {"tokens": [5], "skip_special_token": True},
     "unknown field `skip_special_token` in the /detokenize body (did you mean `skip_special_tokens`?)"),
    ("/v1/completions", {"prompt": [5, 6], "max_token": 2},
     "unknown field `max_token` in the /v1/completions body (did you mean `max_tokens`?)"),
])
def test_a_close_name_is_suggested(full_worker, path, body, message):
    assert _error(full_worker, path, body) == message


def test_nested_objects_name_the_path(full_worker):
    rows = [{"tokens": [5, 6, 7], "mask": [0, 1, 1]}, {"tokens": [5, 6], "mask": [0, 1], "advantage": [0, 1]}]
    msg = _error(full_worker, "/forward_backward", {"rows": rows, "loss": "cross_entropy"})
    assert msg == "unknown field `rows[1].advantage` in the /forward_backward body (did you mean `advantages`?)"
    rows = [{"tokens": [5, 6], "mask": [0, 1], "foo": [0, 1]}]
    msg = _error(full_worker, "/forward_backward", {"rows": rows, "loss": "cross_entropy"})
    assert msg.startswith("unknown field `rows[0].foo` in the /forward_backward body; the fields of rows[0] are: "
                          "advantages, forward_kl_coefs, kl_coefs, loss_weights, mask,"), msg
    dist = {"tokens": [5], "logprob": [0.0], "rest": None}
    rows = [{"tokens": [5, 6], "mask": [0, 1], "kl_coefs": [0, 1], "teacher_distributions": [None, dist]}]
    msg = _error(full_worker, "/forward_backward", {"rows": rows, "loss": "cross_entropy"})
    assert msg == ("unknown field `rows[0].teacher_distributions[1].logprob` in the /forward_backward body "
                   "(did you mean `logprobs`?)")


def test_many_or_huge_unknown_names_give_a_short_message(full_worker):
    body = {f"junk{i}": i for i in range(10_000)} | {"x" * 100_000: 1, "prompts": [[5]]}
    msg = _error(full_worker, "/sample", body)
    assert msg.startswith("unknown fields in the /sample body: `junk0`, `junk1`, ") and "and 9996 more" in msg
    assert len(msg) < 1000, len(msg)
    assert len(_error(full_worker, "/sample", {"y" * 100_000: 1})) < 500


def test_completions_take_openai_parameters_only_at_their_no_op_values(full_worker):
    # OpenAI clients may send their defaults; those change nothing and are accepted.
    defaults = {"frequency_penalty": 0, "presence_penalty": 0.0, "logit_bias": {}, "stream": False, "best_of": 1,
                "stop": [], "suffix": None, "stream_options": None, "user": "episode-3", "top_k": -1, "min_p": 0,
                "repetition_penalty": 1.0, "min_tokens": 0, "ignore_eos": False}
    out = full_worker.ok("/v1/completions", {"prompt": [5, 6], "max_tokens": 2, "seed": 1, **defaults})
    assert out["choices"][0]["finish_reason"] in ("stop", "length")
    for key, value, fragment in [
        ("presence_penalty", 0.5, "`presence_penalty` is not supported by the tcod worker; only null or 0 (no effect)"),
        ("logit_bias", {"5": 100}, "`logit_bias` is not supported"),
        ("ignore_eos", True, "`ignore_eos` is not supported by the tcod worker; only null or false"),
        ("top_k", 5, "only null or -1 or 0"),
        ("stream", True, "`stream` is not supported"),
        ("stop", "\n", "string `stop` is not supported; use `stop_token_ids`"),
        ("user", 7, "`user` must be a string"),
    ]:
        msg = _error(full_worker, "/v1/completions", {"prompt": [5, 6], "max_tokens": 1, key: value})
        assert fragment in msg, (key, msg)


def test_completions_skip_special_tokens_is_honoured(full_worker):
    chat = full_worker.ok("/tokenize", {"messages": [{"role": "user", "content": "open the fridge"}]})["tokens"]
    body = {"prompt": chat, "max_tokens": 0, "echo": True}
    kept = full_worker.ok("/v1/completions", {**body, "skip_special_tokens": False})["choices"][0]["text"]
    skipped = full_worker.ok("/v1/completions", body)["choices"][0]["text"]
    assert "<|im_start|>" in kept and "<|im_start|>" not in skipped and "open the fridge" in skipped


def test_tokenize_fields_that_do_not_fit_together_are_refused(full_worker):
    msgs = [{"role": "user", "content": "go"}]
    assert "not `messages` and `text`" in _error(full_worker, "/tokenize", {"text": "go", "messages": msgs})
    assert "not `text` and `prompt`" in _error(full_worker, "/tokenize", {"text": "go", "prompt": "go"})
    msg = _error(full_worker, "/tokenize", {"text": "go", "add_generation_prompt": True})
    assert msg == "`add_generation_prompt` applies to `messages` (a chat); this request tokenizes text"
    assert "`model` must be a string" in _error(full_worker, "/tokenize", {"prompt": "go", "model": 3})
    # vLLM's shape, as tcod's client sends it: `prompt` and `model` are the same tokenizer's answer.
    same = full_worker.ok("/tokenize", {"model": "anything", "prompt": "go", "add_special_tokens": False})
    assert same["tokens"] == full_worker.ok("/tokenize", {"text": "go", "add_special_tokens": False})["tokens"]


def test_a_handler_cannot_read_an_undeclared_field():
    body = Fields("/x", ("a",)).accept({"a": 1})
    assert body.get("a") == 1 and body["a"] == 1 and "a" in body and body.read == {"a"}
    for read in (lambda: body.get("b"), lambda: body["b"], lambda: "b" in body):
        with pytest.raises(WorkerError) as e:
            read()
        assert e.value.status == 500 and "reads field `b`, which the route does not declare" in e.value.message
    with pytest.raises(BadRequest, match=r"^rows\[0\] must be an object with fields a; got list"):
        Fields("/x", ("a",)).accept([], "rows[0]")


def test_every_declared_field_is_read_by_its_handler_and_accepted(assets, tmp_path, monkeypatch):
    """In-process, every route with every documented field: each call succeeds, and the fields the
    handlers read (through Body) are exactly the declared ones, so a declaration cannot list a field
    its handler ignores, nor miss one it reads."""
    from tcod_worker.comm import Comm
    from tcod_worker.options import Options
    from tcod_worker.worker import Worker

    bodies: list[Body] = []
    accept = Fields.accept

    def recording(self, body, where=""):
        out = accept(self, body, where)
        bodies.append(out)
        return out

    monkeypatch.setattr(Fields, "accept", recording)
    w = Worker(Options(model=str(assets["student"]), teacher=str(assets["teacher"]), device="cpu", dtype="fp32",
                       roots=[str(tmp_path)]), Comm())
    V = w.vocab_size
    msgs = [{"role": "user", "content": "open the fridge"}, {"role": "assistant", "content": "ok"}]
    w.tokenize({"text": "go", "add_special_tokens": False, "model": "m"})
    w.tokenize({"prompt": "go"})
    w.tokenize({"messages": msgs, "add_generation_prompt": False, "continue_final_message": True,
                "add_special_tokens": True, "model": "m"})
    w.detokenize({"tokens": [5, 6], "skip_special_tokens": True, "model": "m"})
    w.sample({"prompts": [[5, 6]], "max_tokens": 2, "temperature": 0.7, "top_p": 0.9, "seed": 3,
              "stop_token_ids": [7], "topk": 2, "logprobs_mode": "raw", "model": "teacher"})
    w.score({"sequences": [[5, 6, 7]], "prompt_lengths": [1], "topk": 2, "entropy": True, "ranks": True,
             "temperature": 1.0, "model": "student"})
    q = {"tokens": [5], "logprobs": [math.log(0.5)], "rest": math.log(0.5 / (V - 1))}
    row = {"tokens": [5, 6, 7], "mask": [0, 1, 1], "advantages": [0, 1, 1], "old_logprobs": [0, -1, -1],
           "loss_weights": [0, 0.5, 0.5], "kl_coefs": [0, 0.1, 0], "forward_kl_coefs": [0, 0.1, 0],
           "teacher_distributions": [None, q, None]}
    w.forward_backward({"rows": [row], "loss": "ppo", "clip": 0.2, "clip_low": 0.2, "clip_high": 0.3,
                        "dual_clip": 3.0, "log_ratio_clamp": 20.0, "temperature": 1.0, "return_logprobs": True})
    w.optim_step({"lr": 1e-4, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.0, "grad_clip": 1.0})
    w.save({"path": str(tmp_path / "ck"), "kind": "full", "optimizer": True})
    w.load({"path": str(tmp_path / "ck"), "model": "student", "optimizer": True})
    w.completions({"model": "teacher", "prompt": "open the fridge", "max_tokens": 2, "temperature": 0.8,
                   "top_p": 0.9, "seed": 1, "n": 2, "stop_token_ids": [7], "logprobs": 1, "echo": True,
                   "prompt_logprobs": 1, "return_token_ids": True, "return_tokens_as_token_ids": True,
                   "skip_special_tokens": False, "add_special_tokens": True, "logprobs_mode": "processed",
                   "user": "u", **{k: None for k in openai_compat.NO_OP}})
    for fields in DECLARED:
        read = set().union(*(b.read for b in bodies if b.fields is fields))
        assert read == fields.names, (fields.route, sorted(fields.names - read), sorted(read - fields.names))


def test_readme_documents_every_declared_field():
    text = README.read_text(encoding="utf-8")
    for fields, row in DECLARED.items():
        doc = text if row is None else next(line for line in text.splitlines() if line.startswith(f"| `{row}` |"))
        missing = sorted(n for n in fields.names if not re.search(rf"\b{n}\b", doc))
        assert not missing, (row, missing)
