/** zod schemas of expression trees (plan/expr.ts holds the types and evaluators, free of zod). */
import { z } from "zod";
import { FEEDBACK_OPS, LEVELS, POINTWISE_OPS, TURN_REDUCTIONS, VARIABLES, type ExprDef, type ExprTree, type ValueRef, type VariableName } from "./expr.js";

// Discriminated by `op`, so a bad tree names what is wrong (an unknown operator or variable, at its
// path) rather than zod's bare "Invalid input" for a union no member of which matched.
export const ExprTreeSchema: z.ZodType<ExprTree> = z.lazy(() =>
  z.discriminatedUnion("op", [
    z.object({ op: z.literal("const"), value: z.number() }).strict(),
    z.object({ op: z.literal("var"), name: z.enum(Object.keys(VARIABLES) as [VariableName, ...VariableName[]]) }).strict(),
    z.object({ op: z.enum([...POINTWISE_OPS, ...TURN_REDUCTIONS, ...FEEDBACK_OPS]), args: z.array(ExprTreeSchema) }).strict(),
    z.object({ op: z.literal("ext"), fn: z.string(), args: z.array(ExprTreeSchema) }).strict(),
  ]),
);

export const ExprDefSchema: z.ZodType<ExprDef> = z.object({
  level: z.enum(LEVELS),
  /** Unit of the value, e.g. "turns", "steps", "" for dimensionless. Informational for the runtime. */
  unit: z.string(),
  tree: ExprTreeSchema,
  /** Where in the source this expression was written, "file:line:col", for `explain` and reports. */
  origin: z.string().optional(),
}).strict();

/** A plan field is either a folded constant or a reference to an expression in `plan.exprs`. */
export const ValueRefSchema: z.ZodType<ValueRef> = z.union([z.number(), z.object({ expr: z.string() }).strict()]);

