/**
 * Diagnosis of the embedded student on texthouse (issue 12): can the log-linear student represent
 * the observable expert's policy at all, and does reverse-KL OPD find it?
 *
 *   node_modules/.bin/esbuild bench/study/diagnose-embedded.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=dist/diagnose-embedded.mjs
 *   nice -n 10 node dist/diagnose-embedded.mjs MODE [key=value…]
 *
 * keys: steps batch lr eps horizonEvery (f2b: +1 turn every N steps; 0 = 30 turns) temp evalEvery
 * evalTasks evalT split features smoothing clo (candidate log-odds) gradClip logEvery, student=JSON /
 * teacher=JSON (EmbeddedStudentOptions / OracleTeacherOptions), trace=N (print N eval episodes),
 * probe=VERB (with trace: the student's and teacher's first-token top-k where the teacher's action
 * starts with VERB), save=DIR / load=DIR (student checkpoint), plan=PLAN.json (default: compiles
 * examples/texthouse/tcod-f2b.tcod for its agent format and backends).
 *
 * Modes, all with the plan's student/teacher/agent of examples/texthouse/tcod-f2b.tcod:
 *   sft   DAgger-style supervised learning: the student rolls out (τ 1), and every turn is trained
 *         by cross-entropy on the teacher's optimal actions (each 1/|O|) — the best a memoryless
 *         imitation of this teacher can do with these features.
 *   opd   exact reverse KL (opd "full"), as the runtime computes it, on the student's own turns.
 * Every `evalEvery` steps: greedy-ish eval (τ = evalT) on valid_seen: success, mean turns, and the
 * per-turn rate at which the student's action is in the teacher's optimal set, by expert phase.
 */
import { readFileSync } from "node:fs";
import { compileFile } from "../../compiler/index.js";
import { createEmbedded } from "../../runtime/backends/embedded/index.js";
import type { EmbeddedStudent } from "../../runtime/backends/embedded/student.js";
import type { OracleTeacher } from "../../runtime/backends/embedded/teacher.js";
import type { TrainRow } from "../../runtime/backends/backend.js";
import { TexthouseEnv, texthouseVocabulary } from "../../runtime/envs/texthouse/index.js";
import { runEpisode, type EpisodeRecord } from "../../runtime/rollout.js";
import type { AgentFormat } from "../../plan/schema.js";

const [mode = "opd", ...kv] = process.argv.slice(2);
const arg: Record<string, string> = Object.fromEntries(kv.map((s) => s.split("=") as [string, string]));
const num = (k: string, d: number) => (arg[k] !== undefined ? Number(arg[k]) : d);
function examplePlan(): unknown {
  const c = compileFile("examples/texthouse/tcod-f2b.tcod");
  if (!c.ok) throw new Error("examples/texthouse/tcod-f2b.tcod does not compile");
  return c.plans[0]!.plan;
}
const plan = (arg.plan ? JSON.parse(readFileSync(arg.plan, "utf8")) : examplePlan()) as {
  resources: { agents: { default: AgentFormat }; models: { student: { backend: { features: number } } } };
};
const agent: AgentFormat = plan.resources.agents.default;
const steps = num("steps", 40), batch = num("batch", 16), lr = num("lr", 0.03), eps = num("eps", 1e-4);
const evalEvery = num("evalEvery", 20), evalTasks = num("evalTasks", 32), evalT = num("evalT", 0.4);
const horizonEvery = num("horizonEvery", 2), temp = num("temp", 1);
const studentOpts = arg.student ? JSON.parse(arg.student) : {};
const teacherOpts = arg.teacher ? JSON.parse(arg.teacher) : {};

const { student, teacher, tokenizer } = createEmbedded(
  { kind: "embedded", features: num("features", plan.resources.models.student.backend.features), smoothing: num("smoothing", 0.1) },
  { vocabulary: texthouseVocabulary(), agent, seed: 42, student: { candidateLogOdds: num("clo", 12), ...studentOpts }, teacher: teacherOpts },
) as { student: EmbeddedStudent; teacher: OracleTeacher; tokenizer: ReturnType<typeof createEmbedded>["tokenizer"] };

const trainEnv = new TexthouseEnv();
const evalEnv = new TexthouseEnv();
const trainTasks = await trainEnv.tasks("train");
const evalSplit = arg.split ?? "valid_seen";
const evalTaskList = (await evalEnv.tasks(evalSplit)).slice(0, evalTasks);

