"""Hostile model configs and model folders (model_config.py): each refused before anything is loaded,
with the file, the key and its line, and a hint; never a traceback, never a model too large to build."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tcod_worker.errors import StartupError
from tcod_worker.model_config import TINY_DEFAULTS, check_model, read_model_config

from .conftest import WORKER_DIR


def _refused(path, text: str) -> StartupError:
    path.write_text(text)
    with pytest.raises(StartupError) as e:
        read_model_config(str(path))
    err = e.value
    assert err.file == str(path) and err.hint, err.as_json()
    return err


@pytest.mark.parametrize("config,key,fragment,hint", [
    ({"arch": "gpt2"}, "arch", 'arch must be "llama" or "qwen2", got "gpt2"', '"arch": "llama"'),
    ({"arch": 3}, "arch", "got 3", '"arch": "qwen2"'),
    ({"hidden_size": 250}, "hidden_size", "num_attention_heads 4 (the default) does not divide hidden_size 250", "dividing hidden_size 250"),
    ({"hidden_size": 256, "num_attention_heads": 3}, "num_attention_heads", "num_attention_heads 3 does not divide hidden_size 256", "e.g. 8, 16, 32, 64"),
    ({"hidden_size": 12}, "hidden_size", "12 / 4 = 3 is odd", "quotient is even"),
    ({"num_key_value_heads": 3}, "num_key_value_heads", "num_key_value_heads 3 does not divide num_attention_heads 4 (the default)", "e.g. 1, 2, 4"),
    ({"num_attention_heads": 2, "num_key_value_heads": 4, "hidden_size": 64}, "num_key_value_heads", "num_key_value_heads 4 does not divide num_attention_heads 2", "e.g. 1, 2"),
    ({"hidden_size": 0}, "hidden_size", "hidden_size must be a whole number from 1 to 65,536, got 0", "from 1 to 65,536"),
    ({"num_hidden_layers": -2}, "num_hidden_layers", "got -2", "from 1 to 1,024"),
    ({"intermediate_size": 10 ** 12}, "intermediate_size", "got 1000000000000", "e.g. \"intermediate_size\": 128"),
    ({"hidden_size": 256.0}, "hidden_size", "got 256.0", "without a decimal point"),
    ({"hidden_size": 1e9}, "hidden_size", "got 1000000000.0", "without a decimal point"),
    ({"hidden_size": "256"}, "hidden_size", 'got "256"', "without a decimal point or quotes"),
    ({"num_hidden_layers": True}, "num_hidden_layers", "got true", "whole number"),
    ({"max_position_embeddings": 2 ** 40}, "max_position_embeddings", "got 1099511627776", "whole number"),
    ({"seed": -1}, "seed", "seed must be a whole number from 0", "whole number"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings", 'tie_word_embeddings must be true or false, got "yes"', "true or false"),
    ({"vocab": 7}, "vocab", "vocab must be the path of a vocabulary file, got 7", "words.txt"),
    ({"hiden_size": 256}, "hiden_size", "unknown key 'hiden_size'; did you mean 'hidden_size'?", "Remove it or correct its name"),
    ({"rope_theta": 10000}, "rope_theta", "unknown key 'rope_theta'", "hidden_size, num_hidden_layers"),
    ({"rms_norm_eps": 0}, "rms_norm_eps", "rms_norm_eps must be a number above 0 up to 0.1, got 0", '"rms_norm_eps": 1e-06'),
    ({"attention_dropout": 1}, "attention_dropout", "attention_dropout must be a number from 0 to 0.99, got 1", "Write a number"),
    ({"initializer_range": "0.02"}, "initializer_range", 'got "0.02"', "Write a number"),
    ({"hidden_act": "swiglu"}, "hidden_act", 'hidden_act must be one of silu, gelu', '"silu"'),
    ({"vocab_size": 100}, "vocab_size", "vocab_size is set by the worker", "Remove vocab_size"),
    ({"hidden_size": 8192, "num_hidden_layers": 200, "intermediate_size": 32768}, "num_hidden_layers",
     "about 201.3 billion parameters", "Hugging Face model folder"),
])
def test_a_hostile_config_is_refused_at_its_key(tmp_path, config, key, fragment, hint):
    text = "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in config.items()) + "\n}\n"
    err = _refused(tmp_path / "cfg.json", text)
    assert fragment in err.message and hint in err.hint, err.as_json()
    assert err.message.startswith(f"model config {tmp_path / 'cfg.json'}: ")
    # At the key's line where the config writes it (a defaulted key's fault is at the key that made it one).
    line = 2 + list(config).index(key) if key in config else None
    assert (err.line, err.column) == ((line, 3) if line else (None, None)), err.as_json()


def test_not_json_not_an_object_missing_and_a_folder(tmp_path):
    err = _refused(tmp_path / "cfg.json", '{"arch": "qwen2",\n  "hidden_size": 256,\n')
    assert "is not JSON" in err.message and (err.line, err.column) == (3, 1) and "one JSON object" in err.hint
    err = _refused(tmp_path / "cfg.json", "[1, 2]")
    assert "must be a JSON object of config keys, got a list" in err.message and err.line == 1
    err = _refused(tmp_path / "cfg.json", '{"hidden_size": NaN}')
    assert "got NaN" in err.message
    with pytest.raises(StartupError) as e:
        read_model_config(str(tmp_path / "none.json"))
    assert e.value.message.endswith("none.json: no such file") and "relative to the folder" in e.value.hint
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(StartupError) as e:
        read_model_config(str(tmp_path / "dir.json"))
    assert "is a folder, not a JSON file" in e.value.message and e.value.hint


def test_missing_keys_take_the_defaults_and_a_good_config_passes(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"arch": "Qwen2", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2}))
    assert read_model_config(str(path)) == {**TINY_DEFAULTS, "arch": "Qwen2", "hidden_size": 256, "num_attention_heads": 4,
                                            "num_key_value_heads": 2}
    assert read_model_config("config:tiny") == TINY_DEFAULTS
    for shipped in ("student.json", "teacher.json"):
        read_model_config(os.path.join(WORKER_DIR.parent, "examples", "texthouse", "gpu", shipped))


def test_a_folder_that_is_not_a_hugging_face_model(tmp_path):
    for path, fragment in [(tmp_path / "nothing", "no such folder"), (tmp_path, "holds no config.json")]:
        with pytest.raises(StartupError) as e:
            check_model(str(path))
        assert fragment in e.value.message and e.value.file == str(path) and e.value.hint
    (tmp_path / "weights.bin").write_text("x")
    with pytest.raises(StartupError) as e:
        check_model(str(tmp_path / "weights.bin"))
    assert "not a folder" in e.value.message


def _start(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(WORKER_DIR), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "tcod_worker", "--port", "0", "--device", "cpu", *args],
                          capture_output=True, text=True, env=env, timeout=120, cwd=str(WORKER_DIR))


def test_the_worker_refuses_before_loading_anything_in_text_or_json(tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text('{\n  "hidden_size": 256,\n  "num_attention_heads": 3\n}\n')
    r = _start("--model", str(cfg))
    assert r.returncode == 2 and "listening" not in r.stdout and "Traceback" not in r.stderr
    assert r.stderr == (f"tcod-worker: model config {cfg}: num_attention_heads 3 does not divide hidden_size 256: each head takes "
                        "hidden_size / num_attention_heads dimensions (line 3, column 3)\n"
                        "  hint: Choose num_attention_heads dividing hidden_size 256, e.g. 8, 16, 32, 64.\n")
    # The teacher too; and for the run that started the worker, one JSON line.
    r = _start("--model", "config:tiny", "--teacher", str(cfg), "--error-format", "json")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert json.loads(r.stderr) == {"tcod_worker_error": {
        "message": f"model config {cfg}: num_attention_heads 3 does not divide hidden_size 256: each head takes hidden_size / num_attention_heads dimensions",
        "hint": "Choose num_attention_heads dividing hidden_size 256, e.g. 8, 16, 32, 64.", "file": str(cfg), "line": 3, "column": 3}}
    r = _start("--model", str(tmp_path), "--error-format", "json")
    assert r.returncode == 2 and json.loads(r.stderr)["tcod_worker_error"]["file"] == str(tmp_path)


def test_transformers_keys_a_config_may_set_reach_the_model(tmp_path):
    from tcod_worker.tiny import build_tiny_model, parse_tiny_spec
    path = tmp_path / "acts.json"
    path.write_text(json.dumps({"rms_norm_eps": 1e-5, "initializer_range": 0.01, "attention_dropout": 0.1, "hidden_act": "gelu"}))
    spec = parse_tiny_spec(str(path), None)
    model = build_tiny_model(spec, vocab_size=32, eos_id=3, pad_id=0)
    c = model.config
    assert (c.rms_norm_eps, c.initializer_range, c.attention_dropout, c.hidden_act) == (1e-5, 0.01, 0.1, "gelu")
