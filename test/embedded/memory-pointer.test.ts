/**
 * The embedded student's episode-memory features (what the episode has shown) and pointer weights:
 * the memory read from a handwritten history, and the pointer gradient against finite differences.
 */
import { describe, expect, it } from "vitest";
import type { AgentFormat } from "../../plan/schema.js";
import type { TrainRow } from "../../runtime/backends/backend.js";
import { createEmbedded } from "../../runtime/backends/embedded/index.js";
import { episodeMemory } from "../../runtime/backends/embedded/episode-memory.js";
import { promptWords } from "../../runtime/backends/embedded/features.js";
import { texthouseVocabulary } from "../../runtime/envs/texthouse/index.js";

const LISTED: AgentFormat = {
  name: "raw_listed", system: "", template: "task: {task}\nobservation: {observation}\nactions: {admissible}",
  templateNoHistory: "task: {task}\nobservation: {observation}\nactions: {admissible}", historyWindow: 0, historyEntry: "",
  memory: { kind: "accumulate" }, parser: { kind: "raw" }, maxResponseTokens: 16, thinking: false, onInvalid: { kind: "pass" },
};

const TASK = new Set(["put", "a", "hot", "mug", "on", "shelf"]);
const user = (obs: string, actions: string[]) => `task: put a hot mug on shelf\nobservation: ${obs}\nactions: ${actions.map((a) => `'${a}'`).join(", ")}`;

describe("episode memory", () => {
  it("visited, explored, seen task objects, held and processed, as phase and candidate bits", () => {
    const msgs = [
      user("You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a cabinet 2, and a shelf 1.\n\nYour task is to: put a hot mug on shelf.", []),
      user("You arrive at cabinet 1. The cabinet 1 is closed.", []),
    ];
    const cands = ["go to cabinet 1", "go to cabinet 2", "open cabinet 1", "look"];
    let m = episodeMemory(msgs, TASK, cands);
    expect(m.phase).toBe(16); // at an unexplored closed receptacle
    expect(m.here).toBe("cabinet");
    expect(Array.from(m.candidateBits)).toEqual([4, 0, 4, 0]); // cabinet 1 visited only
    msgs.push(user("You open the cabinet 1. The cabinet 1 is open. In it, you see a mug 2, and a cd 1.", []));
    m = episodeMemory(msgs, TASK, cands);
    expect(m.phase).toBe(8); // a task object is known somewhere
    expect(Array.from(m.candidateBits)).toEqual([7, 0, 7, 0]); // explored, holds a task object, visited
    msgs.push(user("You pick up the mug 2 from the cabinet 1.", []), user("You heat the mug 2 using the microwave 1.", []));
    m = episodeMemory(msgs, TASK, cands);
    expect(m.phase).toBe(1 | 4); // holds the task object, processed; nothing known elsewhere
    expect(m.candidateBits[0]).toBe(5); // cabinet 1 explored and visited, the mug is gone
    msgs.push(user("You arrive at shelf 1. On the shelf 1, you see nothing.", []), user("You put the mug 2 in/on the shelf 1.", []));
    m = episodeMemory(msgs, TASK, ["go to shelf 1"]);
    expect(m.phase).toBe(8 | 32 | 64); // hands empty, a task object lies somewhere, one was put down; at the target type
    expect(m.here).toBe("shelf");
    expect(m.candidateBits[0]).toBe(7);
  });
});

describe("pointer weights", () => {
  it.each([1, 20])("gradient matches central finite differences (pointerScale %d); the prompt's memory reaches the candidate masks", async (pointerScale) => {
    const { student, tokenizer } = createEmbedded({ kind: "embedded", smoothing: 0.1, features: 64 }, {
      vocabulary: texthouseVocabulary(), agent: LISTED, seed: 3, student: { precision: "float64", initScale: 0.05, candidateLogOdds: 2, pointerScale },
    });
    for (let k = 0; k < student.pointer.length; k++) student.pointer[k] = Math.sin(k) * 0.7 / pointerScale;
    const prompt = [
      ...tokenizer.renderUser(user("You arrive at cabinet 1. The cabinet 1 is closed.", ["go to cabinet 2", "go to shelf 1", "open cabinet 1"])),
      ...tokenizer.assistantPrefix(), ...tokenizer.encode("open cabinet 1"), tokenizer.endOfResponse,
      ...tokenizer.renderUser(user("You open the cabinet 1. The cabinet 1 is open. In it, you see a mug 2.", ["go to cabinet 2", "go to shelf 1", "take mug 2 from cabinet 1", "close cabinet 1"])),
      ...tokenizer.assistantPrefix(),
    ];
    const w = promptWords(prompt, prompt.length, (student as unknown as { vocab: Parameters<typeof promptWords>[2] }).vocab, 256);
    expect(w.memory?.phase).toBe(8);
    expect(w.candidates).toHaveLength(4);
    const rows: TrainRow[] = ["take mug 2 from cabinet 1", "go to shelf 1", "go to cabinet 2"].map((a, i) => {
      const r = [...tokenizer.encode(a), tokenizer.endOfResponse];
      return {
        tokens: [...prompt, ...r], mask: [...prompt.map(() => 0), ...r.map(() => 1)],
        advantages: [...prompt.map(() => 0), ...r.map((_, j) => (i - 1) * 0.5 + 0.1 * j)],
        oldLogprobs: [...prompt.map(() => 0), ...r.map(() => -1)], lossWeights: [...prompt.map(() => 0), ...r.map(() => 0.05)],
      };
    });
    const opt = { lossFn: "importance_sampling" as const, clip: 0.2 };
    const lg = student.lossAndGradient(rows, opt);
    const touched = [...lg.pointer!.keys()].filter((k) => lg.pointer![k] !== 0);
    expect(touched.length).toBeGreaterThan(3);
    const h = 1e-6;
    for (const k of touched.slice(0, 6)) {
      const p0 = student.pointer[k]!;
      student.pointer[k] = p0 + h; const up = student.lossAndGradient(rows, opt).loss;
      student.pointer[k] = p0 - h; const down = student.lossAndGradient(rows, opt).loss;
      student.pointer[k] = p0;
      expect(lg.pointer![k]).toBeCloseTo((up - down) / (2 * h), 6);
    }
    // A reparameterisation: scale s with weights P/s is the policy of scale 1 with weights P, and
    // the gradient w.r.t. P/s is s times the gradient w.r.t. P.
    if (pointerScale !== 1) {
      const one = createEmbedded({ kind: "embedded", smoothing: 0.1, features: 64 }, {
        vocabulary: texthouseVocabulary(), agent: LISTED, seed: 3, student: { precision: "float64", initScale: 0.05, candidateLogOdds: 2, pointerScale: 1 },
      }).student;
      for (let k = 0; k < one.pointer.length; k++) one.pointer[k] = Math.sin(k) * 0.7;
      const lg1 = one.lossAndGradient(rows, opt);
      expect(lg.loss).toBeCloseTo(lg1.loss, 10);
      for (const k of touched.slice(0, 6)) expect(lg.pointer![k]).toBeCloseTo(pointerScale * lg1.pointer![k]!, 8);
    }
  });
});
