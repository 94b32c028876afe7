"""Reads a run folder's TensorBoard event files with TensorBoard's own loader; prints JSON
{tag: [[step, value], ...]} for the scalar tags named on the command line (all when none)."""
import json
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

ea = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
ea.Reload()
tags = sys.argv[2:] or ea.Tags()["scalars"]
print(json.dumps({t: [[e.step, e.value] for e in ea.Scalars(t)] for t in tags}))
