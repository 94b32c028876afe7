/**
 * The shapes of bridge results (bridges/tcod_bridges/*_bridge.py), as zod schemas: what each op must
 * answer for the adapter to use it. A bridge is a separate program (a fake, an older tcod_bridges, a
 * package that changed under it), so its answers are checked like a server's: a value of the wrong
 * type or a missing field is a retryable EnvError naming the bridge, the op and the first wrong field,
 * never a TypeError of tcod or a string summed as a reward. Unknown keys are allowed.
 */
import { z } from "zod";
import { EnvError } from "../env.js";
import { preview } from "../agentgym/http.js";

const num = z.number().refine(Number.isFinite, "expected a finite number");
const strList = z.array(z.string());

export const TaskIds = strList;
export const Actions = strList;
/** ScienceWorld's compact action list (the official prompt's templates and objects in view). */
const compact = { actionTemplates: strList.optional(), objects: strList.optional() };
export const ResetResult = z.looseObject({ task: z.string(), text: z.string(), admissible: strList, ...compact });
export const StepResult = z.looseObject({
  observation: z.string(), reward: num, done: z.boolean(), won: z.boolean(), score: num.optional(),
  admissible: strList, invalid: z.boolean().optional(), ...compact,
});

/** Validates a bridge result; a malformed one is a retryable EnvError naming the op and field. */
export function parseResult<S extends z.ZodType>(kind: string, op: string, schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const i = r.error.issues[0]!;
  const at = i.path.length ? i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("") : "the result";
  throw new EnvError(`${kind} bridge: ${op} answered a malformed value: ${at}: ${i.message} (got ${preview(value)})`, kind);
}
