/** The plan format this code reads and writes. Kept apart from the zod schema so that importing it is free. */
export const PLAN_SCHEMA_ID = "tcod.plan/2";
/** The previous format, converted on load (plan/convert.ts). */
export const PLAN_SCHEMA_V1 = "tcod.plan/1";
