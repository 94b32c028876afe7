"""Loading the student and the teacher: a local Hugging Face directory or a tiny config.

Precision (why): a trainable full model keeps fp32 master weights and computes under bf16 autocast
on GPU (AdamW on bf16 weights loses small updates); a LoRA student keeps its frozen base in the
compute dtype and its adapters in fp32 (peft's default); the frozen teacher is stored in the
compute dtype.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

import torch

from .errors import StartupError
from .model_config import check_model_folder
from .tiny import build_tiny_model, build_word_tokenizer, parse_tiny_spec, read_vocabulary

# No hub downloads at run time: a model is a local directory or a config.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp16": torch.float16}


def dtype_kwarg(dtype: torch.dtype) -> dict[str, torch.dtype]:
    """transformers ≥ 4.56 calls the loading dtype `dtype`; older releases `torch_dtype`."""
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


# Beside a checkpoint of a model built from a config: the word list and case folding of its word-level
# tokenizer, from which a later load rebuilds the identical tokenizer (save_pretrained's tokenizer
# files do not round-trip on every transformers release: 5.17 loads one that encodes every word to
# nothing).
WORD_TOKENIZER_FILE = "tcod_word_tokenizer.json"


@dataclass
class Loaded:
    model: Any
    tokenizer: Any
    source: str
    # The word list of a word-level tokenizer built here (None: the directory's own tokenizer).
    words: list[str] | None = None
    lowercase: bool = True


def load_tokenizer_and_model(spec: str, vocab: str | None, param_dtype: torch.dtype) -> Loaded:
    tiny = parse_tiny_spec(spec, vocab)
    if tiny is not None:
        if not tiny.vocab_path:
            raise StartupError(
                f"--model {spec} builds a model from scratch and needs a vocabulary: pass --vocab words.txt "
                "(one word per line) or put \"vocab\": \"words.txt\" in the JSON config"
            )
        words = read_vocabulary(tiny.vocab_path)
        tokenizer = build_word_tokenizer(words, tiny.lowercase)
        model = build_tiny_model(tiny, len(tokenizer), tokenizer.eos_token_id, tokenizer.pad_token_id)
        return Loaded(model.to(param_dtype), tokenizer, spec, words, tiny.lowercase)
    check_model_folder(spec)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    words, lowercase = read_word_tokenizer(spec)
    try:
        tokenizer = build_word_tokenizer(words, lowercase) if words is not None else AutoTokenizer.from_pretrained(spec)
        model = AutoModelForCausalLM.from_pretrained(spec, **dtype_kwarg(param_dtype))
    except Exception as e:  # noqa: BLE001 - report any loader failure with the path
        raise StartupError(f"cannot load model from {spec}: {type(e).__name__}: {e}", file=spec,
                           hint="The folder's config.json, tokenizer or weights do not load with this transformers: "
                           "give a folder save_pretrained wrote (or a run's checkpoint/student).") from e
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return Loaded(model, tokenizer, spec, words, lowercase)


def read_word_tokenizer(directory: str) -> tuple[list[str] | None, bool]:
    """The word list and case folding saved beside a checkpoint (WORD_TOKENIZER_FILE), or (None, True)."""
    path = os.path.join(directory, WORD_TOKENIZER_FILE)
    if not os.path.isfile(path):
        return None, True
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        words, lowercase = data["words"], data["lowercase"]
        if not (isinstance(words, list) and all(isinstance(w, str) for w in words) and isinstance(lowercase, bool)):
            raise ValueError("expected {words: [string…], lowercase: bool}")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise StartupError(f"cannot read {path}: {e}") from e
    return words, lowercase


def write_word_tokenizer(directory: str, words: list[str] | None, lowercase: bool) -> None:
    """Saves the word list of a word-level tokenizer beside a checkpoint (nothing for other tokenizers)."""
    if words is None:
        return
    with open(os.path.join(directory, WORD_TOKENIZER_FILE), "w", encoding="utf-8") as f:
        json.dump({"words": words, "lowercase": lowercase}, f)


def wrap_lora(model: Any, rank: int, alpha: float | None, seed: int) -> Any:
    """Adds LoRA adapters to every linear layer except the output head (peft's "all-linear")."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(
        r=rank,
        lora_alpha=alpha if alpha is not None else 2 * rank,
        target_modules="all-linear",
        lora_dropout=0.0,
        bias="none",
        task_type="CAUSAL_LM",
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return get_peft_model(model, cfg)


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """sha256 over the vocabulary (as JSON [[token, id], …] sorted by id, no spaces) and the chat
    template, joined by a newline. Same vocab + template ⇒ same fingerprint, across processes."""
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda kv: (kv[1], kv[0]))
    body = json.dumps(vocab, ensure_ascii=False, separators=(",", ":"))
    template = tokenizer.chat_template if isinstance(tokenizer.chat_template, str) else json.dumps(tokenizer.chat_template)
    return hashlib.sha256((body + "\n" + (template or "")).encode("utf-8")).hexdigest()


def stop_token_ids(tokenizer: Any, model: Any) -> list[int]:
    """Default stop ids: the tokenizer's EOS plus the model's generation EOS ids."""
    ids: list[int] = []
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
    cfg_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if cfg_eos is None:
        cfg_eos = getattr(model.config, "eos_token_id", None)
    for e in cfg_eos if isinstance(cfg_eos, list) else [cfg_eos]:
        if e is not None and int(e) not in ids:
            ids.append(int(e))
    return ids
