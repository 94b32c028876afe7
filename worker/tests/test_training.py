"""forward_backward / optim_step / save / load against hand computations on the worker's own weights."""

from __future__ import annotations

import json
import math
import os

import pytest
import torch

from tcod_worker.tiny import build_tiny_model, build_word_tokenizer, parse_tiny_spec, read_vocabulary

from .conftest import reference_model


def _rows(worker):
    a = worker.ok("/tokenize", {"text": "go to the fridge 1 and open it"})["tokens"]
    b = worker.ok("/tokenize", {"text": "take the apple from the table"})["tokens"]
    rows = [
        {"tokens": a, "mask": [0, 0, 0] + [1] * (len(a) - 3)},
        {"tokens": b, "mask": [0, 0] + [1] * (len(b) - 2)},
    ]
    return rows


def _ref_logprobs(ref, tokens):
    with torch.no_grad():
        lp = torch.log_softmax(ref(torch.tensor([tokens])).logits[0].float(), dim=-1)
    return [0.0] + [lp[i - 1, tokens[i]].item() for i in range(1, len(tokens))]


def _grad_norm(ref, loss_fn):
    ref.zero_grad()
    loss = loss_fn()
    loss.backward()
    return math.sqrt(sum(float((p.grad ** 2).sum()) for p in ref.parameters() if p.grad is not None)), loss.item()


def test_importance_sampling_loss_and_gradient_match_hand_computation(full_worker, tmp_path):
    ref = reference_model(full_worker, tmp_path)
    rows = _rows(full_worker)
    total = sum(sum(r["mask"]) for r in rows)
    for k, r in enumerate(rows):
        lp = _ref_logprobs(ref, r["tokens"])
        # old logprobs a little off the current ones, so ratios differ from 1
        r["old_logprobs"] = [(x - 0.1 * ((i % 3) - 1)) * m for i, (x, m) in enumerate(zip(lp, r["mask"]))]
        r["advantages"] = [(0.5 + 0.25 * k - 0.1 * i) * m for i, m in enumerate(r["mask"])]
        r["loss_weights"] = [m / total for m in r["mask"]]
    before = full_worker.ok("/info")["version"]
    fb = full_worker.ok("/forward_backward", {"rows": rows, "loss": "importance_sampling"})

    def hand_loss():
        out = torch.zeros(())
        for r in rows:
            logits = ref(torch.tensor([r["tokens"]])).logits[0, :-1].float()
            lp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(r["tokens"][1:]).unsqueeze(-1)).squeeze(-1)
            old, adv, w = (torch.tensor(r[k][1:]) for k in ("old_logprobs", "advantages", "loss_weights"))
            out = out - (w * torch.exp(lp - old) * adv).sum()
        return out

    norm, loss = _grad_norm(ref, hand_loss)
    assert fb["loss"] == pytest.approx(loss, abs=1e-5)
    assert fb["tokens"] == total and fb["rows"] == 2
    step = full_worker.ok("/optim_step", {"lr": 0.0})
    assert step["grad_norm"] == pytest.approx(norm, rel=1e-4)
    assert step["version"] == before + 1


