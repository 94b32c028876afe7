/**
 * A texthouse world description (`WorldSpec`, plain JSON) and its compiled static form (`WorldModel`):
 * names, types, affordances and precomputed command strings as flat arrays, so the hot paths
 * (step, admissible, planner) index arrays instead of looking anything up by name.
 */
import {
  APPLIANCE_FOR_TASK, LAMP_TYPE, objectType, receptacleType,
  type ApplianceRole, type TaskType,
} from "./catalog.js";

export interface GoalSpec {
  readonly task: TaskType;
  /** Object type, e.g. "mug". */
  readonly object: string;
  /** Receptacle type, e.g. "coffeemachine"; "desklamp" for look_at_obj_in_light. */
  readonly target: string;
}

/** A whole task: layout, initial object placement and goal. Receptacles are numbered per type in order. */
export interface WorldSpec {
  readonly id: string;
  readonly template: string;
  readonly receptacles: readonly string[];
  /**
   * Objects by type with the index (into `receptacles`) of where each starts. `name` overrides the
   * printed name (default: numbered per type in order) — the observable expert's belief worlds hold
   * only the objects seen so far and keep their names ("mug 2" without a "mug 1").
   */
  readonly objects: readonly { readonly type: string; readonly at: number; readonly name?: string }[];
  readonly goal: GoalSpec;
}

export const APPLIANCE_CLEAN = 1;
export const APPLIANCE_HEAT = 2;
export const APPLIANCE_COOL = 3;
const ROLE_CODE: Record<ApplianceRole, number> = { clean: APPLIANCE_CLEAN, heat: APPLIANCE_HEAT, cool: APPLIANCE_COOL };

/** Object flag bits. */
export const FLAG_CLEAN = 1;
export const FLAG_HOT = 2;
export const FLAG_COOL = 4;
export const FLAG_ON = 8;

export interface WorldModel {
  readonly spec: WorldSpec;
  readonly goalText: string;
  readonly nRec: number;
  readonly nObj: number;
  readonly recName: readonly string[];
  /** Index of the receptacle type name in `typeNames` (for symmetry keys). */
  readonly recTypeId: Int16Array;
  readonly recOpenable: Uint8Array;
  /** 0 none, else APPLIANCE_* */
  readonly recAppliance: Uint8Array;
  readonly recPrep: readonly ("in" | "on")[];
  readonly objName: readonly string[];
  readonly objTypeName: readonly string[];
  readonly objPickup: Uint8Array;
  /** Bit mask of the appliance codes the object affords: 1 << APPLIANCE_*. */
  readonly objAffords: Uint8Array;
  readonly objIsLamp: Uint8Array;
  readonly objInitialAt: Int16Array;
  /** 1 for objects of the goal's object type. */
  readonly objRelevant: Uint8Array;
  /** 1 for receptacles of the goal's target type. */
  readonly recIsTarget: Uint8Array;
  /** The appliance code the goal needs (0 for none). */
  readonly goalAppliance: number;
  /** The flag the goal needs on the placed object (0 for none). */
  readonly goalFlag: number;
  readonly hasLamp: boolean;
  // Precomputed command strings.
  readonly cmdGoto: readonly string[];
  readonly cmdOpen: readonly string[];
  readonly cmdClose: readonly string[];
  readonly cmdExamineRec: readonly string[];
  readonly cmdExamineObj: readonly string[];
  readonly cmdUse: readonly string[];
}

/** The goal sentence in ALFWorld's phrasing ("put a clean mug in coffeemachine"). */
export function goalSentence(goal: GoalSpec): string {
  if (goal.task === "look_at_obj_in_light") return `look at ${goal.object} under the ${LAMP_TYPE}`;
  const prep = receptacleType(goal.target).preposition;
  const adjective: Partial<Record<TaskType, string>> = {
    pick_clean_then_place_in_recep: "clean ", pick_heat_then_place_in_recep: "hot ", pick_cool_then_place_in_recep: "cool ",
  };
  if (goal.task === "pick_two_obj_and_place") return `put two ${goal.object} ${prep} ${goal.target}`;
  return `put a ${adjective[goal.task] ?? ""}${goal.object} ${prep} ${goal.target}`;
}

