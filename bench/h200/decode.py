"""The worker's decode loop on one GPU: eager (HF's forward per token) against graph (static KV
cache, one CUDA graph replayed per token; worker/tcod_worker/static_decode.py), on the same rows in
the same process, for the texthouse GPU models (random weights, bf16 autocast over fp32 weights as
the worker runs them). Each case is one `generate_rows` call of B rows with prompts of 200–1,500
tokens (the accumulating chat of a texthouse episode) and `max_tokens` new tokens at temperature 1
with no stop token, so every call decodes the same number of steps. Reports ms per call, ms per
decode step and generated tok/s for both, their ratio, and how often the two decodes give the same
tokens (bf16 rounding differs between them, so a sampled row can diverge after a near-tie).

`--profile` instead profiles three graph calls per model (32 rows, 16 new tokens, as in an OPD
round) with torch.profiler and records where a call's wall time goes: the prompt's forward
(tcod.prefill), the static cache (tcod.static_cache), the capture (tcod.capture), the rest
(replays, sampler set-up, the copy back), plus the top operators, in OUT and OUT.MODEL.txt; and
the same for calls kept between calls (OUT.MODEL-kept.txt).

Each case also runs with the decode kept between calls (worker/tcod_worker/decode_cache.py: the
call padded to its shape bucket, the prompt's forward and the decode step replayed as graphs, no capture), and `rollout` times the 30 sample calls of one OPD
step's rollouts (32 episodes, prompts growing by 35 tokens a turn, rows dropping to 8) both ways.

`--procs N` then runs N copies of the measurement at once on the same GPU (the bench/h200/learn.sh
setting: one worker process per run), each reporting its own figures.

    python bench/h200/decode.py --out decode.json [--procs 6]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "worker"))
from tcod_worker.decode_cache import SlotCache  # noqa: E402
from tcod_worker.sampling import SampleRow, generate_rows  # noqa: E402
from tcod_worker.tiny import build_tiny_model, parse_tiny_spec  # noqa: E402

MODELS = {"student": "examples/texthouse/gpu/student.json", "teacher": "bench/h200/teacher-12x768.json"}
VOCAB = 4090


def rows(batch: int, max_tokens: int, seed: int) -> list[SampleRow]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(batch):
        n = int(torch.randint(200, 1501, (1,), generator=g))
        out.append(SampleRow(torch.randint(5, VOCAB, (n,), generator=g).tolist(), max_tokens, temperature=1.0, seed=seed * 1000 + i))
    return out


def turn_rows(batch: int, turn: int, temperature: float) -> list[SampleRow]:
    """Turn `turn` of `batch` texthouse episodes: each prompt 300 + 35·turn tokens (the chat grows
    by an observation and a reply a turn), 6 new tokens a row (bench/h200/decode_memory.py too)."""
    return [SampleRow([5 + (7 * i + j) % (VOCAB - 5) for j in range(300 + 35 * turn)], 6, temperature=temperature,
                      seed=1000 * turn + i) for i in range(batch)]


def agree(a: list[int], b: list[int]) -> int:
    """Length of the common prefix of two token lists (after it the rows' contexts differ)."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def timed(model, rs, decode: str, reps: int, cache: SlotCache | None = None) -> tuple[float, list]:
    dev = torch.device("cuda")
    times, outs = [], None
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            outs = generate_rows(model, rs, pad_id=0, device=dev, decode=decode, cache=cache)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), outs


