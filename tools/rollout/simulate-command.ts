import { defineCommand } from "../cli/command.ts";
import { CONFIG_FLAGS, configOf } from "./config-flags.ts";
import { IDENTICAL, simulateMany } from "./simulate.ts";

export const simulate = defineCommand({
  name: "simulate",
  summary: "simulate whole rollouts (no pools): false rollback rate and requests per decision at given effects",
  usage: "npm run rollout -- simulate [--runs 1000] [--seed 1] [--requests-per-tick 100] [rollout options]",
  description: `Runs the controller's decisions on simulated counts for a candidate identical to the stable version, one
that disagrees on 4% of rows, one whose runs are the slowest of every block of shadow pairs, and one
failing 2% of runs.`,
  flags: {
    runs: { type: "number", placeholder: "N", default: 1000, help: "simulated rollouts per candidate" },
    seed: { type: "number", placeholder: "N", default: 1, help: "seed of the simulation" },
    "requests-per-tick": {
      type: "number",
      placeholder: "N",
      default: 100,
      help: "live requests between two reads of the controller",
    },
    "shadow-share": { type: "number", placeholder: "X", default: 1, help: "share of requests that get a shadow run" },
    ...CONFIG_FLAGS,
  },
  async run(values, _args, out) {
    const config = await configOf(values);
    const { runs, seed } = values;
    const traffic = { requestsPerTick: values["requests-per-tick"], shadowShare: values["shadow-share"] };
    out.log(
      `steps ${config.steps.join(" -> ")}%, alpha ${config.alpha}, beta ${config.beta}, min samples ${config.minSamples}; ${runs} rollouts each`,
    );
    out.log("candidate                           promoted  rolled back (by test)         mean requests  p95 requests");
    const scenarios = [
      ["identical to the stable version", IDENTICAL],
      ["disagrees on 4% of rows", { ...IDENTICAL, disagreement: 0.04 }],
      ["has every slowest run of its blocks", { ...IDENTICAL, slow: 1 }],
      ["fails 2% of runs", { ...IDENTICAL, errors: { stable: 0, candidate: 0.02 } }],
    ] as const;
    for (const [name, effects] of scenarios) {
      const s = simulateMany(config, effects, traffic, runs, seed);
      const by = Object.entries(s.byTest)
        .map(([t, n]) => `${t} ${n}`)
        .join(", ");
      out.log(
        `${name.padEnd(34)}  ${String(s.promoted).padStart(8)}  ${`${s.rolledBack}${by ? ` (${by})` : ""}`.padEnd(28)}  ${s.meanRequests.toFixed(0).padStart(13)}  ${String(s.p95Requests).padStart(12)}`,
      );
    }
    return 0;
  },
});
