"""Every route of a real worker process: shapes, semantics and error answers."""

from __future__ import annotations

import json
import os
import tempfile
import urllib.request

import pytest
import torch

from tcod_worker.loading import tokenizer_fingerprint
from tcod_worker.tiny import build_word_tokenizer, read_vocabulary

from .conftest import DEVICE, DTYPE, reference_model


def test_health_and_info(full_worker, assets):
    assert full_worker.ok("/health") == {"status": "ok"}
    info = full_worker.ok("/info")
    tok = build_word_tokenizer(read_vocabulary(str(assets["vocab"])))
    assert info["tokenizer_fingerprint"] == tokenizer_fingerprint(tok)
    assert info["vocab_size"] == len(tok)
    assert info["device"].startswith(DEVICE) and info["dtype"] == DTYPE
    assert info["endpoints"]["reverse_kl"] is True and "reverse_kl" in info["losses"]
    assert info["stop_token_ids"] == [tok.eos_token_id]
    assert isinstance(info["version"], int)


def test_tokenize_text_messages_and_detokenize(full_worker):
    t = full_worker.ok("/tokenize", {"text": "go to the kitchen ."})
    assert t["count"] == 5 and len(t["tokens"]) == 5
    assert full_worker.ok("/detokenize", {"tokens": t["tokens"]})["prompt"] == "go to the kitchen ."
    chat = full_worker.ok("/tokenize", {"messages": [{"role": "user", "content": "open the fridge"}]})["tokens"]
    text = full_worker.ok("/detokenize", {"tokens": chat})["prompt"]
    assert text == "<|im_start|> user open the fridge <|im_end|> <|im_start|> assistant"
    no_gen = full_worker.ok("/tokenize", {"messages": [{"role": "user", "content": "open the fridge"}],
                                          "add_generation_prompt": False})["tokens"]
    assert chat[: len(no_gen)] == no_gen and len(chat) == len(no_gen) + 2
    unk = full_worker.ok("/tokenize", {"text": "zyzzyva"})["tokens"]
    assert full_worker.ok("/detokenize", {"tokens": unk})["prompt"] == "<unk>"


def test_sample_shapes_seeds_and_stops(full_worker):
    prompt = full_worker.ok("/tokenize", {"messages": [{"role": "user", "content": "take the apple"}]})["tokens"]
    body = {"prompts": [prompt, prompt[:3]], "max_tokens": 8, "temperature": 1.0, "seed": 11}
    a = full_worker.ok("/sample", body)["samples"]
    b = full_worker.ok("/sample", body)["samples"]
    assert a == b, "same seed must give the same samples"
    for s in a:
        assert len(s["tokens"]) == len(s["logprobs"]) <= 8
        assert s["finish_reason"] in ("stop", "length")
        assert all(lp <= 0 for lp in s["logprobs"])
    c = full_worker.ok("/sample", {**body, "seed": 12})["samples"]
    assert c != a
    # A batch row with seed s samples what the same prompt alone with seed s samples.
    # (Padding changes float rounding, so logprobs agree closely rather than bit for bit.)
    alone = full_worker.ok("/sample", {"prompts": [prompt[:3]], "max_tokens": 8, "seed": [12]})["samples"][0]
    batched = full_worker.ok("/sample", {"prompts": [prompt, prompt[:3]], "max_tokens": 8, "seed": [3, 12]})["samples"][1]
    assert alone["tokens"] == batched["tokens"]
    assert alone["logprobs"] == pytest.approx(batched["logprobs"], abs=1e-5)
    # Every token a stop token: each sample ends after one token with finish_reason stop.
    info = full_worker.ok("/info")
    stops = full_worker.ok("/sample", {"prompts": [prompt], "max_tokens": 5, "seed": 1,
                                       "stop_token_ids": list(range(info["vocab_size"]))})["samples"][0]
    assert len(stops["tokens"]) == 1 and stops["finish_reason"] == "stop"
    greedy = full_worker.ok("/sample", {"prompts": [prompt], "max_tokens": 6, "temperature": 0, "seed": 5})["samples"][0]
    assert greedy == full_worker.ok("/sample", {"prompts": [prompt], "max_tokens": 6, "temperature": 0, "seed": 99})["samples"][0]


def test_sampled_logprobs_equal_scored_logprobs(full_worker):
    """At temperature 1 the sampling logprobs are the model's logprobs: /score must agree."""
    prompt = full_worker.ok("/tokenize", {"text": "you see a desk and a fridge"})["tokens"]
    s = full_worker.ok("/sample", {"prompts": [prompt], "max_tokens": 10, "seed": 3})["samples"][0]
    scored = full_worker.ok("/score", {"sequences": [prompt + s["tokens"]], "prompt_lengths": [len(prompt)]})
    assert scored["results"][0]["logprobs"] == pytest.approx(s["logprobs"], abs=1e-4)


