/**
 * The shapes of AgentGym env-server answers (reference §1.2), as zod schemas: what each route must
 * answer for the adapter to use it. Optional lists may be absent or null (servers differ); a value
 * of the wrong type is a malformed answer. Unknown keys are allowed and never walked, so a deeply
 * nested extra value costs nothing. Text must be text (no lone UTF-16 surrogate: an inference server
 * would refuse the prompt, or a tokenizer fail, far from the cause); env ids must be integers (they
 * are sent back); rewards must lie in the env's range (ALFWorld's float(won), WebShop's and
 * TextCraft's 0…1; SciWorld's score, -100 on a failed task, up to 100). `parseAnswer` turns a
 * mismatch into a retryable EnvError that names the server, the route and the first wrong field —
 * the engine retries the episode on a fresh instance and stops the run cleanly if the server keeps
 * answering wrongly.
 */
import { z } from "zod";
import { EnvError } from "../env.js";
import { preview, type AgentGymHttp } from "./http.js";

const num = z.number().refine(Number.isFinite, "expected a finite number");
const within = (lo: number, hi: number, what: string) => num.refine((v) => v >= lo && v <= hi, `expected ${what} from ${lo} to ${hi}`);
const reward01 = within(0, 1, "a reward");

/** The index of the first lone surrogate of `s`, or -1. With the `u` flag a paired surrogate is one
 *  code point, so the class matches lone ones only. */
export function loneSurrogateAt(s: string): number {
  return s.search(/[\uD800-\uDFFF]/u);
}

const text = z.string().superRefine((s, ctx) => {
  const at = loneSurrogateAt(s);
  if (at >= 0) ctx.addIssue({ code: "custom", message: `a lone surrogate (U+${s.charCodeAt(at).toString(16).toUpperCase()}) at character ${at}, which is not text` });
});
/** A list of strings, absent or null where the server has none. */
const strList = z.array(text).nullish();

/** An env id is sent back on every call: an integer JSON keeps exactly. */
export const envId = z.number().refine(Number.isSafeInteger, "expected an integer env id");

export const CreateAnswer = z.looseObject({ id: envId });
export const AlfworldReset = z.looseObject({ observation: text, task_type: z.unknown().optional(), available_actions: strList });
export const AlfworldStep = z.looseObject({ observation: text, reward: reward01, done: z.boolean(), available_actions: strList });
export const WebshopReset = z.tuple([text], z.unknown());
export const WebshopAvailable = z.looseObject({ has_search_bar: z.boolean().nullish(), clickables: strList });
export const WebshopStep = z.looseObject({ state: text, reward: reward01, done: z.boolean() });
export const SciworldReset = z.looseObject({ task_description: text, observation: text });
export const SciworldStep = z.looseObject({ observation: text, score: within(-100, 100, "a score"), done: z.boolean() });
export const TextcraftReset = z.looseObject({ observation: text });
export const TextcraftStep = z.looseObject({ observation: text, reward: reward01, done: z.boolean() });

/** Validates a server answer; a malformed one is a retryable EnvError naming the server, route and field. */
export function parseAnswer<S extends z.ZodType>(http: AgentGymHttp, route: string, schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const i = r.error.issues[0]!;
  const at = i.path.length ? i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("") : "the answer";
  const { kind } = http.opts;
  throw new EnvError(`${kind} server ${http.base}: ${route} answered a malformed value: ${at}: ${i.message} (got ${preview(body)})`, kind);
}
