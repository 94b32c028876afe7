"""ScienceWorld bridge: one ``ScienceWorldEnv`` (one JVM) per process, driven over JSON lines.

Task ids are ``"<task name>:<variation>"`` (``"boil:3"``); a task may also be named by its id
(``"1-1:3"``). Splits come from the package's own getters (``get_variations_train/dev/test``).

Reward (TCOD's ScienceWorld workflow: episode reward = best_score / 100): each step's reward is the
rise of the best non-negative score so far, divided by 100, so the rewards of an episode sum to
best_score / 100. ``score`` is the package's raw 0..100 score (negative = task failed, which also ends
the episode); ``won`` is score >= 100.

Prompt (TCOD's ScienceWorld workflows, kokolerk/TCOD trinity/common/workflows/envs/TCOD/scienceworld/
utils.py): observations and the task description are stripped of surrounding whitespace
(``format_observation``), and every reset and step also answers the compact action list the official
prompt shows, ``actionTemplates`` (``get_possible_actions()`` without ``help``) and ``objects``
(``get_possible_objects()``), beside ``admissible``, every valid action.

Oracle (``optimal``): the next gold action while every action of the episode so far equals the gold
path's prefix; ``[]`` once the student has left the gold path (or the gold path is exhausted), so the
embedded oracle teacher spreads its mass evenly over the admissible actions.
"""
from __future__ import annotations

import os
import sys
from typing import Dict, List, Optional, Tuple

from .jsonl import ConfigError, EnvFault, serve

SPLITS = ("train", "dev", "test")
INVALID_FEEDBACK = "No known action matches that input."


def parse_task_id(task_id: str) -> Tuple[str, int]:
    name, sep, var = str(task_id).rpartition(":")
    if not sep or not name or not var.isdigit():
        raise ConfigError(f"scienceworld task id {task_id!r} is not of the form '<task name>:<variation>'",
                          "take ids from tasks(split), e.g. 'boil:0'")
    return name, int(var)


def compact_actions(env) -> dict:
    """The official prompt's compact action list: the action templates (without ``help``, which the
    TCOD workflows leave out) and the objects in view, in the package's order."""
    return {"actionTemplates": [a for a in env.get_possible_actions() if a != "help"],
            "objects": list(env.get_possible_objects())}


