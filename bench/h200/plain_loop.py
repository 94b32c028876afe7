"""The baseline for bench/h200: a plain PyTorch loop replaying, literally, the work a tcod run did.

The tcod run's worker records every request it served (TCOD_WORKER_TRACE, worker/tcod_worker/trace.py):
the prompts it sampled from and the tokens it produced, the sequences it scored (teacher or student),
the rows it trained on, the optimiser steps. This script rebuilds the same models from the same
configs and vocabulary and replays those steps op by op in one process, without tcod, HTTP or the
worker: sampling = the same prompts, left-padded, prefilled and decoded with a KV cache for as many
steps as the run decoded, each step sampling from the distribution and then feeding the token the
run produced (so the sequences are the run's); scoring = a padded forward over the same sequences in
batches of the same token budget; training = a padded forward/backward over the same rows with the
run's loss, then AdamW. Both sides count processed tokens the same way: every token of every
sequence a forward ran over (prompt + response; for sampling, prompt + generated tokens).

    python bench/h200/plain_loop.py --trace RUN/worker-trace.jsonl --student S.json --teacher T.json \
        --vocab V.txt [--device cuda] [--steps 5] [--budget 65536] [--out plain.json]

Prints (and writes) one JSON object: per job (sample, teacher score, student score, train) tokens/s
and seconds per step on both sides, the tcod/plain step-time ratio, and the plain loop's peak memory.
The first optimiser step of the run is a warm-up on both sides and is not counted.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker"))
from tcod_worker.tiny import build_tiny_model, build_word_tokenizer, parse_tiny_spec, read_vocabulary  # noqa: E402

JOBS = ("sample", "teacher_score", "student_score", "train")


def read_steps(trace: str) -> list[list[dict[str, Any]]]:
    """The trace cut at each optim_step: the ops of optimiser step 1, 2, …"""
    steps, cur = [], []
    for line in open(trace, encoding="utf-8"):
        if not line.strip():
            continue
        op = json.loads(line)
        cur.append(op)
        if op["op"] == "optim_step":
            steps.append(cur)
            cur = []
    return steps


def job_of(op: dict[str, Any]) -> str | None:
    if op["op"] == "sample":
        return "sample"
    if op["op"] == "score":
        return "teacher_score" if op["model"] == "teacher" else "student_score"
    if op["op"] in ("forward_backward", "optim_step"):
        return "train"
    return None


def tokens_of(op: dict[str, Any]) -> int:
    if op["op"] == "sample":
        return sum(len(p) + len(r) for p, r in zip(op["prompts"], op["responses"]))
    if op["op"] == "score":
        return sum(len(s) for s in op["sequences"])
    if op["op"] == "forward_backward":
        return sum(len(r["tokens"]) for r in op["rows"])
    return 0


def build(config: str, vocab: str, device: torch.device):
    spec = parse_tiny_spec(config, vocab)
    if spec is None:
        raise SystemExit(f"{config}: expected a JSON model config")
    tok = build_word_tokenizer(read_vocabulary(vocab), spec.lowercase)
    return tok, build_tiny_model(spec, len(tok), tok.eos_token_id, tok.pad_token_id).to(device)


def batches(seqs: list[list[int]], budget: int) -> list[list[int]]:
    """Consecutive indices, rows × longest row ≤ budget (the plain loop keeps the request order)."""
    out, cur, longest = [], [], 0
    for i, s in enumerate(seqs):
        if cur and max(longest, len(s)) * (len(cur) + 1) > budget:
            out.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, len(s))
    if cur:
        out.append(cur)
    return out


def padded(seqs: list[list[int]], pad: int, device: torch.device) -> torch.Tensor:
    w = max(len(s) for s in seqs)
    return torch.tensor([s + [pad] * (w - len(s)) for s in seqs], device=device)


class Replay:
    def __init__(self, student, teacher, pad: int, device: torch.device, budget: int, lr: float):
        self.models = {"student": student, "teacher": teacher}
        self.pad, self.device, self.budget = pad, device, budget
        self.opt = torch.optim.AdamW(student.parameters(), lr=lr, betas=(0.9, 0.999), weight_decay=0.0)
        self.amp = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if device.type == "cuda" else \
            (lambda: torch.autocast("cpu", enabled=False))

    @torch.no_grad()
    def sample(self, op: dict[str, Any]) -> None:
        model = self.models[op["model"]]
        prompts, responses = op["prompts"], op["responses"]
        steps = max((len(r) for r in responses), default=0)
        if steps == 0:
            return
        width = max(len(p) for p in prompts)
        ids = torch.tensor([[self.pad] * (width - len(p)) + p for p in prompts], device=self.device)
        attn = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        forced = torch.tensor([r + [self.pad] * (steps - len(r)) for r in responses], device=self.device)
        pos = (attn.cumsum(-1) - 1).clamp(min=0)
        with self.amp():
            out = model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, logits_to_keep=1)
            past, logits, nxt = out.past_key_values, out.logits[:, -1], pos[:, -1:] + 1
            for t in range(steps):
                probs = torch.softmax(logits.float(), -1)
                torch.multinomial(probs, 1)
                tok = forced[:, t: t + 1]
                attn = torch.cat([attn, torch.ones_like(tok)], 1)
                if t == steps - 1:
                    break
                out = model(input_ids=tok, attention_mask=attn, position_ids=nxt, past_key_values=past, use_cache=True)
                past, logits, nxt = out.past_key_values, out.logits[:, -1], nxt + 1
        torch.cuda.synchronize() if self.device.type == "cuda" else None

    @torch.no_grad()
    def score(self, op: dict[str, Any]) -> None:
        model = self.models[op["model"]]
        seqs, pls = op["sequences"], op["prompt_lengths"]
        for b in batches(seqs, self.budget):
            ids = padded([seqs[i] for i in b], self.pad, self.device)
            with self.amp():
                logits = model(input_ids=ids).logits[:, :-1].float()
            lp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            flat = lp.tolist()
            _ = [flat[j][pls[i] - 1: len(seqs[i]) - 1] for j, i in enumerate(b)]

    def forward_backward(self, op: dict[str, Any]) -> None:
        model = self.models["student"]
        rows = op["rows"]
        n_tok = sum(sum(r["mask"]) for r in rows)
        for b in batches([r["tokens"] for r in rows], self.budget):
            ids = padded([rows[i]["tokens"] for i in b], self.pad, self.device)
            mask = padded([rows[i]["mask"] for i in b], 0, self.device)[:, 1:].float()
            with self.amp():
                logits = model(input_ids=ids).logits[:, :-1].float()
            lp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            if op["loss"] == "cross_entropy":
                per = -lp
            else:  # importance sampling / ppo against the detached log-probs, advantage 1 (same compute)
                per = -torch.exp(lp - lp.detach())
            ((per * mask).sum() / n_tok).backward()

    def optim_step(self) -> None:
        torch.nn.utils.clip_grad_norm_(self.models["student"].parameters(), 1.0)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)

    def run(self, op: dict[str, Any]) -> None:
        if op["op"] == "sample":
            self.sample(op)
        elif op["op"] == "score":
            self.score(op)
        elif op["op"] == "forward_backward":
            self.forward_backward(op)
        elif op["op"] == "optim_step":
            self.optim_step()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--student", required=True)
    ap.add_argument("--teacher", required=True)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--budget", type=int, default=65536)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    device = torch.device(a.device)
    steps = read_steps(a.trace)
    if len(steps) < 2:
        raise SystemExit(f"{a.trace}: fewer than 2 optimiser steps recorded; nothing to replay")
    tok, student = build(a.student, a.vocab, device)
    _, teacher = build(a.teacher, a.vocab, device)
    teacher.eval().requires_grad_(False)
    rp = Replay(student, teacher, tok.pad_token_id, device, a.budget, a.lr)
    sync = (lambda: torch.cuda.synchronize()) if device.type == "cuda" else (lambda: None)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    chosen = steps[: a.steps + 1]  # step 1 warms up (allocator, kernels) and is not counted
    plain_s = {j: 0.0 for j in JOBS}
    tcod_s = {j: 0.0 for j in JOBS}
    toks = {j: 0 for j in JOBS}
    step_plain, step_tcod = [], []
    prev_at = chosen[0][-1]["at"]
    for k, ops in enumerate(chosen):
        t_step = time.perf_counter()
        for op in ops:
            sync()
            t0 = time.perf_counter()
            rp.run(op)
            sync()
            dt = time.perf_counter() - t0
            j = job_of(op)
            if k > 0 and j:
                plain_s[j] += dt
                tcod_s[j] += op["s"]
                toks[j] += tokens_of(op)
        if k > 0:
            step_plain.append(time.perf_counter() - t_step)
            step_tcod.append(ops[-1]["at"] - prev_at)
            prev_at = ops[-1]["at"]
    n = len(step_plain)
    generated = sum(len(r) for ops in chosen[1:] for op in ops if op["op"] == "sample" for r in op["responses"])
    rate = lambda t, s: round(t / s) if s > 0 else None  # noqa: E731
    result = {
        "what": "the tcod run's own worker requests (trace), replayed op by op by a plain PyTorch loop",
        "steps": n,
        "step_s": {"tcod": sum(step_tcod) / n, "plain": sum(step_plain) / n,
                   "ratio": (sum(step_tcod) / sum(step_plain))},
        "tokens_per_step": {j: toks[j] / n for j in JOBS},
        "generated_per_step": generated / n,
        "job_s_per_step": {j: {"tcod_worker": tcod_s[j] / n, "plain": plain_s[j] / n} for j in JOBS},
        "tokens_per_s": {j: {"tcod_worker": rate(toks[j], tcod_s[j]), "plain": rate(toks[j], plain_s[j])} for j in JOBS},
        "worker_busy_share": sum(tcod_s.values()) / sum(step_tcod),
        "plain_peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None,
        "tcod_worker_peak_memory_gib": max((op.get("peak_gib") or 0) for ops in chosen for op in ops),
        "params": {"student": sum(p.numel() for p in student.parameters()), "teacher": sum(p.numel() for p in teacher.parameters())},
    }
    text = json.dumps(result, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
