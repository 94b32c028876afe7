#!/usr/bin/env python3
"""Runs a generated Trinity workflow for real (for tcod's tests): Trinity-RFT's own Task, Workflow
base class and Experience type, a tiny transformers model in place of Trinity's model wrapper, and
the real ScienceWorld. Needs Trinity-RFT, torch, transformers and scienceworld (Java); nothing is
downloaded: the tokenizer is byte-level and built here, the models are randomly initialised.

  workflow_real.py < request.json
      request: {"seed": int, "sampled_tokens": int, "actions": [str, ...],
                "plugins": [{"dir": PLUGIN_DIR,
                             "runs": [{"raw_task": {...}, "batch_id": int | str, "is_eval": bool,
                                       "workflow_args": {...}}]}]}
      Loads every plugin (each registers its workflow under its own name); for each run: builds trinity.common.workflows.workflow.Task for the plugin's registered
      workflow, `task.to_workflow(model, [teacher])`, awaits `run_async()` and prints, per run,
      the experiences it returned (type, token counts, eid.step, reward, metrics) and the user
      messages the student saw.

The student wrapper answers like Trinity's ModelWrapper.chat_async: it applies the chat template,
samples `sampled_tokens` tokens from the tiny model (torch.multinomial over its softmax at the
requested temperature), then appends `<action>A</action>` with A the next of `actions` (a random
model would otherwise never name an action, and the env would never step); the response's
logprobs are the model's own log-softmax at that temperature over the whole response, as vLLM
reports them. The teacher wrapper's logprobs_async returns, like Trinity's vLLM wrapper, the
log-probability of tokens[1:] under a second tiny model.
"""
import asyncio
import importlib.util
import json
import os
import sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from trinity.common.config import FormatConfig, GenerationConfig
from trinity.common.experience import Experience
from trinity.common.workflows import WORKFLOWS
from trinity.common.workflows.workflow import Task, Workflow

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def byte_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level tokenizer (256 byte tokens, no merges) with a chat template, built locally."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok)
    fast.add_special_tokens({"eos_token": "<|end|>", "additional_special_tokens": ["<|user|>", "<|assistant|>", "<|system|>"]})
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_model(vocab: int, seed: int) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32768)
    m = LlamaForCausalLM(cfg)
    m.eval()
    return m


def token_logprobs(model, ids, temperature: float) -> torch.Tensor:
    """log p(ids[i+1] | ids[:i+1]) for every i, at `temperature`."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, :-1].float() / max(temperature, 1e-6)
    return torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(ids[1:]).unsqueeze(1)).squeeze(1)


class Student:
    """Trinity's ModelWrapper, as far as a workflow uses it (chat_async)."""

    def __init__(self, tok, model, seed: int, sampled: int, actions):
        self.tok, self.model, self.sampled, self.actions = tok, model, sampled, actions
        self.gen = torch.Generator().manual_seed(seed)
        self.turn = 0
        self.user_messages = []

    def get_openai_async_client(self):
        return None

    async def chat_async(self, messages, n=1, temperature=1.0, logprobs=None, **_):
        assert n == 1 and logprobs is not None, "the workflow asks for one sample with logprobs"
        self.user_messages.append(messages[-1]["content"])
        prompt = self.tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        ids = list(prompt)
        with torch.no_grad():
            for _ in range(self.sampled):
                logits = self.model(torch.tensor([ids])).logits[0, -1].float() / max(temperature, 1e-6)
                ids.append(int(torch.multinomial(torch.softmax(logits, -1), 1, generator=self.gen)))
        action = self.actions[self.turn % len(self.actions)]
        self.turn += 1
        ids += self.tok.encode(f"<action>{action}</action>", add_special_tokens=False)
        lp = token_logprobs(self.model, ids, temperature)[len(prompt) - 1:]
        response = self.tok.decode(ids[len(prompt):])
        return [Experience(tokens=torch.tensor(ids), prompt_length=len(prompt), logprobs=lp, response_text=response)]


class Teacher:
    """Trinity's auxiliary ModelWrapper, as far as the workflow uses it (logprobs_async)."""

    def __init__(self, model):
        self.model = model

    def get_openai_async_client(self):
        return None

    async def logprobs_async(self, tokens, temperature=1.0):
        return token_logprobs(self.model, list(tokens), temperature)


def load_plugin(plugin_dir, k):
    sys.path.insert(0, plugin_dir)
    spec = importlib.util.spec_from_file_location(f"tcod_workflow_{k}", os.path.join(plugin_dir, "tcod_workflow.py"))
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    with open(os.path.join(plugin_dir, "tcod_runtime", "spec.json"), encoding="utf-8") as f:
        return json.load(f)


def main():
    req = json.load(sys.stdin)
    tok = byte_tokenizer()
    student_model, teacher_model = tiny_model(len(tok), req["seed"]), tiny_model(len(tok), req["seed"] + 1)
    out = []
    for k, plugin in enumerate(req["plugins"]):
        spec = load_plugin(plugin["dir"], k)
        cls = WORKFLOWS.get(spec["workflow"]["name"])
        assert issubclass(cls, Workflow)
        runs = []
        for i, run in enumerate(plugin["runs"]):
            student = Student(tok, student_model, req["seed"] + i, req["sampled_tokens"], req["actions"])
            task = Task(workflow=cls, format_args=FormatConfig(prompt_key="task_desc"),
                        rollout_args=GenerationConfig(temperature=1.0, logprobs=0), workflow_args=run["workflow_args"],
                        is_eval=bool(run.get("is_eval")), raw_task=run["raw_task"], batch_id=run["batch_id"])
            workflow = task.to_workflow(model=student, auxiliary_models=[Teacher(teacher_model)])
            exps = asyncio.run(workflow.run_async())
            runs.append({
                "workflow_class": type(workflow).__mro__[1].__module__ + "." + type(workflow).__mro__[1].__name__,
                "experiences": [{
                    "type": f"{type(e).__module__}.{type(e).__name__}",
                    "tokens": int(len(e.tokens)), "prompt_length": int(e.prompt_length),
                    "logprobs": [float(x) for x in e.logprobs.tolist()],
                    "teacher_logprobs": None if e.teacher_logprobs is None else [float(x) for x in e.teacher_logprobs.tolist()],
                    "step": int(e.eid.step), "reward": float(e.reward or 0.0), "metrics": dict(e.metrics or {}),
                    "response": e.response_text,
                } for e in exps],
                "user_messages": student.user_messages,
            })
        out.append(runs)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
