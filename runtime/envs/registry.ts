/**
 * Env kind → adapter factory. The engine creates one adapter per pool slot through this registry;
 * bin/compose.ts (the composition root) registers every kind this build ships; this file imports none.
 */
import type { EnvSpec } from "../../plan/schema.js";
import { EnvConfigError, type EnvAdapter } from "./env.js";

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