async function episode(env: TexthouseEnv, task: (typeof trainTasks)[number], turns: number, temperature: number, seed: number): Promise<EpisodeRecord> {
  return runEpisode(env, async (req) => (await student.sample([req]))[0]!, agent, tokenizer, {
    index: 0, task, group: 0, prefixActions: [], studentTurns: turns, capped: turns < 30, truncatedReward: 0,
    temperature, seed, horizon: turns, expertLength: 0,
  }, student.version());
}

async function evaluate(step: number): Promise<void> {
  let wins = 0, turns = 0, agree = 0, n = 0;
  const byTurn: [number, number][] = Array.from({ length: 30 }, (): [number, number] => [0, 0]);
  const byVerb = new Map<string, [number, number]>();
  for (let i = 0; i < evalTaskList.length; i++) {
    const ep = await episode(evalEnv, evalTaskList[i]!, 30, evalT, 7000 + i);
    if (ep.won) wins++;
    if (i < num("trace", 0)) {
      console.log(`-- ${evalTaskList[i]!.id} won ${ep.won}: ${(await evalEnv.reset(evalTaskList[i]!)).task}`);
      for (const t of ep.turns) {
        console.log(`  ${t.index} ${t.action}  ${(t.context.optimal ?? []).includes(t.action ?? "") ? "OK" : "  opt: " + (t.context.optimal ?? []).slice(0, 4).join(" | ")}`);
        if (arg.probe && (t.context.optimal ?? [])[0]?.startsWith(arg.probe)) {
          const [sc] = await student.score([{ prompt: t.prompt, completion: t.response, temperature: 1, topk: 6 }]);
          const [tq] = await teacher.score([{ prompt: t.prompt, completion: t.response, temperature: 1, context: t.context, topk: 4 }]);
          const show = (xs: { token: number; logprob: number }[]) => xs.map((x) => `${JSON.stringify(tokenizer.decode([x.token]))}:${x.logprob.toFixed(2)}`).join(" ");
          if (t.index === ep.turns.findIndex((u) => (u.context.optimal ?? [])[0]?.startsWith(arg.probe!))) console.log("    PROMPT-LAST: " + JSON.stringify(tokenizer.decode(t.prompt.slice(-120))));
          console.log(`    S pos0: ${show(sc!.topk![0]!)}\n    T pos0: ${show(tq!.topk![0]!)}`);
        }
      }
    }
    turns += ep.turns.length;
    for (const t of ep.turns) {
      const ok = t.action !== null && (t.context.optimal ?? []).includes(t.action) ? 1 : 0;
      agree += ok; n++;
      const bt = byTurn[Math.min(t.index, 29)]!; bt[0] += ok; bt[1]++;
      const verb = (t.context.optimal ?? [""])[0]!.split(" ")[0]!;
      const bv = byVerb.get(verb) ?? [0, 0]; bv[0] += ok; bv[1]++; byVerb.set(verb, bv);
    }
  }
  const verbs = [...byVerb].map(([v, [a, c]]) => `${v} ${(a / c).toFixed(2)}/${c}`).join(" ");
  const early = byTurn.slice(0, 10).map(([a, c]) => (c ? (a / c).toFixed(2) : "-")).join(" ");
  console.log(`EVAL cpu ${cpu()}s step ${step} ${evalSplit} success ${(wins / evalTaskList.length).toFixed(3)} turns ${(turns / evalTaskList.length).toFixed(1)} agree ${(agree / n).toFixed(3)} | by teacher verb: ${verbs} | turns0-9: ${early}`);
}

/** Rows for one episode's turns: per-turn rows (prompt + response), one sequence per turn. */
async function opdRows(ep: EpisodeRecord): Promise<{ rows: TrainRow[]; kl: number; tokens: number; ent: number }> {
  const rows: TrainRow[] = [];
  let kl = 0, tokens = 0, ent = 0;
  const total = ep.turns.reduce((a, t) => a + t.response.length, 0);
  for (const t of ep.turns) {
    const [s] = await teacher.score([{ prompt: t.prompt, completion: t.response, temperature: 1, context: t.context, full: true }]);
    const [st] = await student.score([{ prompt: t.prompt, completion: t.response, temperature: 1 }]);
    const L = t.prompt.length, R = t.response.length;
    const tokensAll = [...t.prompt, ...t.response];
    const zeros = () => new Array(L + R).fill(0);
    const mask = zeros(), lw = zeros(), old = zeros(), kc = zeros();
    const dists: TrainRow["teacherDistributions"] = new Array(L + R).fill(null);
    for (let j = 0; j < R; j++) {
      mask[L + j] = 1; old[L + j] = t.logprobs[j]!;
      lw[L + j] = 1 / total / batch; kc[L + j] = 1;
      dists[L + j] = s!.distributions?.[j] ?? null;
      kl += t.logprobs[j]! - s!.logprobs[j]!; tokens++; ent += st!.entropy?.[j] ?? 0;
    }
    rows.push({ tokens: tokensAll, mask, advantages: zeros(), oldLogprobs: old, lossWeights: lw, klCoefs: kc, teacherDistributions: dists });
  }
  return { rows, kl, tokens, ent };
}