def test_processed_logprobs_apply_temperature_and_top_p(full_worker):
    prompt = full_worker.ok("/tokenize", {"text": "open the drawer"})["tokens"]
    s = full_worker.ok("/sample", {"prompts": [prompt], "max_tokens": 1, "seed": 4, "temperature": 0.5,
                                   "top_p": 0.9, "topk": 20})["samples"][0]
    r = full_worker.ok("/sample", {"prompts": [prompt], "max_tokens": 1, "seed": 4, "temperature": 0.5,
                                   "top_p": 0.9, "logprobs_mode": "raw"})["samples"][0]
    assert s["tokens"] == r["tokens"]
    raw = full_worker.ok("/score", {"sequences": [prompt + r["tokens"]], "prompt_lengths": [len(prompt)]})
    assert r["logprobs"] == pytest.approx(raw["results"][0]["logprobs"], abs=1e-4)
    # processed: the renormalised nucleus of softmax(logits / 0.5); its mass sums to 1.
    nucleus = [a["logprob"] for a in s["top_logprobs"][0] if a["logprob"] > float("-inf")]
    assert sum(torch.tensor(nucleus).exp().tolist()) == pytest.approx(1.0, abs=1e-3) or len(nucleus) == 20


def test_score_matches_direct_forward(full_worker, tmp_path):
    ref = reference_model(full_worker, tmp_path)
    seqs = [full_worker.ok("/tokenize", {"text": t})["tokens"] for t in
            ["go to the desk 1 and take the mug", "put the apple in the fridge", "look"]]
    seqs[2] = seqs[2] + seqs[0][:2]
    pls = [3, 2, 1]
    got = full_worker.ok("/score", {"sequences": seqs, "prompt_lengths": pls, "topk": 5, "entropy": True})["results"]
    for seq, pl, res in zip(seqs, pls, got):
        with torch.no_grad():
            lp = torch.log_softmax(ref(torch.tensor([seq])).logits[0].float(), dim=-1)
        want = [lp[i - 1, seq[i]].item() for i in range(pl, len(seq))]
        assert res["logprobs"] == pytest.approx(want, abs=1e-4)
        ent = [-(lp[i - 1].exp() * lp[i - 1]).sum().item() for i in range(pl, len(seq))]
        assert res["entropy"] == pytest.approx(ent, abs=1e-4)
        for i, top in zip(range(pl, len(seq)), res["topk"]):
            vals, ids = lp[i - 1].topk(5)
            assert [a["token"] for a in top] == ids.tolist()
            assert [a["logprob"] for a in top] == pytest.approx(vals.tolist(), abs=1e-4)
    teacher = full_worker.ok("/score", {"sequences": seqs[:1], "prompt_lengths": [3], "model": "teacher"})["results"][0]
    assert teacher["logprobs"] != pytest.approx(got[0]["logprobs"], abs=1e-3), "teacher is a different model"


def test_v1_models_and_completions_shape(full_worker):
    models = full_worker.ok("/v1/models")
    assert models["object"] == "list" and len(models["data"]) == 2
    student_id = models["data"][0]["id"]
    prompt = full_worker.ok("/tokenize", {"text": "take the key from the drawer"})["tokens"]
    out = full_worker.ok("/v1/completions", {"model": student_id, "prompt": prompt, "max_tokens": 1,
                                             "prompt_logprobs": 2, "temperature": 1.0, "return_token_ids": True})
    assert out["object"] == "text_completion" and out["usage"]["prompt_tokens"] == len(prompt)
    choice = out["choices"][0]
    pl = choice["prompt_logprobs"]
    assert len(pl) == len(prompt) and pl[0] is None
    scored = full_worker.ok("/score", {"sequences": [prompt], "prompt_lengths": [1], "topk": 2})["results"][0]
    for i in range(1, len(prompt)):
        entry = pl[i]
        assert str(prompt[i]) in entry and 1 <= len(entry) <= 3
        actual = entry[str(prompt[i])]
        assert set(actual) == {"logprob", "rank", "decoded_token"}
        assert actual["logprob"] == pytest.approx(scored["logprobs"][i - 1], abs=1e-4)
        ranked = sorted(entry.values(), key=lambda v: v["rank"])
        assert ranked[0]["rank"] == 1 and ranked[0]["logprob"] == pytest.approx(scored["topk"][i - 1][0]["logprob"], abs=1e-4)
    assert choice["prompt_token_ids"] == prompt and len(choice["token_ids"]) == 1
    # echo + logprobs: legacy OpenAI logprobs over prompt + completion, first prompt token null.
    echo = full_worker.ok("/v1/completions", {"prompt": [prompt], "max_tokens": 3, "logprobs": 1, "echo": True, "seed": 2})
    lg = echo["choices"][0]["logprobs"]
    n_gen = len(lg["tokens"]) - len(prompt)
    assert 1 <= n_gen <= 3 and lg["token_logprobs"][0] is None and lg["top_logprobs"][0] is None
    assert len(lg["tokens"]) == len(lg["token_logprobs"]) == len(lg["top_logprobs"]) == len(lg["text_offset"])
    assert lg["token_logprobs"][1:len(prompt)] == pytest.approx(scored["logprobs"], abs=1e-4)
    assert all(len(t) >= 1 for t in lg["top_logprobs"][1:])
    assert echo["choices"][0]["prompt_logprobs"][0] is None
    teacher = full_worker.ok("/v1/completions", {"model": "teacher", "prompt": prompt, "max_tokens": 1, "prompt_logprobs": 0})
    assert len(teacher["choices"][0]["prompt_logprobs"]) == len(prompt)
    as_ids = full_worker.ok("/v1/completions", {"prompt": prompt, "max_tokens": 2, "logprobs": 0, "seed": 1,
                                                "return_tokens_as_token_ids": True})
    assert all(t.startswith("token_id:") for t in as_ids["choices"][0]["logprobs"]["tokens"])


