"""Small models trained from scratch: a word-level tokenizer from a vocabulary file and a randomly
initialised Llama/Qwen2 from a few config numbers. Where no weights can be downloaded, this is how
tcod gets a real (if tiny) transformer to distil into.

Config sources:
  - `config:tiny` — the built-in defaults (model_config.TINY_DEFAULTS: 2 layers, hidden 64).
  - a JSON file — the same keys, any of them overridden; `"vocab"` may name the vocabulary file
    (relative to the JSON file). `--vocab` on the command line wins over the JSON key. Every key is
    checked before a model is built (model_config.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch

from .errors import StartupError
from .model_config import TINY_DEFAULTS, is_config_path, read_model_config  # noqa: F401 - TINY_DEFAULTS re-exported

#: Special tokens, in id order. `<|im_end|>` ends an assistant turn (the EOS, as in ChatML models).
SPECIAL_TOKENS = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>", "<eos>"]
PAD, UNK, IM_START, IM_END, EOS = SPECIAL_TOKENS
#: Words the chat template emits; added to the vocabulary when the file lacks them.
ROLE_WORDS = ["system", "user", "assistant"]

#: ChatML-shaped template; with whitespace pre-tokenisation each role is one word token.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_ARCH_KEYS = {"arch", "seed", "lowercase", "vocab", "pad_vocab_to"}


@dataclass
class TinySpec:
    arch: str
    model_kwargs: dict[str, Any]
    seed: int
    lowercase: bool
    vocab_path: str | None
    source: str = field(default="config:tiny")
    pad_vocab_to: int = 1


def parse_tiny_spec(model: str, vocab: str | None) -> TinySpec | None:
    """Returns the spec when `model` names a config (not a Hugging Face directory), else None. The
    config is checked whole first (model_config.py): what reaches the config class is valid."""
    if not is_config_path(model):
        return None
    merged = read_model_config(model)
    base_dir = os.getcwd() if model == "config:tiny" else os.path.dirname(os.path.abspath(model))
    vocab_path = vocab or merged.get("vocab")
    if vocab_path and not os.path.isabs(vocab_path) and not vocab:
        vocab_path = os.path.join(base_dir, vocab_path)
    kwargs = {k: v for k, v in merged.items() if k not in _ARCH_KEYS}
    return TinySpec(merged["arch"].lower(), kwargs, merged["seed"], merged["lowercase"], vocab_path, model,
                    pad_vocab_to=merged["pad_vocab_to"])


def read_vocabulary(path: str) -> list[str]:
    """One word per line; blank lines and duplicates skipped, order kept."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except OSError as e:
        raise StartupError(f"cannot read vocabulary file {path}: {e}") from e
    words: list[str] = []
    seen = set(SPECIAL_TOKENS)
    for w in lines:
        if w and w not in seen:
            if any(c.isspace() for c in w):
                raise StartupError(f"vocabulary file {path}: entry {w!r} contains whitespace; one word per line")
            seen.add(w)
            words.append(w)
    if not words:
        raise StartupError(f"vocabulary file {path} has no words")
    return words


def build_word_tokenizer(words: list[str], lowercase: bool = True):
    """A PreTrainedTokenizerFast over a WordLevel model: special tokens, role words, then `words`.

    Pre-tokenisation splits on whitespace and isolates each punctuation character, so "go to
    desk 1." is five tokens. Unknown words map to `<unk>`.
    """
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    ordered = list(SPECIAL_TOKENS)
    for w in ROLE_WORDS + words:
        w2 = w.lower() if lowercase else w
        if w2 not in ordered:
            ordered.append(w2)
    vocab = {w: i for i, w in enumerate(ordered)}
    tok = Tokenizer(WordLevel(vocab=vocab, unk_token=UNK))
    if lowercase:
        tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(behavior="isolated")]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token=UNK,
        pad_token=PAD,
        eos_token=IM_END,
        additional_special_tokens=[IM_START, EOS],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(spec: TinySpec, vocab_size: int, eos_id: int, pad_id: int):
    """A randomly initialised causal LM; the same seed gives the same weights on every process."""
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    cls = LlamaConfig if spec.arch == "llama" else Qwen2Config
    rows = -(-vocab_size // spec.pad_vocab_to) * spec.pad_vocab_to
    try:
        config = cls(vocab_size=rows, eos_token_id=eos_id, pad_token_id=pad_id, bos_token_id=None, **spec.model_kwargs)
    except TypeError as e:
        raise StartupError(f"model config {spec.source}: {e}") from e
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        from .loading import dtype_kwarg

        try:
            model = AutoModelForCausalLM.from_config(config, **dtype_kwarg(torch.float32))
        except (RuntimeError, MemoryError) as e:  # an allocation the machine refuses
            raise StartupError(f"cannot build the model of {spec.source}: {type(e).__name__}: {e}",
                               hint="The machine has no memory for a model this size: make it smaller (hidden_size, "
                               "num_hidden_layers, intermediate_size).", file=None if spec.source == "config:tiny" else spec.source) from e
    return model