/** Cross-entropy rows on each optimal action (weight 1/|O|) at every turn the student visited. */
function sftRows(ep: EpisodeRecord): TrainRow[] {
  const rows: TrainRow[] = [];
  const turnsN = ep.turns.length;
  for (const t of ep.turns) {
    const opt = t.context.optimal ?? [];
    for (const a of opt) {
      const resp = teacher.responseTokens(a);
      const L = t.prompt.length, R = resp.length;
      const zeros = () => new Array(L + R).fill(0);
      const mask = zeros(), lw = zeros(), adv = zeros(), old = zeros();
      for (let j = 0; j < R; j++) { mask[L + j] = 1; lw[L + j] = 1 / opt.length / R / turnsN / batch; adv[L + j] = 1; }
      // importance_sampling with old = current lp (set below) and A = 1 is cross-entropy.
      rows.push({ tokens: [...t.prompt, ...resp], mask, advantages: adv, oldLogprobs: old, lossWeights: lw });
    }
  }
  return rows;
}

if (arg.load) await student.loadState(arg.load);
let taskCursor = 0;
const cpu = () => { const u = process.cpuUsage(); return ((u.user + u.system) / 1e6).toFixed(0); };
const t0 = Date.now();
for (let step = 1; step <= steps; step++) {
  const H = horizonEvery > 0 ? Math.min(30, 1 + Math.floor(step / horizonEvery)) : 30;
  const eps_: EpisodeRecord[] = [];
  for (let b = 0; b < batch; b++) eps_.push(await episode(trainEnv, trainTasks[(taskCursor++ * 7919) % trainTasks.length]!, H, temp, step * 1000 + b));
  let rows: TrainRow[] = [];
  let kl = 0, tok = 0, ent = 0;
  if (mode === "opd") {
    for (const ep of eps_) { const r = await opdRows(ep); rows.push(...r.rows); kl += r.kl; tok += r.tokens; ent += r.ent; }
  } else {
    for (const ep of eps_) rows.push(...sftRows(ep));
    // old log-probabilities = the current ones, so the IS ratio is 1 and the gradient is CE's.
    for (const r of rows) {
      const L = r.mask.indexOf(1);
      const [sc] = await student.score([{ prompt: r.tokens.slice(0, L), completion: r.tokens.slice(L), temperature: 1 }]);
      sc!.logprobs.forEach((lp, j) => { r.oldLogprobs![L + j] = lp; });
    }
  }
  const agree: number[] = eps_.flatMap((e) => e.turns).map((t) => (t.action !== null && (t.context.optimal ?? []).includes(t.action) ? 1 : 0));
  const adm: number[] = eps_.flatMap((e) => e.turns).map((t) => (t.action !== null && t.context.admissible.includes(t.action) ? 1 : 0));
  const st = await student.train(rows, { lr, lossFn: "importance_sampling", clip: 0.2, gradClip: num("gradClip", 1), eps });
  if (step % num("logEvery", 5) === 0 || step === 1) {
    console.log(`step ${step} H ${H} agree ${(agree.reduce((a, b) => a + b, 0) / agree.length).toFixed(3)} adm ${(adm.reduce((a, b) => a + b, 0) / adm.length).toFixed(3)} `
      + `k1 ${(kl / Math.max(1, tok)).toFixed(3)} ent ${(ent / Math.max(1, tok)).toFixed(3)} loss ${st.loss.toFixed(4)} gnorm ${st.gradNorm.toFixed(4)} `
      + `wins ${eps_.filter((e) => e.won).length} ${((Date.now() - t0) / 1000).toFixed(0)}s cpu ${cpu()}s`);
  }
  if (step % evalEvery === 0) await evaluate(step);
}
if (arg.save) await student.saveState(arg.save);
if (steps === 0) await evaluate(0);
