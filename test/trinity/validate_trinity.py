#!/usr/bin/env python3
"""Checks exported configs with Trinity-RFT's own code (the `trinity-rft` package from PyPI).

Usage: validate_trinity.py [--target tcod-fork|upstream] [--plugin-dir DIR] CONFIG.yaml[::PLUGIN_DIR]...
(a `::PLUGIN_DIR` suffix gives one config its own plugin directory; --plugin-dir applies to the rest)

For each config it
1. loads it with `trinity.common.config.load_config` (OmegaConf structured merge into Trinity's
   dataclasses): an unknown key or a wrong type fails here;
2. runs each of Trinity's config validators (`config_validator.validators`, in Trinity's order) that
   can run without GPU packages; a validator that needs torch/verl/pandas (absent in CI) is reported
   as skipped with the missing module named, any other exception fails;
3. checks every registry name the config uses (algorithm_type, advantage_fn, sample_strategy,
   policy_loss_fn, workflow types) against Trinity's registries, read from the installed package's
   source (importing the registries pulls in torch), plus the names the plugin registers
   (tcod_runtime/spec.json) and, for --target tcod-fork, the TCOD fork's registered names.

Prints one line `TCOD_RESULT <json>` per config on stdout (Trinity logs there too): {"config", "ok", "trinity_version", "validators": {name:
"ok" | "skipped: …"}, "errors": [...]} and exits 1 if any config failed. Runs in a temporary working
directory because Trinity's validators create checkpoint directories relative to it.
"""
import argparse
import ast
import json
import os
import sys
import tempfile
import traceback

# Names the official TCOD fork registers beyond upstream (docs/REFERENCES.md#tcod-values, #multi-turn-opd).
TCOD_FORK_WORKFLOWS = {
    f"{m}_{env}_workflow" for m in ("OPD", "TCOD_f2b", "TCOD_b2f") for env in ("alfworld", "webshop", "scienceworld")
}
TCOD_FORK_ADVANTAGES = {"multi_turn_opd"}
GPU_MODULES = ("torch", "verl", "vllm", "pandas", "flash_attn", "accelerate", "tinker", "wandb")


# ci-install.sh may append worker/.venv's site-packages (torch) to this venv's path for the class
# tests; the config check runs without them, as on a CPU-only machine with Trinity alone, so that
# validators needing the GPU stack are skipped (naming the module) rather than half-run.
sys.path[:] = [p for p in sys.path if "worker/.venv" not in p.replace(os.sep, "/")]


def registry_names(module_file: str) -> set:
    """Keys of the `default_mapping={...}` literal of a Trinity registry module."""
    with open(module_file, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "default_mapping" and isinstance(node.value, ast.Dict):
            names |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return names


def trinity_registries():
    import trinity

    root = os.path.dirname(trinity.__file__)
    p = lambda *xs: os.path.join(root, *xs)  # noqa: E731
    return {
        "algorithm_type": registry_names(p("algorithm", "__init__.py")),
        "advantage_fn": registry_names(p("algorithm", "advantage_fn", "__init__.py")),
        "sample_strategy": registry_names(p("algorithm", "sample_strategy", "__init__.py")),
        "policy_loss_fn": registry_names(p("algorithm", "policy_loss_fn", "__init__.py")),
        "workflow": registry_names(p("common", "workflows", "__init__.py")),
        "operator": registry_names(p("buffer", "operators", "__init__.py")),
    }


def plugin_names(plugin_dir):
    if not plugin_dir:
        return {"workflow": set(), "advantage_fn": set(), "operator": set()}
    with open(os.path.join(plugin_dir, "tcod_runtime", "spec.json"), encoding="utf-8") as f:
        spec = json.load(f)
    return {
        "workflow": {spec["workflow"]["name"]} if spec.get("workflow") else set(),
        "advantage_fn": {spec["advantage"]["name"]} if spec.get("advantage") else set(),
        "operator": {spec["advantage"]["operator"]} if spec.get("advantage") else set(),
    }


def check(path: str, target: str, plugin_dir) -> dict:
    from trinity.common.config import load_config

    result = {"config": path, "ok": True, "validators": {}, "errors": []}
    try:
        import importlib.metadata as md

        result["trinity_version"] = md.version("trinity-rft")
    except Exception:
        result["trinity_version"] = "unknown"
    try:
        config = load_config(path)
    except Exception as e:
        result["ok"] = False
        result["errors"].append(f"load_config: {e}")
        return result

    from trinity.common.config_validator import validators

    for v in validators:
        name = type(v).__name__
        try:
            v.validate(config)
            result["validators"][name] = "ok"
        except ModuleNotFoundError as e:
            if (e.name or "").split(".")[0] in GPU_MODULES:
                result["validators"][name] = f"skipped: needs {e.name}"
            else:
                result["ok"] = False
                result["validators"][name] = f"failed: {e}"
                result["errors"].append(f"{name}: {e}")
        except Exception as e:  # a real validation failure
            result["ok"] = False
            result["validators"][name] = f"failed: {type(e).__name__}: {e}"
            result["errors"].append(f"{name}: {type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}")

    regs = trinity_registries()
    plug = plugin_names(plugin_dir)
    algo = config.algorithm
    known_adv = regs["advantage_fn"] | plug["advantage_fn"] | (TCOD_FORK_ADVANTAGES if target == "tcod-fork" else set())
    known_wf = regs["workflow"] | plug["workflow"] | (TCOD_FORK_WORKFLOWS if target == "tcod-fork" else set())
    checks = [
        ("algorithm.algorithm_type", algo.algorithm_type, regs["algorithm_type"]),
        ("algorithm.advantage_fn", algo.advantage_fn, known_adv),
        ("algorithm.sample_strategy", algo.sample_strategy, regs["sample_strategy"]),
        ("algorithm.policy_loss_fn", algo.policy_loss_fn, regs["policy_loss_fn"]),
        ("buffer.explorer_input.default_workflow_type", config.buffer.explorer_input.default_workflow_type, known_wf),
    ]
    for i, op in enumerate(config.data_processor.experience_pipeline.operators or []):
        checks.append((f"data_processor.experience_pipeline.operators[{i}].name", op.name, regs["operator"] | plug["operator"]))
    for where, value, known in checks:
        if value is not None and value not in known:
            result["ok"] = False
            result["errors"].append(f"{where}: '{value}' is not registered in Trinity-RFT ({target}); known: {sorted(known)}")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", choices=["tcod-fork", "upstream"], default="upstream")
    ap.add_argument("--plugin-dir")
    ap.add_argument("configs", nargs="+")
    args = ap.parse_args()
    try:
        import trinity  # noqa: F401
    except ImportError:
        print("TCOD_RESULT " + json.dumps({"ok": False, "errors": ["trinity-rft is not installed; run test/trinity/ci-install.sh"]}))
        return 3
    default_plugin = os.path.abspath(args.plugin_dir) if args.plugin_dir else None
    jobs = []
    for c in args.configs:
        path, _, plugin = c.partition("::")
        jobs.append((os.path.abspath(path), os.path.abspath(plugin) if plugin else default_plugin))
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for c, plugin_dir in jobs:
            r = check(c, args.target, plugin_dir)
            failed |= not r["ok"]
            print("TCOD_RESULT " + json.dumps(r), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
