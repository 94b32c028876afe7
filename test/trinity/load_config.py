"""Loads each of a JSON list of Trinity-RFT configs (YAML texts) as `trinity run` does
(trinity.common.config.load_config: OmegaConf.load, merged into the structured Config, to_object)
and prints, per config, the values at the requested dotted paths, or the error Trinity raises.

stdin: [{"yaml": "...", "paths": ["model.model_path", ...]}, ...]
stdout: [{"values": {path: value}} | {"error": "..."}, ...]
"""
import dataclasses
import json
import os
import sys
import tempfile

from trinity.common.config import load_config


def at(obj, path):
    for seg in path.split("."):
        if isinstance(obj, list):
            obj = obj[int(seg)]
        elif isinstance(obj, dict):
            obj = obj[seg]
        else:
            obj = getattr(obj, seg)
    return dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) else obj


out = []
for case in json.load(sys.stdin):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False, encoding="utf-8") as f:
        f.write(case["yaml"])
    try:
        config = load_config(f.name)
        out.append({"values": {p: at(config, p) for p in case["paths"]}})
    except Exception as e:  # what Trinity refuses: the message, first line
        out.append({"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
    finally:
        os.unlink(f.name)
print(json.dumps(out, default=str))