def test_null_old_logprobs_train_at_ratio_one(full_worker, tmp_path):
    """A row with old_logprobs null is scored by the update itself: ratio exactly 1, so with A = 1 it
    gets the cross-entropy gradient, beside a row with given old logprobs; its mean −logp comes back."""
    ref = reference_model(full_worker, tmp_path)
    rows = _rows(full_worker)
    total = sum(sum(r["mask"]) for r in rows)
    lp1 = _ref_logprobs(ref, rows[1]["tokens"])
    rows[0].update(advantages=list(rows[0]["mask"]), old_logprobs=None)
    rows[1].update(advantages=[0.5 * m for m in rows[1]["mask"]], old_logprobs=[(x - 0.2) * m for x, m in zip(lp1, rows[1]["mask"])])
    for loss_fn in ("importance_sampling", "ppo"):
        fb = full_worker.ok("/forward_backward", {"rows": rows, "loss": loss_fn, "dual_clip": None, "clip": 10.0})

        def hand_loss():
            out = torch.zeros(())
            logits = ref(torch.tensor([rows[0]["tokens"]])).logits[0, :-1].float()
            lp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(rows[0]["tokens"][1:]).unsqueeze(-1)).squeeze(-1)
            m0 = torch.tensor(rows[0]["mask"][1:], dtype=torch.float32)
            out = out - (m0 / total * torch.exp(lp - lp.detach())).sum()  # ratio 1, A = 1
            logits = ref(torch.tensor([rows[1]["tokens"]])).logits[0, :-1].float()
            lp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(rows[1]["tokens"][1:]).unsqueeze(-1)).squeeze(-1)
            old, adv = (torch.tensor(rows[1][k][1:]) for k in ("old_logprobs", "advantages"))
            m1 = torch.tensor(rows[1]["mask"][1:], dtype=torch.float32)
            return out - (m1 / total * torch.exp(lp - old) * adv).sum()

        norm, loss = _grad_norm(ref, hand_loss)
        assert fb["loss"] == pytest.approx(loss, abs=1e-5)
        lp0 = _ref_logprobs(ref, rows[0]["tokens"])
        n0 = sum(rows[0]["mask"])
        assert fb["metrics"]["self_scored_tokens"] == n0
        assert fb["metrics"]["self_scored_nll"] == pytest.approx(-sum(x * m for x, m in zip(lp0, rows[0]["mask"])) / n0, abs=1e-5)
        step = full_worker.ok("/optim_step", {"lr": 0.0})
        assert step["grad_norm"] == pytest.approx(norm, rel=1e-4)
    # Omitted (not null) stays an error: a missing field is a client bug, not a request for ratio 1.
    del rows[0]["old_logprobs"]
    status, payload = full_worker.call("/forward_backward", {"rows": rows, "loss": "ppo"})
    assert status == 400 and "old_logprobs is required" in payload["error"]["message"]


def test_ppo_clipping_end_to_end(full_worker, tmp_path):
    ref = reference_model(full_worker, tmp_path)
    r = _rows(full_worker)[0]
    lp = _ref_logprobs(ref, r["tokens"])
    n = sum(r["mask"])
    # ratio 1.5 everywhere (old = lp − ln 1.5), A = +1: every token clipped to 1.2 → loss −1.2 (token mean)
    r["old_logprobs"] = [(x - math.log(1.5)) * m for x, m in zip(lp, r["mask"])]
    r["advantages"] = list(r["mask"])
    fb = full_worker.ok("/forward_backward", {"rows": [r], "loss": "ppo", "clip": 0.2, "dual_clip": 3.0})
    assert fb["loss"] == pytest.approx(-1.2, abs=1e-5)
    assert fb["metrics"]["clip_fraction"] == pytest.approx(1.0)
    assert fb["metrics"]["ratio_mean"] == pytest.approx(1.5, abs=1e-4)
    assert fb["tokens"] == n
    step = full_worker.ok("/optim_step", {"lr": 0.0})
    assert step["grad_norm"] == pytest.approx(0.0, abs=1e-9), "fully clipped PPO has no gradient"


def test_reverse_kl_equals_closed_form(full_worker, tmp_path, assets):
    ref = reference_model(full_worker, tmp_path)
    spec = parse_tiny_spec(str(assets["teacher"]), None)
    tok = build_word_tokenizer(read_vocabulary(str(assets["vocab"])))
    teacher = build_tiny_model(spec, len(tok), tok.eos_token_id, tok.pad_token_id).eval()
    rows = _rows(full_worker)
    fb = full_worker.ok("/forward_backward", {"rows": rows, "loss": "reverse_kl"})
    total = sum(sum(r["mask"]) for r in rows)
    want = 0.0
    with torch.no_grad():
        for r in rows:
            ps = torch.log_softmax(ref(torch.tensor([r["tokens"]])).logits[0, :-1].float(), -1)
            pt = torch.log_softmax(teacher(torch.tensor([r["tokens"]])).logits[0, :-1].float(), -1)
            kl = (ps.exp() * (ps - pt)).sum(-1)
            want += float((kl * torch.tensor(r["mask"][1:])).sum()) / total
    assert want > 0.01
    assert fb["loss"] == pytest.approx(want, abs=1e-5)
    assert fb["metrics"]["reverse_kl_mean"] == pytest.approx(want, abs=1e-5)
    full_worker.ok("/optim_step", {"lr": 0.0})


