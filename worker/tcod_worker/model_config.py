"""The model a `--model`/`--teacher` names, checked before anything is loaded (and before torch is
imported, so a bad one fails in a fraction of a second): a JSON config of a model built from scratch
(tiny.py), whose every key is checked here — its type, its range, the sizes that must divide one
another — or a local Hugging Face folder, which must hold a config.json. Every refusal is a
StartupError naming the file, the key and its line, with a hint; none is left for transformers to
raise as a traceback, or for an allocation to exhaust the machine.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from typing import Any

from .errors import StartupError

#: What a config model is built with where its JSON (or `config:tiny`) does not say.
TINY_DEFAULTS: dict[str, Any] = {
    "arch": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": True,
    "seed": 0,
    "lowercase": True,
    # Output rows rounded up to a multiple of this (1: exactly the vocabulary). Hugging Face models pad
    # theirs (Qwen2.5: 151,936 rows for 151,665 tokens); a tiny model can, to test the same shape.
    "pad_vocab_to": 1,
}

ARCHES = ("llama", "qwen2")

#: The whole numbers of a config and their ranges. The bounds keep a typo (a size of 1e9) from being
#: allocated until the machine runs out of memory; MAX_PARAMETERS bounds their product.
INTEGER_KEYS: dict[str, tuple[int, int]] = {
    "hidden_size": (1, 65536),
    "num_hidden_layers": (1, 1024),
    "num_attention_heads": (1, 1024),
    "num_key_value_heads": (1, 1024),
    "intermediate_size": (1, 1 << 20),
    "max_position_embeddings": (1, (1 << 31) - 1),
    "pad_vocab_to": (1, 1 << 16),
    "seed": (0, (1 << 63) - 1),
}
BOOLEAN_KEYS = ("tie_word_embeddings", "lowercase")
#: Numbers Llama's and Qwen2's config classes take alike in every transformers release the worker
#: supports, passed on to them: (low, high, whether low itself is refused). rope_theta is not among
#: them: transformers 5 moved it into `rope_parameters`, so its meaning depends on the installed version.
FLOAT_KEYS: dict[str, tuple[float, float, bool]] = {
    "rms_norm_eps": (0.0, 0.1, True),
    "initializer_range": (0.0, 1.0, True),
    "attention_dropout": (0.0, 0.99, False),
}
#: The activations a config may name (transformers' ACT2FN names the MLP of both architectures uses well).
HIDDEN_ACTS = ("silu", "gelu", "gelu_new", "gelu_pytorch_tanh", "relu")
#: Keys the worker sets itself, from the vocabulary it builds.
SET_BY_WORKER = ("vocab_size", "eos_token_id", "pad_token_id", "bos_token_id")
#: Llama's and Qwen2's own values of FLOAT_KEYS, for hints (a config that leaves them out gets the class's).
DEFAULT_FLOATS = {"rms_norm_eps": 1e-6, "initializer_range": 0.02, "attention_dropout": 0.0}
#: Every key a config may hold.
KNOWN_KEYS = ("arch", "vocab", *INTEGER_KEYS, *BOOLEAN_KEYS, *FLOAT_KEYS, "hidden_act")
#: Parameters of the layers (embeddings aside: the vocabulary is not known yet) a config model may have.
MAX_PARAMETERS = 8_000_000_000

HINT_ROOT = ("A model config is one JSON object of these keys, each optional: arch, hidden_size, num_hidden_layers, "
             "num_attention_heads, num_key_value_heads, intermediate_size, max_position_embeddings, "
             "tie_word_embeddings, seed, lowercase, pad_vocab_to, vocab, and transformers' rms_norm_eps, initializer_range, "
             "attention_dropout and hidden_act (examples/texthouse/gpu/student.json).")


def key_position(text: str, key: str) -> tuple[int, int] | None:
    """Line and column (from 1) of `"key":` in the JSON text, for the error's position."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1


def config_error(path: str, text: str, key: str | None, message: str, hint: str) -> StartupError:
    """A refusal of `path` at `key` (its line where it is written; the file alone where it is defaulted)."""
    pos = key_position(text, key) if key is not None else None
    return StartupError(f"model config {path}: {message}", hint=hint, file=path,
                        line=pos[0] if pos else None, column=pos[1] if pos else None)


