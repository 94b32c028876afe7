"""Throughput of the worker's three jobs at GPU-sized batches, each beside plain PyTorch doing the
same work with the same model in the same call (the ratio is the figure; absolute numbers move with
the machine):

  score   the teacher scores 64 sequences × 1,024 tokens per request          (processed tok/s)
  train   forward_backward + optim_step on 32 rows × 1,024 tokens, teacher-sized student (tok/s, MFU)
  sample  256 concurrent episodes, each its own HTTP /sample request of one 32-token prompt and 64 new
          tokens (the worker batches them into one decode); plain: HF generate over the same 256 rows

Under `--nproc 2` the worker runs under torchrun (DDP) and only the training job runs (2 GPUs vs 1);
`--fsdp-config` trains that config under FSDP2 on every GPU (a ≥ 1 B-parameter model).

    python bench/h200/worker_ops.py --student S.json --teacher T.json [--nproc 2] [--out ops.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Any

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "worker"))
from tcod_worker.tiny import build_tiny_model, build_word_tokenizer, parse_tiny_spec, read_vocabulary  # noqa: E402

#: H200 SXM dense bf16 peak (vendor datasheet), the denominator of MFU.
PEAK_FLOPS = 989e12


class Worker:
    def __init__(self, args: list[str], nproc: int = 1, env: dict[str, str] | None = None):
        launch = [sys.executable] + (["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc)] if nproc > 1 else [])
        self.proc = subprocess.Popen(launch + ["-m", "tcod_worker", "--port", "0", *args], stdout=subprocess.PIPE,
                                     stderr=sys.stderr, text=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "worker"), **(env or {})})
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if "listening on " in line:
                self.base = line.split("listening on ", 1)[1].split()[0]
                break
        else:
            raise SystemExit(f"worker exited with {self.proc.wait()}")

    def post(self, path: str, body: Any) -> Any:
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.loads(r.read())

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base + path, timeout=60) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn, reps: int) -> float:
    fn()  # warm-up
    sync()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t) / reps


def params_of(config: str, vocab: str) -> int:
    spec = parse_tiny_spec(config, vocab)
    tok = build_word_tokenizer(read_vocabulary(vocab), spec.lowercase)
    return sum(p.numel() for p in build_tiny_model(spec, len(tok), tok.eos_token_id, tok.pad_token_id).parameters())


def plain_model(config: str, vocab: str, device: torch.device):
    spec = parse_tiny_spec(config, vocab)
    tok = build_word_tokenizer(read_vocabulary(vocab), spec.lowercase)
    return build_tiny_model(spec, len(tok), tok.eos_token_id, tok.pad_token_id).to(device), len(tok)


def rand_rows(n: int, length: int, vocab: int, seed: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(5, vocab, (n, length), generator=g).tolist()


def score_job(a, vocab: str, dev: torch.device, out: dict) -> None:
    w = Worker(["--model", a.student, "--teacher", a.teacher, "--vocab", vocab, "--token-budget", str(a.budget)])
    try:
        V = w.get("/info")["vocab_size"]
        seqs = rand_rows(64, 1024, V, 1)
        body = {"sequences": seqs, "prompt_lengths": [1] * 64, "model": "teacher"}
        s = timed(lambda: w.post("/score", body), a.reps)
    finally:
        w.stop()
    model, _ = plain_model(a.teacher, vocab, dev)
    ids = torch.tensor(seqs, device=dev)

    @torch.no_grad()
    def plain():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = model(input_ids=ids).logits[:, :-1].float()
        torch.log_softmax(logits, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).tolist()
    p = timed(plain, a.reps)
    n = 64 * 1024
    out["score"] = {"what": "teacher log-probs of 64 × 1,024-token sequences, one /score request", "tokens": n,
                    "worker_tok_s": round(n / s), "plain_tok_s": round(n / p), "worker_over_plain": round(p / s, 3)}


def train_job(a, vocab: str, dev: torch.device, out: dict, nproc: int = 1, rows: int = 32, config: str | None = None,
              key: str = "train", extra: list[str] | None = None) -> float:
    config = config or a.teacher
    w = Worker(["--model", config, "--vocab", vocab, "--token-budget", str(a.budget), *(extra or [])], nproc=nproc)
    try:
        info = w.get("/info")
        V = info["vocab_size"]
        batch = [{"tokens": t, "mask": [0] + [1] * 1023} for t in rand_rows(rows, 1024, V, 2)]

        def step():
            w.post("/forward_backward", {"rows": batch, "loss": "cross_entropy"})
            w.post("/optim_step", {"lr": 1e-5, "grad_clip": 1.0})
        s = timed(step, a.reps)
        peak = w.get("/info").get("peak_memory_gib")
    finally:
        w.stop()
    n = rows * 1024
    N = params_of(config, vocab)
    res = {"what": f"forward_backward + optim_step, {rows} rows × 1,024 tokens, {N / 1e6:.1f} M params, {nproc} GPU(s), "
                   f"parallel {info.get('parallel')}", "tokens": n, "worker_tok_s": round(n / s), "step_s": round(s, 4),
           "mfu": round(6 * N * n / s / (PEAK_FLOPS * nproc), 4), "params": N, "gpus": nproc,
           "worker_peak_memory_gib_rank0": round(peak, 2) if peak is not None else None}
    if nproc == 1 and config == a.teacher:
        model, _ = plain_model(config, vocab, dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        ids = torch.tensor([r["tokens"] for r in batch], device=dev)

        def plain():
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dev.type == "cuda"):
                logits = model(input_ids=ids).logits[:, :-1].float()
            loss = -torch.log_softmax(logits, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            float(loss.detach())
        p = timed(plain, a.reps)
        res.update(plain_tok_s=round(n / p), worker_over_plain=round(p / s, 3))
    if torch.cuda.is_available():
        res["peak_memory_gib_plain_process"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    out[key] = res
    return n / s


def sample_job(a, vocab: str, dev: torch.device, out: dict, config: str, key: str) -> None:
    w = Worker(["--model", config, "--vocab", vocab])
    rows, new = 256, 64
    try:
        V = w.get("/info")["vocab_size"]
        prompts = rand_rows(rows, 32, V, 3)

        def concurrent():
            errs: list[BaseException] = []

            def one(i: int) -> None:
                try:
                    r = w.post("/sample", {"prompts": [prompts[i]], "max_tokens": new, "seed": i, "stop_token_ids": []})
                    assert len(r["samples"][0]["tokens"]) == new
                except BaseException as e:  # noqa: BLE001
                    errs.append(e)
            ts = [threading.Thread(target=one, args=(i,)) for i in range(rows)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            if errs:
                raise errs[0]
        s = timed(concurrent, a.reps)
        one_req = timed(lambda: w.post("/sample", {"prompts": prompts, "max_tokens": new, "seed": 0, "stop_token_ids": []}), a.reps)
    finally:
        w.stop()
    model, _ = plain_model(config, vocab, dev)
    ids = torch.tensor(prompts, device=dev)

    @torch.no_grad()
    def plain():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new,
                           do_sample=True, pad_token_id=0)
    p = timed(plain, a.reps)
    n = rows * new
    out[key] = {"what": f"{rows} concurrent /sample requests (1 prompt of 32 tokens, {new} new tokens each) vs HF generate "
                        f"over the same {rows} rows", "generated": n, "worker_tok_s": round(n / s),
                "worker_one_request_tok_s": round(n / one_req), "plain_generate_tok_s": round(n / p),
                "worker_over_plain": round(p / s, 3)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--student", required=True)
    ap.add_argument("--teacher", required=True)
    ap.add_argument("--nproc", type=int, default=1)
    ap.add_argument("--fsdp-config", default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--budget", type=int, default=65536)
    ap.add_argument("--out", default="")
    ap.add_argument("--jobs", default="score,train,sample")
    a = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = os.path.join(tempfile.mkdtemp(), "words.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(f"w{i}" for i in range(4090)) + "\n")
    out: dict[str, Any] = {"device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu", "torch": torch.__version__}
    jobs = a.jobs.split(",")

    def save() -> None:  # after every job, so a job cut by a time cap leaves the others' figures
        print(json.dumps(out), file=sys.stderr, flush=True)
        if a.out:
            with open(a.out, "w") as f:
                f.write(json.dumps(out, indent=1) + "\n")
    if a.nproc == 1:
        if "score" in jobs:
            score_job(a, vocab, dev, out)
            save()
        if "train" in jobs:
            train_job(a, vocab, dev, out)
            save()
        if "sample" in jobs:
            sample_job(a, vocab, dev, out, a.student, "sample_student")
            save()
            sample_job(a, vocab, dev, out, a.teacher, "sample_teacher")
    else:
        one = train_job(a, vocab, dev, out, nproc=1, rows=64, key="train_1gpu")
        save()
        many = train_job(a, vocab, dev, out, nproc=a.nproc, rows=64, key=f"train_{a.nproc}gpu", extra=["--parallel", "ddp"])
        out["scaling"] = {"gpus": a.nproc, "speedup": round(many / one, 3)}
        save()
        if a.fsdp_config:
            train_job(a, vocab, dev, out, nproc=a.nproc, rows=16, config=a.fsdp_config, key="fsdp_1b", extra=["--parallel", "fsdp"])
    text = json.dumps(out, indent=1)
    print(text, flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
