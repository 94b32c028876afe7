/**
 * Creates the run's student and teacher from the plan's model specs. Each (student kind, teacher
 * kind) pairing registers a factory; bin/compose.ts (the composition root) registers them all, so
 * this registry imports no backend. Teacher and student must share a tokenizer (TCOD scores
 * the student's own tokens), which is checked here by fingerprint.
 */
import type { AgentFormat, ModelSpec } from "../../plan/schema.js";
import { BackendError, type StudentBackend, type TeacherBackend, type Tokenizer } from "./backend.js";

export interface Models { student: StudentBackend; teacher: TeacherBackend; tokenizer: Tokenizer }

export interface ModelsSetup {
  student: ModelSpec;
  teacher: ModelSpec;
  agent: AgentFormat;
  seed: number;
  /** The training env's vocabulary (closed-vocabulary envs), for in-process tokenizers. */
  vocabulary?: Iterable<string>;
  /** The run folder, for files a backend writes for the run (a worker's vocab.txt, adapters, wait times). */
  runDir?: string;
}

export type ModelsFactory = (setup: ModelsSetup) => Promise<Models>;

const factories = new Map<string, ModelsFactory>();

/** Registers a factory for a (student kind, teacher kind) pair, e.g. "worker/openai". */
export function registerModels(studentKind: string, teacherKind: string, f: ModelsFactory): void {
  factories.set(`${studentKind}/${teacherKind}`, f);
}

export async function createModels(setup: ModelsSetup): Promise<Models> {
  const key = `${setup.student.backend.kind}/${setup.teacher.backend.kind}`;
  const f = factories.get(key);
  if (!f) {
    throw new BackendError(`no backend pairing student ${setup.student.backend.kind} with teacher ${setup.teacher.backend.kind} is available`, key, false,
      `available: ${[...factories.keys()].join(", ")}`);
  }
  const m = await f(setup);
  if (m.student.tokenizer.fingerprint() !== m.teacher.tokenizer.fingerprint()) {
    throw new BackendError("teacher and student use different tokenizers; OPD scores the student's own tokens, so they must share one", key, false);
  }
  return m;
}
