"""The static-cache decode (static_decode.py) against the model's own eager decode: the same tokens,
finish reasons and log-probabilities (to rounding) for every row, in fp32 on CPU, for both
architectures, with rows that differ in prompt length, temperature (greedy included), top-p, stop
tokens, max_tokens, top-k reporting and raw log-probs; and `resolve_decode`'s choices."""

from __future__ import annotations

import pytest
import torch

from tcod_worker import static_decode
from tcod_worker.sampling import SampleRow, generate_rows, resolve_decode
from tcod_worker.tiny import TinySpec, build_tiny_model

VOCAB = 97


def model(arch: str, seed: int = 3):
    spec = TinySpec(arch, {"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
                           "intermediate_size": 96, "max_position_embeddings": 256, "tie_word_embeddings": arch == "llama"},
                    seed, True, None)
    return build_tiny_model(spec, VOCAB, eos_id=3, pad_id=0).eval()


def rows(seed: int) -> list[SampleRow]:
    g = torch.Generator().manual_seed(seed)
    out = []
    settings = [(1.0, 1.0, False, 0), (0.0, 1.0, False, 3), (0.7, 0.9, True, 0), (1.3, 1.0, True, 2), (0.5, 0.8, False, 0), (1.0, 1.0, False, 0)]
    for i, (temp, top_p, raw, topk) in enumerate(settings):
        n = int(torch.randint(1, 40, (1,), generator=g))
        prompt = torch.randint(5, VOCAB, (n,), generator=g).tolist()
        out.append(SampleRow(prompt, max_tokens=[12, 5, 20, 1, 16, 0][i], temperature=temp, top_p=top_p, seed=1000 + i,
                             stop_ids=(3, 7) if i % 2 else (), raw=raw, topk=topk))
    # A row whose stop set covers half the vocabulary stops within a few tokens, so the decode must
    # leave it stopped while the other rows go on.
    out.append(SampleRow(torch.randint(5, VOCAB, (9,), generator=g).tolist(), max_tokens=20, temperature=1.0, seed=77,
                         stop_ids=tuple(range(5, 50))))
    return out


# On a machine with CUDA the graph decode (captured and replayed) is compared too: state it keeps
# between steps must be updated in place, which only a replayed graph can show.
MODES = [("cpu", "static")] + ([("cuda", "graph"), ("cuda", "static")] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("where,mode", MODES)
def test_static_decode_matches_eager(arch, seed, where, mode):
    device = torch.device(where)
    m = model(arch, seed=seed + 5).to(device)
    rs = rows(seed)
    with torch.no_grad():
        eager = generate_rows(m, rs, pad_id=0, device=device, decode="eager")
        static = generate_rows(m, rs, pad_id=0, device=device, decode=mode)
    assert any(len(e.tokens) > 3 for e in eager)
    assert eager[-1].finish_reason == "stop" and len(eager[-1].tokens) < 20
    for e, s in zip(eager, static):
        assert s.tokens == e.tokens
        assert s.finish_reason == e.finish_reason
        assert s.logprobs == pytest.approx(e.logprobs, abs=1e-5)
        assert [[t for t, _ in pos] for pos in s.top] == [[t for t, _ in pos] for pos in e.top]


def test_static_decode_sees_the_prompt_and_its_own_tokens():
    """A wrong cache column or a mask that hides the prompt would change the continuation: greedy
    decoding of two different prompts must differ, and each must equal the eager decode."""
    m = model("qwen2")
    a = SampleRow(list(range(10, 40)), 24, temperature=0.0)
    b = SampleRow(list(range(40, 12, -1)), 24, temperature=0.0)
    with torch.no_grad():
        outs = {mode: generate_rows(m, [a, b], pad_id=0, device=torch.device("cpu"), decode=mode) for mode in ("eager", "static")}
    assert outs["static"][0].tokens != outs["static"][1].tokens
    assert [o.tokens for o in outs["static"]] == [o.tokens for o in outs["eager"]]


def test_resolve_decode():
    m, cpu = model("llama"), torch.device("cpu")
    assert static_decode.supports(m)
    assert resolve_decode("auto", m, cpu, lockstep=False) == "eager"  # graphs are CUDA-only; static alone gains nothing on CPU
    assert resolve_decode("graph", m, cpu, lockstep=False) == "static"
    assert resolve_decode("static", m, cpu, lockstep=True) == "eager"  # lockstep ranks run the model's own forward

    class Wrapped(torch.nn.Module):  # e.g. a PEFT wrapper: not a plain Llama/Qwen2
        pass
    assert not static_decode.supports(Wrapped())
    odd = model("qwen2")
    del odd.model.layers[1].self_attn.scaling  # a layer laid out otherwise than HF's Llama/Qwen2
    assert not static_decode.supports(odd)
    assert resolve_decode("static", Wrapped(), cpu, lockstep=False) == "eager"