def test_training_moves_weights_and_samples(full_worker):
    rows = _rows(full_worker)
    prompt = rows[0]["tokens"][:3]
    sample_req = {"prompts": [prompt], "max_tokens": 12, "seed": 21}
    before = full_worker.ok("/sample", sample_req)["samples"][0]
    score_req = {"sequences": [rows[0]["tokens"]], "prompt_lengths": [3]}
    lp0 = sum(full_worker.ok("/score", score_req)["results"][0]["logprobs"])
    v0 = full_worker.ok("/info")["version"]
    for _ in range(5):
        fb = full_worker.ok("/forward_backward", {"rows": rows[:1], "loss": "cross_entropy"})
        step = full_worker.ok("/optim_step", {"lr": 1e-2, "grad_clip": 1.0})
        assert step["grad_norm"] > 0
    lp1 = sum(full_worker.ok("/score", score_req)["results"][0]["logprobs"])
    assert lp1 > lp0 + 1.0, "SFT on a sequence must raise its likelihood"
    assert fb["loss"] == pytest.approx(-fb["metrics"]["logprob_mean"], abs=1e-5)  # token mean of −logp
    after = full_worker.ok("/sample", sample_req)["samples"][0]
    assert after != before
    assert full_worker.ok("/info")["version"] == v0 + 5


def test_reverse_kl_training_lowers_the_kl(full_worker):
    rows = _rows(full_worker)
    kls = []
    for _ in range(4):
        fb = full_worker.ok("/forward_backward", {"rows": rows, "loss": "reverse_kl"})
        kls.append(fb["metrics"]["reverse_kl_mean"])
        full_worker.ok("/optim_step", {"lr": 1e-2})
    assert kls[-1] < kls[0] * 0.9, kls


def test_full_save_load_round_trip(full_worker, tmp_path):
    rows = _rows(full_worker)
    score_req = {"sequences": [rows[1]["tokens"]], "prompt_lengths": [2]}
    a = full_worker.ok("/score", score_req)["results"][0]["logprobs"]
    saved = full_worker.ok("/save", {"path": str(tmp_path / "full"), "kind": "full"})
    assert os.path.isfile(tmp_path / "full" / "config.json") and os.path.isfile(tmp_path / "full" / "tokenizer.json")
    full_worker.ok("/forward_backward", {"rows": rows, "loss": "cross_entropy"})
    full_worker.ok("/optim_step", {"lr": 1e-2})
    b = full_worker.ok("/score", score_req)["results"][0]["logprobs"]
    assert b != pytest.approx(a, abs=1e-4)
    loaded = full_worker.ok("/load", {"path": str(tmp_path / "full")})
    assert loaded["kind"] == "full" and loaded["version"] == saved["version"] and loaded["optimizer_restored"]
    assert full_worker.ok("/score", score_req)["results"][0]["logprobs"] == pytest.approx(a, abs=1e-6)