@pytest.mark.parametrize("path,body,fragment", [
    ("/sample", {"prompts": [[1, 99999]], "max_tokens": 2}, "outside the vocabulary"),
    ("/sample", {"prompts": [[]]}, "empty"),
    ("/sample", {"max_tokens": 2}, "prompts"),
    ("/sample", {"prompts": [[2, 3]], "max_tokens": -1}, "max_tokens"),
    ("/sample", {"prompts": [[2, 3]], "max_tokens": 100000}, "positions"),
    ("/score", {"sequences": [[2, 3, 4]], "prompt_lengths": [0]}, "prompt_lengths[0]"),
    ("/score", {"sequences": [[2, 3, 4]]}, "prompt_lengths"),
    ("/forward_backward", {"rows": [{"tokens": [2, 3], "mask": [0, 1]}], "loss": "ppo"}, "advantages"),
    ("/forward_backward", {"rows": [{"tokens": [2, 3], "mask": [1, 1]}], "loss": "cross_entropy"}, "mask[0]"),
    ("/forward_backward", {"rows": [{"tokens": [2, 3], "mask": [0, 1, 1]}], "loss": "cross_entropy"}, "mask"),
    ("/forward_backward", {"rows": [{"tokens": [2, 3], "mask": [0, 0]}], "loss": "cross_entropy"}, "nothing to train"),
    ("/forward_backward", {"rows": [{"tokens": [2, 3], "mask": [0, 1]}], "loss": "dpo"}, "loss"),
    ("/optim_step", {"betas": [0.9, 0.95]}, "lr"),
    ("/load", {"path": os.path.join(tempfile.gettempdir(), "tcod-nonexistent", "adapter")}, "not a directory"),
    ("/load", {"path": "/nonexistent/adapter"}, "outside this worker's roots"),
    ("/v1/completions", {"prompt": [2, 3], "stream": True}, "stream"),
    ("/v1/completions", {"prompt": [2, 3], "model": "gpt-9"}, "not served"),
])
def test_bad_input_is_a_clear_4xx(full_worker, path, body, fragment):
    status, payload = full_worker.call(path, body)
    assert status in (400, 404), payload
    assert fragment in payload["error"]["message"]
    if fragment == "positions":  # what to change comes beside the message, for tcod run's hint
        assert "max_position_embeddings" in payload["error"]["hint"]


def test_malformed_json_unknown_route_and_no_grads(lora_worker):
    status, payload = lora_worker.call("/sample", raw=b"{not json")
    assert status == 400 and "not valid JSON" in payload["error"]["message"]
    status, payload = lora_worker.call("/nope")
    assert status == 404 and "/sample" in payload["error"]["message"]
    status, payload = lora_worker.call("/forward_backward", {"rows": [{"tokens": [2, 3], "mask": [0, 1]}], "loss": "reverse_kl"})
    assert status == 400 and "--teacher" in payload["error"]["message"]
    status, payload = lora_worker.call("/optim_step", {"lr": 1e-3})
    assert status == 400 and "forward_backward" in payload["error"]["message"]


def test_bearer_token(lora_worker):
    assert lora_worker.call("/health", token=None)[0] == 200
    status, payload = lora_worker.call("/info", token=None)
    assert status == 401 and "Bearer" in payload["error"]["message"]
    assert lora_worker.call("/info", token="wrong")[0] == 401
    assert lora_worker.call("/info")[0] == 200


def test_error_body_is_openai_shaped(full_worker):
    req = urllib.request.Request(full_worker.base + "/score", data=b"[]", method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=30)
        raise AssertionError("expected 400")
    except urllib.error.HTTPError as e:
        body = json.loads(e.read())
        assert e.code == 400 and body["error"]["type"] == "BadRequestError" and body["error"]["code"] == 400
