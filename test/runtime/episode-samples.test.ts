/**
 * Sample episodes (runtime/episode-samples.ts): which steps and episodes are kept, each turn's text
 * and k1 KL against hand-computed numbers, the writer's resume truncation, and the report panel.
 */
import { mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EpisodeSampleWriter, MAX_OBSERVATION_CHARS, episodeSample, evalSamples, pickEpisodes, readEpisodeSamples, sampleProblem, samplesDue, stepSamples, type EpisodeSample } from "../../runtime/episode-samples.js";
import { episodesPanel, shownEvalSamples, shownSamples } from "../../runtime/report/episodes.js";
import type { ScoredEpisode } from "../../runtime/replay.js";
import type { EpisodeRecord, TurnRecord } from "../../runtime/rollout.js";
import { CharTokenizer, END } from "./doubles.js";
import { RunFolderError } from "../../runtime/checkpoint.js";
import { MAX_RUN_FILE_BYTES } from "../../plan/read-file.js";

const tok = new CharTokenizer();

function turn(index: number, observation: string, text: string, action: string | null, logprobs: number[], admissible = ["inc", "dec"]): TurnRecord {
  return {
    index, observation, prompt: [1, 2, 3], response: [...tok.encode(text), END], logprobs, action,
    context: { admissible }, finishReason: "stop",
  };
}

function episode(index: number, won: boolean, turns: TurnRecord[], prefix: string[] = []): EpisodeRecord {
  return {
    spec: {
      index, task: { id: `count-${index + 2}`, split: "train" }, group: index, prefixActions: prefix, studentTurns: 4, capped: !won,
      truncatedReward: 0, temperature: 1, seed: 1, horizon: 4, expertLength: 2,
    },
    turns, reward: won ? 1 : 0, won, done: won, truncated: !won, replayFinished: false, invalidActions: 0, policyVersion: 0,
  };
}