def test_checkpoint_of_a_config_model_reloads_its_word_tokenizer(full_worker, tmp_path):
    """A checkpoint of a config-built model carries its word list; loading the directory rebuilds the
    same tokenizer from it, whatever the transformers release makes of the saved tokenizer files."""
    from tcod_worker.loading import WORD_TOKENIZER_FILE, load_tokenizer_and_model

    full_worker.ok("/save", {"path": str(tmp_path / "ck"), "kind": "full"})
    saved = json.loads((tmp_path / "ck" / WORD_TOKENIZER_FILE).read_text())
    assert saved["lowercase"] is True and "fridge" in saved["words"]
    # Damage the Hugging Face tokenizer files: the word list alone must rebuild the tokenizer.
    (tmp_path / "ck" / "tokenizer.json").write_text("{}")
    loaded = load_tokenizer_and_model(str(tmp_path / "ck"), None, torch.float32)
    text = "Go to the fridge 1, and open it."
    assert loaded.tokenizer.encode(text, add_special_tokens=False) == full_worker.ok("/tokenize", {"text": text, "add_special_tokens": False})["tokens"]
    assert loaded.words == saved["words"]
    chat = [{"role": "user", "content": "look"}, {"role": "assistant", "content": "go"}]
    assert loaded.tokenizer.apply_chat_template(chat, tokenize=True, return_dict=False) == full_worker.ok("/tokenize", {"messages": chat, "add_generation_prompt": False})["tokens"]


def test_lora_save_load_round_trip(lora_worker, tmp_path):
    rows = _rows(lora_worker)
    score_req = {"sequences": [rows[0]["tokens"]], "prompt_lengths": [3]}
    # LoRA B starts at zero: one step first, so the saved adapter is not the identity
    lora_worker.ok("/forward_backward", {"rows": rows, "loss": "cross_entropy"})
    lora_worker.ok("/optim_step", {"lr": 1e-2})
    a = lora_worker.ok("/score", score_req)["results"][0]["logprobs"]
    saved = lora_worker.ok("/save", {"path": str(tmp_path / "adapter"), "kind": "lora"})
    cfg = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
    assert cfg["r"] == 4 and os.path.isfile(tmp_path / "adapter" / "adapter_model.safetensors")
    for _ in range(2):
        lora_worker.ok("/forward_backward", {"rows": rows, "loss": "cross_entropy"})
        lora_worker.ok("/optim_step", {"lr": 1e-2})
    b = lora_worker.ok("/score", score_req)["results"][0]["logprobs"]
    assert b != pytest.approx(a, abs=1e-4)
    loaded = lora_worker.ok("/load", {"path": str(tmp_path / "adapter")})
    assert loaded["kind"] == "lora" and loaded["version"] == saved["version"]
    assert lora_worker.ok("/score", score_req)["results"][0]["logprobs"] == pytest.approx(a, abs=1e-6)
    # kind full on a LoRA student: merged weights a plain transformers load reproduces
    lora_worker.ok("/save", {"path": str(tmp_path / "merged"), "kind": "full", "optimizer": False})
    from transformers import AutoModelForCausalLM

    merged = AutoModelForCausalLM.from_pretrained(str(tmp_path / "merged"), dtype="float32").eval()
    want = _ref_logprobs(merged, rows[0]["tokens"])[3:]
    assert want == pytest.approx(a, abs=1e-4)
    # an adapter of another rank is refused, naming both ranks
    cfg["r"] = 8
    (tmp_path / "adapter" / "adapter_config.json").write_text(json.dumps(cfg))
    status, payload = lora_worker.call("/load", {"path": str(tmp_path / "adapter")})
    assert status == 400 and "rank 8" in payload["error"]["message"]


def _teacher_q(V, seed):
    """A sparse next-token distribution: three listed tokens, the rest spread evenly."""
    toks = [(seed * 7 + 5) % V, (seed * 11 + 9) % V, (seed * 13 + 40) % V]
    probs = [0.5, 0.2, 0.1]
    return {"tokens": toks, "logprobs": [math.log(p) for p in probs], "rest": math.log(0.2 / (V - 3))}


def _dense_q(q, V):
    lq = torch.full((V,), q["rest"])
    lq[q["tokens"]] = torch.tensor(q["logprobs"])
    return lq