def measure(reps: int) -> dict:
    results = {}
    for name, cfg in MODELS.items():
        spec = parse_tiny_spec(os.path.join(ROOT, cfg), None)
        model = build_tiny_model(spec, VOCAB, eos_id=3, pad_id=0).to("cuda")
        for batch in (32, 140):
            for max_tokens in (16, 64):
                rs = rows(batch, max_tokens, seed=batch + max_tokens)
                cache = SlotCache(budget=8 << 30)
                timed(model, rs, "eager", 1)  # warm-up of every path (kernels, allocator; the kept graph's capture)
                timed(model, rs, "graph", 1)
                timed(model, rs, "graph", 2, cache)  # a bucket's second call captures the prompt-forward graph
                te, eager = timed(model, rs, "eager", reps)
                tg, graph = timed(model, rs, "graph", reps)
                tk, kept = timed(model, rs, "graph", reps, cache)
                same = sum(e.tokens == g.tokens for e, g in zip(eager, graph))
                lp = [abs(a - b) for e, g in zip(eager, graph) for a, b in zip(e.logprobs[:agree(e.tokens, g.tokens)], g.logprobs)]
                key = f"{name} B={batch} new={max_tokens}"
                gen = sum(len(o.tokens) for o in graph)
                results[key] = {
                    "eager_ms": round(te * 1e3, 2), "graph_ms": round(tg * 1e3, 2),
                    "eager_ms_per_step": round(te * 1e3 / max_tokens, 3), "graph_ms_per_step": round(tg * 1e3 / max_tokens, 3),
                    "graph_over_eager": round(tg / te, 4), "graph_tok_s": round(gen / tg), "eager_tok_s": round(gen / te),
                    "rows_identical": f"{same}/{batch}", "max_abs_logprob_diff_common_prefix": round(max(lp, default=0.0), 5),
                    # the decode kept between calls (decode_cache.py): graphs replayed, the call padded to its bucket
                    "kept_ms": round(tk * 1e3, 2), "kept_over_graph": round(tk / tg, 4),
                    "kept_rows_identical_to_graph": f"{sum(k.tokens == g.tokens for k, g in zip(kept, graph))}/{batch}",
                }
                print(key, json.dumps(results[key]), flush=True)
        results[f"{name} rollout"] = rollout(model, reps)
        print(f"{name} rollout", json.dumps(results[f"{name} rollout"]), flush=True)
        del model
        torch.cuda.empty_cache()
    return results


def rollout(model, reps: int) -> dict:
    """The sample calls of one OPD step's rollouts: 30 turns of 32 episodes, each turn's prompt 35
    tokens longer than the last, 6 new tokens a row, a few episodes ending every turn (rows drop
    from 32 to 8). Seconds for the 30 calls, per-call capture (graph) against kept graphs."""
    turns = [turn_rows(32 - (24 * t) // 29, t, 1.0) for t in range(30)]

    def run(cache: SlotCache | None) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for rs in turns:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                generate_rows(model, rs, pad_id=0, device=torch.device("cuda"), decode="graph", cache=cache)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    cache = SlotCache(budget=8 << 30)
    run(None), run(cache), run(cache)  # warm-up; the kept graphs are captured here, as an OPD run's first steps do
    graph = statistics.median(run(None) for _ in range(reps))
    kept = statistics.median(run(cache) for _ in range(reps))
    return {"calls": len(turns), "graph_s": round(graph, 4), "kept_s": round(kept, 4), "kept_over_graph": round(kept / graph, 4),
            "kept_slots": len(cache), "kept_mib": round(cache.nbytes() / 2**20, 1)}


def profile(out: str) -> None:
    from torch.profiler import ProfilerActivity, profile as torch_profile
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "models": {}}
    for name, cfg in MODELS.items():
        model = build_tiny_model(parse_tiny_spec(os.path.join(ROOT, cfg), None), VOCAB, eos_id=3, pad_id=0).to("cuda")
        rs = rows(32, 16, seed=48)
        # Per call, captured afresh ("graph"), and kept between calls ("kept": decode_cache.py, warmed
        # up by two calls so that both of its graphs exist).
        for variant, cache in (("graph", None), ("kept", SlotCache(budget=8 << 30))):
            key = name if variant == "graph" else f"{name} kept"
            timed(model, rs, "graph", 2, cache)  # warm-up
            wall, _ = timed(model, rs, "graph", 3, cache)
            with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                timed(model, rs, "graph", 3, cache)
            avg = prof.key_averages()
            labels = {e.key: round(e.cpu_time_total / 3e3, 3) for e in avg if e.key.startswith("tcod.")}
            res["models"][key] = {"call_ms_median": round(wall * 1e3, 2), "label_cpu_ms_per_call": labels,
                                  "cuda_ms_per_call": round(sum(getattr(e, "self_device_time_total", 0) for e in avg) / 3e3, 3)}
            with open(f"{out}.{key.replace(' ', '-')}.txt", "w") as f:
                f.write(avg.table(sort_by="cpu_time_total", row_limit=40))
            print(key, json.dumps(res["models"][key]), flush=True)
        del model
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    if a.profile:
        profile(a.out)
        return
    if a.child or a.procs == 1:
        res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "procs": a.procs, "cases": measure(a.reps)}
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
        return
    kids = [subprocess.Popen([sys.executable, __file__, "--child", "--procs", str(a.procs), "--reps", str(a.reps), "--out", f"{a.out}.{i}"])
            for i in range(a.procs)]
    for k in kids:
        k.wait()
    merged = {"procs": a.procs, "runs": []}
    for i in range(a.procs):
        with open(f"{a.out}.{i}") as f:
            merged["runs"].append(json.load(f))
    with open(a.out, "w") as f:
        json.dump(merged, f, indent=1)


if __name__ == "__main__":
    main()