class SciWorldSession:
    def __init__(self, step_limit: int = 100, simplification: str = ""):
        from scienceworld import ScienceWorldEnv  # imported here so a missing package is a clean fatal

        self.env = ScienceWorldEnv("", envStepLimit=step_limit)
        self.simplification = simplification
        self.names: List[str] = list(self.env.get_task_names())
        tasks = self.env.tasks
        self.ids: Dict[str, str] = dict(tasks.items()) if isinstance(tasks, dict) else {}
        self.splits: Dict[str, Dict[str, List[int]]] = {}
        self.gold: Dict[str, List[str]] = {}
        self.task: Optional[str] = None
        self.history: List[str] = []
        self.best = 0
        self.done = True

    # -- tasks ---------------------------------------------------------------------------------
    def canonical(self, name: str) -> str:
        if name in self.names:
            return name
        if name in self.ids:
            return self.ids[name]
        raise ConfigError(f"scienceworld has no task {name!r}",
                          "valid task names: " + ", ".join(self.names) + "; ids: " + ", ".join(sorted(self.ids)))

    def split_of(self, name: str) -> Dict[str, List[int]]:
        s = self.splits.get(name)
        if s is None:
            self.env.load(name, 0, self.simplification, generateGoldPath=False)
            s = {"train": list(self.env.get_variations_train()), "dev": list(self.env.get_variations_dev()),
                 "test": list(self.env.get_variations_test())}
            self.splits[name] = s
            self.task = None  # the loaded task changed under the episode
        return s

    def check_split(self, split: str) -> None:
        if split not in SPLITS:
            raise ConfigError(f"scienceworld has no split {split!r}", "use one of: " + ", ".join(SPLITS))

    def tasks(self, args: dict) -> List[str]:
        split = args.get("split", "train")
        self.check_split(split)
        names = [self.canonical(n) for n in (args.get("tasks") or [])] or self.names
        return [f"{n}:{v}" for n in names for v in self.split_of(n)[split]]

    def resolve(self, task_id: str, split: Optional[str]) -> Tuple[str, int]:
        name, var = parse_task_id(task_id)
        name = self.canonical(name)
        sets = self.split_of(name)
        every = sorted(v for vs in sets.values() for v in vs)
        if var not in every:
            # The package loads an unknown variation without complaint, as task "unknown": an episode of
            # nothing. A task file's var_num (no split check) must be checked here.
            raise ConfigError(f"scienceworld task {task_id!r}: {name} has no variation {var} (it has {len(every)}: "
                              f"{every[0]}..{every[-1]})" if every else f"scienceworld task {task_id!r}: {name} has no variations",
                              "take var_num from the package's variations (get_sciworld_data.py writes them), or ids from tasks(split)")
        if split is not None:
            self.check_split(split)
            if var not in sets[split]:
                owner = next((s for s in SPLITS if var in sets[s]), None)
                where = f"it belongs to {owner}" if owner else f"{name} has {sum(len(v) for v in sets.values())} variations"
                raise ConfigError(f"scienceworld task {task_id!r} is not in split {split!r} ({where})",
                                  f"{split} variations of {name}: {sets[split][:3]}…{sets[split][-1:]}")
        return name, var

    # -- episode -------------------------------------------------------------------------------
    def _load(self, name: str, var: int, gold: bool) -> None:
        self.env.load(name, var, self.simplification, generateGoldPath=gold)
        if gold:
            self.gold[f"{name}:{var}"] = list(self.env.get_gold_action_sequence())

    def reset(self, args: dict) -> dict:
        name, var = self.resolve(args["task"], args.get("split"))
        key = f"{name}:{var}"
        self._load(name, var, bool(args.get("gold")) and key not in self.gold)
        obs, info = self.env.reset()
        self.task, self.history, self.best, self.done = key, [], 0, False
        return {"task": self.env.get_task_description().strip(), "text": obs.strip(), "admissible": list(info["valid"]),
                "taskName": name, "variation": var, **compact_actions(self.env)}

    def step(self, args: dict) -> dict:
        if self.task is None:
            raise EnvFault("scienceworld: step() before reset(); reset a task first", retryable=False)
        if self.done:
            raise EnvFault(f"scienceworld {self.task}: step() after the episode ended; reset a task first", retryable=False)
        action = str(args["action"])
        obs, _reward, done, info = self.env.step(action)
        self.history.append(action)
        score = int(info["score"])
        gain = max(0, score - self.best)
        self.best += gain
        self.done = bool(done)
        return {"observation": obs.strip(), "reward": gain / 100.0, "done": self.done, "won": score >= 100,
                "score": score, "admissible": list(info["valid"]), "invalid": obs.strip() == INVALID_FEEDBACK,
                "moves": int(info["moves"]), **compact_actions(self.env)}

    def gold_path(self, args: dict) -> List[str]:
        name, var = self.resolve(args["task"], args.get("split"))
        key = f"{name}:{var}"
        if key not in self.gold:
            current = (self.task, list(self.history), self.done)
            self._load(name, var, True)
            self.task = None
            if current[0] is not None and not current[2]:
                self._restore(*current[:2])
        return self.gold[key]

    def _restore(self, task: str, history: List[str]) -> None:
        """Reloads the episode's task and replays its actions (the env is deterministic)."""
        name, var = parse_task_id(task)
        self._load(name, var, False)
        self.env.reset()
        self.task, self.history, self.best, self.done = task, [], 0, False
        for a in history:
            self.step({"action": a})

    def optimal(self, _args: dict) -> List[str]:
        if self.task is None:
            raise EnvFault("scienceworld: optimalActions() before reset(); reset a task first", retryable=False)
        gold = self.gold.get(self.task)
        if gold is None:
            gold = self.gold_path({"task": self.task})
        k = len(self.history)
        return [gold[k]] if k < len(gold) and gold[:k] == self.history else []

    def ping(self, _args: dict) -> dict:
        return {"task": self.task, "moves": len(self.history), "done": self.done}

    def task_names(self, _args: dict) -> List[str]:
        return self.names

    def close(self) -> None:
        self.env.close()


def ops(s: SciWorldSession):
    return {"tasks": s.tasks, "reset": s.reset, "step": s.step, "gold": s.gold_path, "optimal": s.optimal,
            "ping": s.ping, "task_names": s.task_names}


def versions() -> dict:
    from importlib.metadata import version
    return {"scienceworld": version("scienceworld"), "python": sys.version.split()[0]}


def start() -> SciWorldSession:
    try:
        import scienceworld  # noqa: F401
    except ImportError as e:
        raise ConfigError(f"the scienceworld package is not installed ({e})",
                          "pip install scienceworld==1.2.3 (or run bridges/ci-install.sh); it needs Java >= 11")
    return SciWorldSession(int(os.environ.get("TCOD_SW_STEP_LIMIT", "100")), os.environ.get("TCOD_SW_SIMPLIFICATION", ""))


if __name__ == "__main__":
    serve("scienceworld", start, ops, versions)