def _closed_form_kls(ref, row, V):
    """KL(p_S‖q) and KL(q‖p_S) per position with a distribution (dense, in this process)."""
    with torch.no_grad():
        lp = torch.log_softmax(ref(torch.tensor([row["tokens"]])).logits[0].float(), -1)
    rev, fwd = {}, {}
    for t, q in enumerate(row["teacher_distributions"]):
        if q is None:
            continue
        lq, p = _dense_q(q, V), lp[t - 1]
        rev[t] = float((p.exp() * (p - lq)).sum())
        fwd[t] = float((lq.exp() * (lq - p)).sum())
    return rev, fwd


def test_exact_kl_targets_match_closed_form_and_training_lowers_them(full_worker, tmp_path):
    V = full_worker.ok("/info")["vocab_size"]
    # Shorter row first: the worker batches longest first, so targets must follow its order, not ours.
    rows = _rows(full_worker)[::-1]
    for k, r in enumerate(rows):
        n = len(r["tokens"])
        # Policy term zero (A = 0): the gradient is the KL targets' alone.
        r["advantages"], r["old_logprobs"] = [0.0] * n, [0.0] * n
        r["teacher_distributions"] = [_teacher_q(V, t + k) if m and t % 2 == 0 else None for t, m in enumerate(r["mask"])]
        r["kl_coefs"] = [(1.0 + 0.5 * k) if q else 0.0 for q in r["teacher_distributions"]]
    # forward KL on one row only, beside its reverse KL
    rows[0]["forward_kl_coefs"] = [0.5 if q else 0.0 for q in rows[0]["teacher_distributions"]]
    total = sum(sum(r["mask"]) for r in rows)
    ref = reference_model(full_worker, tmp_path)
    want_loss, rev_all, fwd_all = 0.0, [], []
    for r in rows:
        rev, fwd = _closed_form_kls(ref, r, V)
        for t in rev:
            want_loss += (r["kl_coefs"][t] * rev[t] + r.get("forward_kl_coefs", [0.0] * len(r["tokens"]))[t] * fwd[t]) / total
            rev_all.append(rev[t])
            if r.get("forward_kl_coefs"):
                fwd_all.append(fwd[t])
    body = {"rows": rows, "loss": "importance_sampling"}
    fb = full_worker.ok("/forward_backward", body)
    assert fb["loss"] == pytest.approx(want_loss, abs=1e-5)
    assert fb["metrics"]["reverse_kl_mean"] == pytest.approx(sum(rev_all) / len(rev_all), abs=1e-5)
    assert fb["metrics"]["forward_kl_mean"] == pytest.approx(sum(fwd_all) / len(fwd_all), abs=1e-5)
    assert fb["metrics"]["reverse_kl_mean"] > 0.5
    kls = [(fb["metrics"]["reverse_kl_mean"], fb["metrics"]["forward_kl_mean"])]
    for _ in range(6):
        full_worker.ok("/optim_step", {"lr": 3e-3})
        fb = full_worker.ok("/forward_backward", body)
        kls.append((fb["metrics"]["reverse_kl_mean"], fb["metrics"]["forward_kl_mean"]))
    full_worker.ok("/optim_step", {"lr": 0.0})
    assert all(b[0] < a[0] and b[1] < a[1] for a, b in zip(kls, kls[1:])), kls
    # Steps are small when earlier tests left AdamW's second moments large (the worker is shared).
    assert kls[-1][0] < kls[0][0] * 0.97 and kls[-1][1] < kls[0][1] * 0.9, kls
    # Rows without the fields train as before: no KL metrics.
    plain = [{k: r[k] for k in ("tokens", "mask", "advantages", "old_logprobs")} for r in rows]
    fb = full_worker.ok("/forward_backward", {"rows": plain, "loss": "importance_sampling"})
    assert "reverse_kl_mean" not in fb["metrics"] and "forward_kl_mean" not in fb["metrics"]
    assert fb["loss"] == pytest.approx(0.0, abs=1e-9)
    full_worker.ok("/optim_step", {"lr": 0.0})


