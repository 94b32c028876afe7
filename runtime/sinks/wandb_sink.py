"""Weights & Biases sink for `tcod run --wandb PROJECT`.

Reads JSON lines on stdin and logs them with the wandb package (https://docs.wandb.ai/ref/python/):
  {"init": {"project": ..., "name": ..., "id": ..., "dir": ..., "config": {...}}}   first line
  {"step": N, "scalars": {"train/success_rate": 0.5, ...}}                           one per row
  {"finish": true}                                                                   last line
Answers "loaded" on stdout once wandb is imported (so a run without it fails before it starts) and
"ready" once wandb.init has returned. tcod sends the init line only once the engine has taken the run
folder: a refused --resume closes stdin without one, and no W&B run is created.
The mode follows wandb's own WANDB_MODE (online, offline, disabled). A resumed tcod run passes the
same id with resume="allow", so W&B continues the run; steps a restart repeats are skipped (W&B
refuses steps below the last one); rows of one step (train, then eval) share it.
"""
import json
import sys


def main() -> int:
    try:
        import wandb
    except ImportError:
        print("error: the wandb package is not installed in this Python (pip install wandb)", flush=True)
        return 3
    print("loaded", flush=True)
    run = None
    last_step = -1
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if "init" in msg:
            a = msg["init"]
            run = wandb.init(project=a["project"], name=a.get("name"), id=a.get("id"), dir=a.get("dir"),
                             config=a.get("config") or {}, resume="allow", reinit=True)
            last_step = int(run.step) - 1 if run.step else -1
            print("ready", flush=True)
        elif "scalars" in msg and run is not None:
            step = int(msg["step"])
            if step < last_step:
                continue
            run.log(msg["scalars"], step=step)
            last_step = max(last_step, step)
        elif msg.get("finish") and run is not None:
            run.finish()
            run = None
    if run is not None:
        run.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
