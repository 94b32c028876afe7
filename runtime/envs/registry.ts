/**
 * Env kind → adapter factory. The engine creates one adapter per pool slot through this registry;
 * environment packages register their kind here (texthouse is built in).
 */
import type { EnvSpec } from "../../plan/schema.js";
import { EnvConfigError, type EnvAdapter } from "./env.js";
import { TexthouseEnv, texthouseVocabulary, type TexthouseExpert } from "./texthouse/index.js";
import { scienceWorldFromSpec } from "./scienceworld/index.js";
import { textWorldExpressFromSpec } from "./twx/index.js";
import { agentGymFromSpec } from "./agentgym/index.js";
import { bridgeVocabulary } from "./bridge/vocabulary.js";

export interface EnvFactoryOptions {
  /** Run seed (adapters that randomise layouts derive from it). */
  seed: number;
  /** Index of the instance within its pool. */
  instance: number;
}

export type EnvFactory = (spec: EnvSpec, opts: EnvFactoryOptions) => EnvAdapter;

export interface EnvRegistration {
  create: EnvFactory;
  /** Every word the env can show (tasks, observations, actions): the embedded tokenizer's vocabulary. */
  vocabulary?: (spec: EnvSpec) => Iterable<string>;
}

const factories = new Map<string, EnvRegistration>();

export function registerEnv(kind: string, registration: EnvRegistration): void {
  factories.set(kind, registration);
}

/** The env's vocabulary, where it declares one (closed-vocabulary envs such as texthouse). */
export function envVocabulary(spec: EnvSpec): Iterable<string> | undefined {
  return factories.get(spec.kind)?.vocabulary?.(spec);
}

export function envKinds(): string[] {
  return [...factories.keys()].sort();
}

export function createEnv(spec: EnvSpec, opts: EnvFactoryOptions): EnvAdapter {
  const f = factories.get(spec.kind);
  if (!f) {
    throw new EnvConfigError(
      `no environment of kind "${spec.kind}" is available to the runtime`, spec.kind,
      `known kinds: ${envKinds().join(", ") || "(none)"}`,
    );
  }
  return f.create(spec, opts);
}

// Built-in environments.
registerEnv("texthouse", {
  create: (spec) => new TexthouseEnv({ maxTurns: spec.maxTurns, ...(spec.params.expert !== undefined ? { expert: spec.params.expert as TexthouseExpert } : {}) }),
  vocabulary: () => texthouseVocabulary(),
});
// Real environments (runtime/envs/{scienceworld,twx,agentgym}; bridges/ holds their Python side).
// scienceworld with a `server` goes through an AgentGym sciworld server instead of the stdio bridge.
registerEnv("scienceworld", {
  create: (spec) => (spec.server ? agentGymFromSpec("sciworld", spec) : scienceWorldFromSpec(spec)),
  vocabulary: () => bridgeVocabulary("scienceworld"),
});
registerEnv("textworld_express", { create: (spec) => textWorldExpressFromSpec(spec), vocabulary: () => bridgeVocabulary("textworld_express") });
registerEnv("alfworld", { create: (spec) => agentGymFromSpec("alfworld", spec) });
registerEnv("webshop", { create: (spec) => agentGymFromSpec("webshop", spec) });
registerEnv("sciworld", { create: (spec) => agentGymFromSpec("sciworld", spec) });
registerEnv("textcraft", { create: (spec) => agentGymFromSpec("textcraft", spec) });