function numbered(types: readonly string[]): string[] {
  const counts = new Map<string, number>();
  return types.map((type) => {
    const n = (counts.get(type) ?? 0) + 1;
    counts.set(type, n);
    return `${type} ${n}`;
  });
}

/** Compiles a spec; throws a clear error when the spec is inconsistent. */
export function compileWorld(spec: WorldSpec): WorldModel {
  const nRec = spec.receptacles.length;
  const nObj = spec.objects.length;
  if (nRec === 0) throw new Error(`texthouse ${spec.id}: a world needs at least one receptacle`);
  if (nRec > 1000 || nObj > 1000) throw new Error(`texthouse ${spec.id}: at most 1000 receptacles and 1000 objects`);
  const recTypes = spec.receptacles.map(receptacleType);
  const typeNames = [...new Set(spec.receptacles)];
  const recName = numbered(spec.receptacles);
  const objName = numbered(spec.objects.map((x) => x.type)).map((n, i) => spec.objects[i]!.name ?? n);
  const objTypes = spec.objects.map((x) => objectType(x.type));
  const goalAppliance = (() => {
    const role = APPLIANCE_FOR_TASK[spec.goal.task];
    return role === undefined ? 0 : ROLE_CODE[role];
  })();
  const goalFlag = goalAppliance === APPLIANCE_CLEAN ? FLAG_CLEAN : goalAppliance === APPLIANCE_HEAT ? FLAG_HOT
    : goalAppliance === APPLIANCE_COOL ? FLAG_COOL : 0;
  const objInitialAt = Int16Array.from(spec.objects.map((x, i) => {
    if (!Number.isInteger(x.at) || x.at < 0 || x.at >= nRec) {
      throw new Error(`texthouse ${spec.id}: object ${objName[i]} starts at receptacle index ${x.at}, which does not exist`);
    }
    return x.at;
  }));
  if (spec.goal.task === "look_at_obj_in_light") {
    if (!objTypes.some((x) => x.name === LAMP_TYPE)) throw new Error(`texthouse ${spec.id}: a look_at task needs a desklamp`);
  } else {
    receptacleType(spec.goal.target);
    if (!spec.receptacles.includes(spec.goal.target)) {
      throw new Error(`texthouse ${spec.id}: the goal target "${spec.goal.target}" is not in the layout`);
    }
  }
  objectType(spec.goal.object);
  return {
    spec, goalText: goalSentence(spec.goal), nRec, nObj, recName,
    recTypeId: Int16Array.from(spec.receptacles.map((x) => typeNames.indexOf(x))),
    recOpenable: Uint8Array.from(recTypes.map((x) => (x.openable ? 1 : 0))),
    recAppliance: Uint8Array.from(recTypes.map((x) => (x.appliance === undefined ? 0 : ROLE_CODE[x.appliance]))),
    recPrep: recTypes.map((x) => x.preposition),
    objName, objTypeName: objTypes.map((x) => x.name),
    objPickup: Uint8Array.from(objTypes.map((x) => (x.name === LAMP_TYPE ? 0 : 1))),
    objAffords: Uint8Array.from(objTypes.map((x) =>
      (x.cleanable ? 1 << APPLIANCE_CLEAN : 0) | (x.heatable ? 1 << APPLIANCE_HEAT : 0) | (x.coolable ? 1 << APPLIANCE_COOL : 0))),
    objIsLamp: Uint8Array.from(objTypes.map((x) => (x.name === LAMP_TYPE ? 1 : 0))),
    objInitialAt,
    objRelevant: Uint8Array.from(objTypes.map((x) => (x.name === spec.goal.object ? 1 : 0))),
    recIsTarget: Uint8Array.from(spec.receptacles.map((x) => (x === spec.goal.target ? 1 : 0))),
    goalAppliance, goalFlag,
    hasLamp: objTypes.some((x) => x.name === LAMP_TYPE),
    cmdGoto: recName.map((x) => `go to ${x}`),
    cmdOpen: recName.map((x) => `open ${x}`),
    cmdClose: recName.map((x) => `close ${x}`),
    cmdExamineRec: recName.map((x) => `examine ${x}`),
    cmdExamineObj: objName.map((x) => `examine ${x}`),
    cmdUse: objName.map((x) => `use ${x}`),
  };
}