describe("sample episodes", () => {
  it("samples the first step, the last, and every floor(T/20)-th", () => {
    const due = (T: number) => Array.from({ length: T }, (_, i) => i + 1).filter((s) => samplesDue(s, T));
    expect(due(3)).toEqual([1, 2, 3]);
    expect(due(45)).toEqual([1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 45]);
    expect(due(1000).length).toBe(21);
  });

  it("keeps the first won and the first failed episode, in batch order", () => {
    const mk = (i: number, won: boolean): ScoredEpisode => ({ record: episode(i, won, [turn(0, "at 0", "inc", "inc", [-1])]), teacher: [[-1]] });
    const batch = [mk(0, false), mk(1, false), mk(2, true), mk(3, true)];
    expect(pickEpisodes(batch, 2).map((e) => e.record.spec.index)).toEqual([0, 2]);
    expect(pickEpisodes(batch, 3).map((e) => e.record.spec.index)).toEqual([0, 1, 2]);
    expect(pickEpisodes([mk(0, false), mk(1, false)], 2).map((e) => e.record.spec.index)).toEqual([0, 1]);
    // An episode the expert prefix finished has no turns: nothing to show.
    const finished: ScoredEpisode = { record: { ...episode(4, true, []), replayFinished: true }, teacher: [] };
    expect(pickEpisodes([finished, mk(5, false)], 2).map((e) => e.record.spec.index)).toEqual([5]);
  });

  it("renders each turn's text and its k1 KL (mean of log p_S − log p_T over the response tokens)", () => {
    // "inc" + END: 4 response tokens. Turn 0: (−0.5 − (−1.5)) + (−1 − (−1)) + (0 − (−2)) + (−0.2 − (−0.2)) = 3 → 0.75.
    const t0 = turn(2, "at 0", "inc", "inc", [-0.5, -1, 0, -0.2]);
    // "jump" + END, not offered: (−2 − (−1)) × 5 / 5 = −1.
    const t1 = turn(3, "x".repeat(MAX_OBSERVATION_CHARS + 5), "jump", "jump", [-2, -2, -2, -2, -2]);
    const scored: ScoredEpisode = { record: episode(1, false, [t0, t1], ["inc", "inc"]), teacher: [[-1.5, -1, -2, -0.2], [-1, -1, -1, -1, -1]] };
    const s = episodeSample(7, scored, tok);
    expect(s).toMatchObject({ step: 7, episode: 1, task: "count-3", split: "train", won: false, truncated: true, horizon: 4, prefix: ["inc", "inc"] });
    expect(s.turns.map((t) => ({ index: t.index, response: t.response, action: t.action, admissible: t.admissible, tokens: t.tokens }))).toEqual([
      { index: 2, response: "inc", action: "inc", admissible: true, tokens: 4 },
      { index: 3, response: "jump", action: "jump", admissible: false, tokens: 5 },
    ]);
    expect(s.turns[0]!.kl).toBeCloseTo(0.75, 12);
    expect(s.turns[1]!.kl).toBeCloseTo(-1, 12);
    expect(s.turns[0]!.observation).toBe("at 0");
    expect(s.turns[1]!.observation).toBe(`${"x".repeat(MAX_OBSERVATION_CHARS)}…`);
    expect(stepSamples(7, 45, [scored], tok)).toEqual([]); // step 7 of 45 is not sampled
    expect(stepSamples(8, 45, [scored], tok)).toHaveLength(1);
  });

  it("a resumed run's writer keeps the lines of the steps its checkpoint trained", () => {
    const path = join(mkdtempSync(join(tmpdir(), "tcod-samples-")), "episodes.jsonl");
    const w = new EpisodeSampleWriter(path);
    w.open();
    const sample = (step: number): EpisodeSample => ({ step, episode: 0, task: "t", split: "train", won: false, reward: 0, truncated: false, horizon: 1, prefix: [], turns: [] });
    w.write([sample(1), sample(1)]);
    w.write([sample(2)]);
    w.write([sample(3)]);
    writeFileSync(path, readFileSync(path, "utf8") + '{"step": 4, "turns": [');
    new EpisodeSampleWriter(path).open(2);
    expect(readEpisodeSamples(path).samples.map((s) => s.step)).toEqual([1, 1, 2]);
    writeFileSync(path, readFileSync(path, "utf8") + "garbage\n");
    expect(readEpisodeSamples(path).damaged).toEqual([{ line: 4, problem: expect.stringMatching(/^is not JSON \(.* at column 1\)$/), column: 1 }]);
  });

  it("a resume keeps the lines it cannot read (the report counts them), dropping only the unterminated last one (was: every unreadable line dropped unsaid)", () => {
    const path = join(mkdtempSync(join(tmpdir(), "tcod-samples-")), "episodes.jsonl");
    const sample = (step: number) => JSON.stringify({ step, episode: 0, task: "t", split: "train", won: false, reward: 0, truncated: false, horizon: 1, prefix: [], turns: [] });
    writeFileSync(path, [sample(1), "null", "garbage{", sample(2), sample(3), '{"step": 4, "tu'].join("\n"));
    const told: [string, string][] = [];
    new EpisodeSampleWriter(path).open(2, (kind, m) => told.push([kind, m]));
    expect(readFileSync(path, "utf8")).toBe([sample(1), "null", "garbage{", sample(2), ""].join("\n"));
    expect(readEpisodeSamples(path).damaged.map((d) => d.line)).toEqual([2, 3]);
    // Said, once for the file, naming its first damaged line and counting them; the cut-off last line in a note (was: unsaid).
    expect(told).toEqual([
      ["warning", `${path}:2: not a sample episode tcod wrote (line 2 holds null, not a sample object); 2 lines in all (2, 3); the resume keeps such lines as they are and the report leaves them out`],
      ["note", `${path}:6: the last line is not a whole sample (a run killed while writing it); it is left out`],
    ]);
  });

  it("the report reader names each line that is not a sample, checks the fields the report reads, and tells a cut-off last line apart (was: counted without a line; a turn of the wrong shape crashed the report)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-samples-"));
    const path = join(dir, "episodes.jsonl");
    const good = { step: 1, episode: 0, task: "t", split: "train", won: false, reward: 0, truncated: false, horizon: 1, prefix: [],
      turns: [{ index: 0, observation: "o", response: "r", action: null, admissible: false, kl: null, tokens: 1, finishReason: "stop" }] };
    const lines = [
      JSON.stringify(good),
      JSON.stringify({ ...good, turns: [{ ...good.turns[0], observation: 5 }] }), // esc(5) threw in the panel
      "[1, 2]",
      JSON.stringify({ ...good, step: "1" }),
      '{"step": 2,,}',
      JSON.stringify({ ...good, step: 3 }),
      '{"step": 4, "tu',
    ];
    writeFileSync(path, lines.join("\n"));
    const read = readEpisodeSamples(path);
    expect(read.samples.map((s) => s.step)).toEqual([1, 3]);
    expect(read.damaged).toEqual([
      { line: 2, problem: "has a `turns[0]` that is not a turn (index, observation, response, action, admissible, kl, tokens, finishReason)" },
      { line: 3, problem: "holds a list, not a sample object" },
      { line: 4, problem: "has no `step` (a whole number ≥ 0)" },
      { line: 5, problem: expect.stringMatching(/^is not JSON \(.* at column 12\)$/), column: 12 },
    ]);
    expect(read.partialLastLine).toBe(7);
    // A last line that is JSON but no sample is damaged, not cut off: only a text that is not JSON is being written.
    writeFileSync(path, `${JSON.stringify(good)}\n{"step": 2}`);
    expect(readEpisodeSamples(path)).toMatchObject({ damaged: [{ line: 2 }] });
    expect(readEpisodeSamples(path).partialLastLine).toBeUndefined();
    for (const [k, v] of [["won", "yes"], ["prefix", [1]], ["eval", 3], ["reward", null], ["task", 1]] as const) {
      expect(sampleProblem({ ...good, [k]: v }), k).toBeDefined();
    }
    expect(sampleProblem(good)).toBeUndefined();
  });

  it("the report refuses an episodes.jsonl that is a folder or past the run-file limit: TC7014 naming it (was: EISDIR, or the whole file read)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-samples-"));
    const folder = join(dir, "episodes.jsonl");
    mkdirSync(folder);
    const big = join(dir, "big.jsonl");
    writeFileSync(big, "");
    truncateSync(big, MAX_RUN_FILE_BYTES + 1); // sparse: no disk used
    for (const [path, why] of [[folder, /cannot read .*episodes\.jsonl \(it is a folder, not a file\)/], [big, /cannot read .*big\.jsonl \(it is 512 MiB; tcod reads files up to 512 MiB\)/]] as const) {
      const err = (() => { try { readEpisodeSamples(path); } catch (e) { return e; } })();
      expect(err).toBeInstanceOf(RunFolderError);
      const e = err as RunFolderError;
      expect(e.code).toBe("TC7014");
      expect(e.message).toMatch(why);
      expect(e.where?.file).toBe(path);
      expect(e.hint).toBeTruthy();
    }
  });

  it("the report panel shows the first and the last sampled step and says when lines were skipped", () => {
    const sample = (step: number, episodeIndex: number): EpisodeSample => ({
      step, episode: episodeIndex, task: "t<1>", split: "valid", won: step > 1, reward: step > 1 ? 1 : 0, truncated: step === 1, horizon: 3, prefix: [],
      turns: [{ index: 0, observation: "a <b> & c", response: "go", action: "go", admissible: true, kl: 0.5, tokens: 3, finishReason: "stop" }],
    });
    const all = [sample(1, 0), sample(1, 1), sample(1, 2), sample(5, 0), sample(9, 3), sample(9, 4)];
    expect(shownSamples(all).map((s) => [s.step, s.episode])).toEqual([[1, 0], [1, 1], [9, 3], [9, 4]]);
    const html = episodesPanel(all, [{ line: 3, problem: "is not JSON (Unexpected end of JSON input at column 9)", column: 9 }, { line: 8, problem: "holds null, not a sample object" }], 12);
    expect(html.match(/<details class="episode"/g)).toHaveLength(4);
    expect(html).toContain("a &lt;b&gt; &amp; c");
    expect(html).toContain("task t&lt;1&gt; (valid)");
    expect(html).toContain("2 lines of episodes.jsonl are not a sample episode and are left out (line 3 is not JSON (Unexpected end of JSON input at column 9); lines 3, 8).");
    expect(html).toContain("Its last line, 12, is cut off (a run killed while writing it) and left out.");
    expect(html).toContain("6 sampled training episodes from 3 steps");
    expect(episodesPanel([])).toContain("No sample episodes were recorded");
  });

  it("keeps an evaluation's first won and first failed episode, named, without KL", () => {
    const records = [episode(0, false, [turn(0, "at 0", "dec", "dec", [-1])]), episode(1, false, []), episode(2, true, [turn(0, "at 0", "inc", "inc", [-1])])];
    const got = evalSamples(12, "valid_seen", records, tok);
    expect(got.map((s) => [s.step, s.eval, s.episode, s.won])).toEqual([[12, "valid_seen", 0, false], [12, "valid_seen", 2, true]]);
    expect(got.flatMap((s) => s.turns.map((t) => t.kl))).toEqual([null, null]);
    expect(got[0]!.turns[0]).toMatchObject({ response: "dec", action: "dec", admissible: true });
    // The panel keeps training samples and evaluation samples apart; evaluations: each set's last.
    const training: EpisodeSample = { ...episodeSample(3, { record: records[2]!, teacher: [[-1]] }, tok) };
    const later = evalSamples(20, "valid_seen", records.slice(2), tok);
    const other = evalSamples(20, "hard", records.slice(0, 1), tok);
    expect(shownEvalSamples([...got, ...later, ...other, training]).map((s) => [s.eval, s.step, s.episode])).toEqual([["valid_seen", 20, 2], ["hard", 20, 0]]);
    const html = episodesPanel([training, ...got, ...later, ...other]);
    expect(html).toContain("1 sampled training episodes from 1 steps");
    expect(html).toContain("4 evaluation episodes are in RUN_DIR/episodes.jsonl");
    expect(html).toContain("evaluation hard after step 20");
    expect(html.match(/<details class="episode"/g)).toHaveLength(3);
  });
});