def is_config_path(model: str) -> bool:
    """`config:tiny` or a .json path: a model built from a config (else a Hugging Face folder)."""
    return model == "config:tiny" or model.endswith(".json")


def read_model_config(model: str) -> dict[str, Any]:
    """The config `model` names, merged over TINY_DEFAULTS and checked; StartupError at the first fault."""
    if model == "config:tiny":
        return dict(TINY_DEFAULTS)
    if os.path.isdir(model):
        raise StartupError(f"model config {model} is a folder, not a JSON file", file=model,
                           hint="Name the config's .json file, or a Hugging Face model folder by a path that does not end in .json.")
    if not os.path.exists(model):
        raise StartupError(f"model config {model}: no such file", file=model,
                           hint="Give the path of the model's JSON config, relative to the folder the worker (or `tcod run`) runs in, or absolute.")
    try:
        with open(model, encoding="utf-8") as f:
            text = f.read((1 << 20) + 1)
    except (OSError, UnicodeDecodeError) as e:
        raise StartupError(f"cannot read model config {model}: {e}", file=model, hint="Give a JSON file you may read.") from e
    if len(text) > 1 << 20:
        raise StartupError(f"model config {model} is larger than 1 MiB; a config is a few lines of JSON", file=model, hint=HINT_ROOT)
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise StartupError(f"model config {model} is not JSON: {e.msg}", file=model, line=e.lineno, column=e.colno,
                           hint=HINT_ROOT) from e
    except RecursionError as e:
        raise StartupError(f"model config {model} nests too deeply to be a config", file=model, hint=HINT_ROOT) from e
    if not isinstance(raw, dict):
        raise StartupError(f"model config {model} must be a JSON object of config keys, got a {type(raw).__name__}",
                           file=model, line=1, column=1, hint=HINT_ROOT)
    check_config(model, text, raw)
    return {**TINY_DEFAULTS, **raw}


