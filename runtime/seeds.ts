/** The run's deterministic seeds live in plan/seeds.ts (the Trinity plugin draws the same TurnOPD probe tasks). */
export * from "../plan/seeds.js";
