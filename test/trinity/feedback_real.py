#!/usr/bin/env python3
"""Runs a generated plugin's feedback pacing for real (for tcod's tests): the plugin's workflow class
through Trinity-RFT's own Task and Workflow base class, Experience type, and the plugin's
FeedbackController as a named Ray actor on a local CPU Ray instance, step after step, on a metrics
trace. Needs Trinity-RFT (test/trinity/ci-install.sh: it brings Ray) and torch; no model, no env
package: the student and teacher wrappers and the env are scripted so that each step's one training
episode reports exactly the trace's KL.

  feedback_real.py < request.json
      request: {"plugin": PLUGIN_DIR, "state": STATE_FILE, "steps": int, "kl": [float per step 1..steps],
                "kill_after": int (0 = never)}
      For t = 1 … steps: builds trinity.common.workflows.workflow.Task for the plugin's registered
      workflow with batch_id t, `task.to_workflow(student, [teacher])` and awaits `run_async()`.
      The env (patched into the plugin's ENV_FACTORIES) ends the episode at its first action; the
      student's one response token has logprob −1 and the teacher's −1 − kl[t], so the turn's k1 KL
      sum, and the step's token-weighted KL mean, is kl[t]. After step `kill_after` the actor is
      killed (ray.kill), so the next step's workflow starts a new one, which must resume from
      $TCOD_FEEDBACK_STATE (= STATE_FILE).
      Prints one line "TCOD_RESULT " + {"caps": [the cap of step t's episode, from its Experience metrics `tcod_cap`],
              "turns": [experiences per step], "workflow_class": ..., "experience_type": ...,
              "actors_started": int, "state": the state file's JSON at the end}.
"""
import asyncio
import importlib.util
import json
import os
import sys
import time

import torch


def main():
    req = json.load(sys.stdin)
    # The actor's process inherits the environment of the Ray instance this driver starts.
    os.environ["TCOD_FEEDBACK_STATE"] = req["state"]
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        out = run(req, ray)
    finally:
        ray.shutdown()
    # One marked line: Ray may write its own lines to stdout.
    print("TCOD_RESULT " + json.dumps(out), flush=True)


def run(req, ray):
    from trinity.common.config import FormatConfig, GenerationConfig
    from trinity.common.experience import Experience
    from trinity.common.workflows import WORKFLOWS
    from trinity.common.workflows.workflow import Task, Workflow

    plugin_dir = req["plugin"]
    sys.path.insert(0, plugin_dir)
    spec = importlib.util.spec_from_file_location("tcod_workflow_feedback", os.path.join(plugin_dir, "tcod_workflow.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    wf = module.WF
    cls = WORKFLOWS.get(wf["name"])
    assert issubclass(cls, Workflow)

    class ScriptedEnv:
        """Ends the episode at the first action: one student turn per training episode."""

        def __init__(self, _task):
            pass

        def reset(self):
            return "You are in a room.", "reach the goal", ["finish"], None

        def step(self, _action):
            return "Done.", 1.0, True, []

        def expert_actions(self):
            return []

        def close(self):
            pass

    module.ENV_FACTORIES[wf["env"]] = ScriptedEnv

    class Student:
        """Trinity's ModelWrapper as the workflow uses it: one response token, logprob −1."""

        def get_openai_async_client(self):
            return None

        async def chat_async(self, messages, n=1, temperature=1.0, logprobs=None, **_):
            assert n == 1 and logprobs is not None
            return [Experience(tokens=torch.tensor([5, 6, 7, 8]), prompt_length=3,
                               logprobs=torch.tensor([-1.0]), response_text="<action>finish</action>")]

    class Teacher:
        """Trinity's auxiliary ModelWrapper: logprobs of tokens[1:], the response token's −1 − kl."""

        def __init__(self):
            self.kl = 0.0

        def get_openai_async_client(self):
            return None

        async def logprobs_async(self, tokens, temperature=1.0):
            lp = torch.full((len(tokens) - 1,), -0.5)
            lp[-1] = -1.0 - self.kl
            return lp

    teacher = Teacher()
    caps, turns, classes, types = [], [], set(), set()
    actor_name = f"tcod_feedback_{wf['name']}"
    started = 0
    for t in range(1, req["steps"] + 1):
        try:
            ray.get_actor(actor_name)
        except ValueError:
            started += 1  # this step's workflow creates the actor (reading the saved state, if any)
        teacher.kl = float(req["kl"][t - 1])
        task = Task(workflow=cls, format_args=FormatConfig(prompt_key="task_desc"),
                    rollout_args=GenerationConfig(temperature=1.0, logprobs=0),
                    workflow_args={"max_env_steps": int(wf["pacing"]["maxTurns"])}, is_eval=False,
                    raw_task={"task_desc": "scripted"}, batch_id=t)
        workflow = task.to_workflow(model=Student(), auxiliary_models=[teacher])
        classes.add(type(workflow).__mro__[1].__module__ + "." + type(workflow).__mro__[1].__name__)
        exps = asyncio.run(workflow.run_async())
        types.update(f"{type(e).__module__}.{type(e).__name__}" for e in exps)
        caps.append(int(exps[0].metrics["tcod_cap"]))
        turns.append(len(exps))
        if t == req.get("kill_after"):
            ray.kill(ray.get_actor(actor_name))
            # ray.kill returns before the actor is gone, and its name stays taken until it is: wait, so
            # that the next step's workflow starts a new actor rather than finding the dying one.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    ray.get_actor(actor_name)
                except ValueError:
                    break
                time.sleep(0.05)
    with open(req["state"], encoding="utf-8") as f:
        state = json.load(f)
    return {"caps": caps, "turns": turns, "workflow_class": sorted(classes), "experience_type": sorted(types),
            "actors_started": started, "state": state}


if __name__ == "__main__":
    main()