def _q(**kw):
    base = {"tokens": [0, 1], "logprobs": [math.log(0.5), math.log(0.25)], "rest": None}
    return {**base, **kw}


def _kl_row(V, **fields):
    rest = math.log(0.25 / (V - 2))
    row = {"tokens": [2, 3, 4], "mask": [0, 1, 1], "kl_coefs": [0.0, 1.0, 0.0],
           "teacher_distributions": [None, _q(rest=rest), None]}
    row.update(fields)
    return row


@pytest.mark.parametrize("fields,fragment", [
    ({"kl_coefs": [0.0, 1.0]}, "rows[0].kl_coefs must be a list of 3 numbers"),
    ({"kl_coefs": [0.0, "x", 0.0]}, "rows[0].kl_coefs[1] must be a finite number"),
    ({"forward_kl_coefs": [0.0, None, 0.0]}, "rows[0].forward_kl_coefs[1] must be a finite number"),
    ({"teacher_distributions": None}, "rows[0] position 1: kl coefficient 1.0 but the row has no teacher_distributions"),
    ({"teacher_distributions": None, "kl_coefs": None, "forward_kl_coefs": [0.0, 0.0, 0.0]}, "forward_kl_coefs come with teacher_distributions"),
    ({"teacher_distributions": [None, None]}, "rows[0].teacher_distributions must be a list of 3 entries"),
    ({"kl_coefs": [0.0, 0.0, 1.0]}, "rows[0] position 2: kl coefficient 1.0, forward 0.0 but teacher_distributions[2] is null"),
    ({"mask": [0, 0, 1], "kl_coefs": [0.0, 1.0, 0.0]}, "rows[0] position 1: kl coefficient 1.0, forward 0.0 where mask is 0"),
    ({"forward_kl_coefs": [0.0, 0.0, 2.0]}, "rows[0] position 2: kl coefficient 0.0, forward 2.0 but teacher_distributions[2] is null"),
    ({"teacher_distributions": [None, "q", None]}, "rows[0].teacher_distributions[1] must be null or {tokens, logprobs, rest}"),
    ({"teacher_distributions": [None, _q(tokens=[0, 99999]), None]}, "rows[0].teacher_distributions[1].tokens[1] = 99999 is outside the vocabulary"),
    ({"teacher_distributions": [None, _q(tokens=[1, 1], rest=-6.0), None]}, "rows[0].teacher_distributions[1]: tokens repeat an id"),
    ({"teacher_distributions": [None, _q(logprobs=[-1.0]), None]}, "tokens lists 2 ids but logprobs has 1 entries"),
    ({"teacher_distributions": [None, _q(logprobs=[-1.0, "x"]), None]}, "rows[0].teacher_distributions[1].logprobs[1] must be a finite number"),
    ({"teacher_distributions": [None, _q(), None]}, "rows[0].teacher_distributions[1]: lists 2 of"),
    ({"teacher_distributions": [None, _q(rest="-1"), None]}, "rows[0].teacher_distributions[1].rest must be a finite number or null"),
    ({"teacher_distributions": [None, _q(rest=-1.0), None]}, "rows[0].teacher_distributions[1]: the distribution sums to"),
])
def test_exact_kl_target_validation(full_worker, fields, fragment):
    V = full_worker.ok("/info")["vocab_size"]
    status, payload = full_worker.call("/forward_backward", {"rows": [_kl_row(V, **fields)], "loss": "cross_entropy"})
    assert status == 400, payload
    assert fragment in payload["error"]["message"], payload["error"]["message"]