def check_config(path: str, text: str, raw: dict[str, Any]) -> None:
    """Every key of `raw` known and of its type and range, and the sizes consistent (with the defaults of keys it leaves out)."""
    for key, value in raw.items():
        if key in SET_BY_WORKER:
            raise config_error(path, text, key, f"{key} is set by the worker (from the vocabulary it builds), not by the config",
                               f"Remove {key}.")
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            raise config_error(path, text, key, f"unknown key {key!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                               f"Remove it or correct its name. {HINT_ROOT}")
        if key == "arch":
            if not isinstance(value, str) or value.lower() not in ARCHES:
                raise config_error(path, text, key, f"arch must be \"llama\" or \"qwen2\", got {json.dumps(value)}",
                                   "Write \"arch\": \"llama\" or \"arch\": \"qwen2\"; a model of another architecture is a Hugging Face folder.")
        elif key == "vocab":
            if not isinstance(value, str) or not value:
                raise config_error(path, text, key, f"vocab must be the path of a vocabulary file, got {json.dumps(value)}",
                                   "Write \"vocab\": \"words.txt\" (one word per line, relative to the config), or leave it out and pass --vocab.")
        elif key == "hidden_act":
            if value not in HIDDEN_ACTS:
                raise config_error(path, text, key, f"hidden_act must be one of {', '.join(HIDDEN_ACTS)}, got {json.dumps(value)}",
                                   "Write \"hidden_act\": \"silu\" (Llama's and Qwen2's own) or another of those.")
        elif key in FLOAT_KEYS:
            lo, hi, lo_open = FLOAT_KEYS[key]
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not (lo < value if lo_open else lo <= value) or not value <= hi:
                stated = f"{'above' if lo_open else 'from'} {lo:g} {'up ' if lo_open else ''}to {hi:g}"
                raise config_error(path, text, key, f"{key} must be a number {stated}, got {json.dumps(value)}",
                                   f"Write a number {stated}, e.g. \"{key}\": {DEFAULT_FLOATS[key]}.")
        elif key in BOOLEAN_KEYS:
            if not isinstance(value, bool):
                raise config_error(path, text, key, f"{key} must be true or false, got {json.dumps(value)}", f"Write \"{key}\": true or false.")
        else:
            lo, hi = INTEGER_KEYS[key]
            whole = isinstance(value, int) and not isinstance(value, bool)
            if not whole or not lo <= value <= hi:
                raise config_error(path, text, key, f"{key} must be a whole number from {lo:,} to {hi:,}, got {json.dumps(value)}",
                                   f"Write a whole number from {lo:,} to {hi:,}{'' if whole else ' without a decimal point or quotes'}, e.g. \"{key}\": {TINY_DEFAULTS[key]}.")
    c = {**TINY_DEFAULTS, **raw}
    said = lambda k: f"{k} {c[k]}" + ("" if k in raw else " (the default)")  # noqa: E731
    hidden, heads, kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    if hidden % heads:
        fits = [h for h in range(1, min(hidden, 64) + 1) if hidden % h == 0 and (hidden // h) % 2 == 0]
        raise config_error(path, text, "num_attention_heads" if "num_attention_heads" in raw else "hidden_size",
                           f"{said('num_attention_heads')} does not divide {said('hidden_size')}: each head takes hidden_size / num_attention_heads dimensions",
                           f"Choose num_attention_heads dividing hidden_size {hidden}" + (f", e.g. {', '.join(map(str, fits[-4:]))}." if fits else "."))
    if (hidden // heads) % 2:
        raise config_error(path, text, "num_attention_heads" if "num_attention_heads" in raw else "hidden_size",
                           f"each head's size hidden_size / num_attention_heads = {hidden} / {heads} = {hidden // heads} is odd; rotary position embeddings turn dimensions in pairs",
                           "Choose hidden_size and num_attention_heads whose quotient is even, e.g. hidden_size 256 with 4 heads (64 each).")
    if kv > heads or heads % kv:
        raise config_error(path, text, "num_key_value_heads" if "num_key_value_heads" in raw else "num_attention_heads",
                           f"{said('num_key_value_heads')} does not divide {said('num_attention_heads')}: each key/value head serves an equal group of query heads",
                           f"Choose num_key_value_heads dividing num_attention_heads {heads}, e.g. {', '.join(str(k) for k in range(1, heads + 1) if heads % k == 0)}.")
    head = hidden // heads
    per_layer = 2 * hidden * hidden + 2 * hidden * head * kv + 3 * hidden * c["intermediate_size"]
    params = c["num_hidden_layers"] * per_layer
    if params > MAX_PARAMETERS:
        # At the first of the sizes it multiplies that the config writes.
        at = next((k for k in ("num_hidden_layers", "hidden_size", "intermediate_size") if k in raw), None)
        raise config_error(path, text, at,
                           f"the model would have about {params / 1e9:.1f} billion parameters in its layers (hidden_size {hidden}, "
                           f"num_hidden_layers {c['num_hidden_layers']}, intermediate_size {c['intermediate_size']}), more than the "
                           f"{MAX_PARAMETERS / 1e9:.0f} billion a model built from a config may have",
                           "A model built from a config is trained from scratch and small; for a larger one give the path of a Hugging Face model folder.")


def check_model_folder(model: str) -> None:
    """A model that is not a config: a local Hugging Face folder holding config.json (the worker never downloads)."""
    if not os.path.exists(model):
        raise StartupError(f"--model {model}: no such folder", file=model,
                           hint="Give a local Hugging Face model folder (config.json and the weights), `config:tiny`, or a .json config; "
                           "the worker never downloads weights.")
    if not os.path.isdir(model):
        raise StartupError(f"--model {model}: not a folder, `config:tiny` or a .json config file", file=model,
                           hint="Give a local Hugging Face model folder (config.json and the weights), or a model config whose name ends in .json.")
    if not os.path.isfile(os.path.join(model, "config.json")):
        raise StartupError(f"--model {model}: the folder holds no config.json, so it is not a Hugging Face model folder", file=model,
                           hint="Give the folder that holds config.json and the weights (save_pretrained's output, or a run's checkpoint/student).")


def check_model(model: str) -> None:
    """`--model`/`--teacher` checked as a config or a model folder; StartupError at the first fault."""
    if is_config_path(model):
        read_model_config(model)
    else:
        check_model_folder(model)
