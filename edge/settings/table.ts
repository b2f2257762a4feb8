import { defineTable } from "../../tools/cli/table.ts";
import { CACHE_SETTINGS } from "./cache.ts";
import { CLIENT_SETTINGS } from "./clients.ts";
import { MODEL_SETTINGS } from "./models.ts";
import { OBSERVABILITY_SETTINGS } from "./observability.ts";
import { ROUTING_SETTINGS } from "./routing.ts";
import { SIMULATION_SETTINGS } from "./simulation.ts";

/**
 * Everything the Worker reads from its variables and secrets, one row each (tools/cli/table.ts): the variable,
 * its type and bounds, default, unit and meaning, grouped by concern in this folder (in docs/edge.md's order).
 * The options' types, the `Env` type of the vars, the parsing and docs/edge.md's and README's tables (env.test.ts)
 * come from it. Vars arrive as strings from secrets and `--var`, or as JSON values from wrangler.toml; both read
 * alike. Two defaults follow other rows (`MAX_BUDGET_MS`, `BREAKER_MAX_COOLDOWN_MS`) and some values are checked
 * against the bundle and the bindings: edge/env.ts's `parseEnv` does that after the table, whatever the rows'
 * order. The rows marked `simulation` are for local stacks and tests only, never a deployed Worker (docs/edge.md,
 * "Simulation"). Free of Worker types, so `npm run deploy` reads an environment's vars with it too.
 */
export const EDGE_SETTINGS = defineTable({
  ...ROUTING_SETTINGS,
  ...CACHE_SETTINGS,
  ...CLIENT_SETTINGS,
  ...MODEL_SETTINGS,
  ...OBSERVABILITY_SETTINGS,
  ...SIMULATION_SETTINGS,
});