def test_exact_kl_target_validation_sum_and_loss(full_worker):
    V = full_worker.ok("/info")["vocab_size"]
    # 0.5 + 0.25 + (V − 2)·(0.3 / (V − 2)) = 1.05: the message says the sum.
    row = _kl_row(V, teacher_distributions=[None, _q(rest=math.log(0.3 / (V - 2))), None])
    status, payload = full_worker.call("/forward_backward", {"rows": [row], "loss": "cross_entropy"})
    assert status == 400 and "sums to 1.05," in payload["error"]["message"], payload
    # within 1e-3 of 1 is accepted
    row = _kl_row(V, teacher_distributions=[None, _q(rest=math.log(0.2505 / (V - 2))), None])
    assert full_worker.ok("/forward_backward", {"rows": [row], "loss": "cross_entropy"})["metrics"]["reverse_kl_mean"] > 0
    full_worker.ok("/optim_step", {"lr": 0.0})
    status, payload = full_worker.call("/forward_backward", {"rows": [_kl_row(V)], "loss": "reverse_kl"})
    assert status == 400 and "loss reverse_kl already is the KL" in payload["error"]["message"], payload


def test_exact_kl_targets_across_micro_batches_match_the_dense_loss(assets):
    """In-process: rows split into one micro-batch each (small token budget) give the loss, metrics and
    gradients of one batch, and both equal a dense full-vocabulary computation on the student."""
    from tcod_worker.comm import Comm
    from tcod_worker.options import Options
    from tcod_worker.worker import Worker

    w = Worker(Options(model=str(assets["student"]), device="cpu", dtype="fp32"), Comm())
    V = w.vocab_size
    enc = lambda s: w.tokenizer.encode(s, add_special_tokens=False)  # noqa: E731
    texts = ["open the fridge", "go to the desk 1 and take the mug", "you see a lamp", "take the apple from the table"]
    rows = []
    for k, text in enumerate(texts):
        toks = enc(text)
        n = len(toks)
        mask = [0] + [1] * (n - 1)
        dists = [_teacher_q(V, 3 * k + t) if t % 2 == 1 else None for t in range(n)]
        rows.append({"tokens": toks, "mask": mask, "teacher_distributions": dists,
                     "kl_coefs": [0.5 + 0.25 * k if d else 0.0 for d in dists],
                     "forward_kl_coefs": [0.3 * (t % 3) if d else 0.0 for t, d in enumerate(dists)]})

    def run(budget):
        w.opts.token_budget = budget
        fb = w.forward_backward({"rows": rows, "loss": "cross_entropy"})
        g = torch.cat([p.grad.reshape(-1).clone() for p in w.student.parameters() if p.grad is not None])
        for p in w.student.parameters():
            p.grad = None
        w.pending_tokens = 0
        return fb, g

    one, g1 = run(1 << 20)
    split, g2 = run(8)
    total = sum(sum(r["mask"]) for r in rows)
    want, rev, fwd = torch.zeros(()), [], []
    for r in rows:
        lp = torch.log_softmax(w.student(input_ids=torch.tensor([r["tokens"]])).logits[0].float(), -1)
        for t in range(1, len(r["tokens"])):
            want = want - lp[t - 1, r["tokens"][t]] / total
            q = r["teacher_distributions"][t]
            if q is None:
                continue
            lq, p = _dense_q(q, V), lp[t - 1]
            kr, kf = (p.exp() * (p - lq)).sum(), (lq.exp() * (lq - p)).sum()
            want = want + (r["kl_coefs"][t] * kr + r["forward_kl_coefs"][t] * kf) / total
            rev.append(float(kr.detach()))
            if r["forward_kl_coefs"][t]:
                fwd.append(float(kf.detach()))
    want.backward()
    g0 = torch.cat([p.grad.reshape(-1).clone() for p in w.student.parameters() if p.grad is not None])
    for fb in (one, split):
        assert fb["loss"] == pytest.approx(float(want.detach()), abs=1e-5)
        assert fb["metrics"]["reverse_kl_mean"] == pytest.approx(sum(rev) / len(rev), abs=1e-5)
        assert fb["metrics"]["forward_kl_mean"] == pytest.approx(sum(fwd) / len(fwd), abs=1e-5)
    assert torch.allclose(g1, g0, atol=1e-6, rtol=1e-4) and torch.allclose(g2, g0, atol=1e-6, rtol=1e-4)
