import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/flags.ts";

/** `--version-delay-ms digits@2=20`: every run of digits version 2 waits 20 ms first. */
export interface VersionDelay {
  model: string;
  version: string;
  ms: number;
}

/** Settings that make the pool worse on purpose, for tests and local stacks (`options.simulation`). */
export const SIMULATION_OPTIONS = defineTable({
  /** Milliseconds every inference request waits before it is handled: simulated network distance. */
  delayMs: {
    flag: "delay-ms",
    env: "REGIONAL_DELAY_MS",
    type: "number",
    integer: true,
    min: 0,
    max: 600_000,
    default: 0,
    placeholder: "MS",
    unit: "ms",
    simulation: true,
    help: "every inference request waits this long first: simulated network distance",
  },
  /**
   * Milliseconds every batch run waits before `session.run`, one run at a time: an accelerator whose batch latency
   * is fixed, so the pool's capacity is `--max-batch` rows per this (set by the device, not the shared CPU).
   */
  simulatedRunMs: {
    flag: "simulated-run-ms",
    env: "REGIONAL_SIMULATED_RUN_MS",
    type: "number",
    integer: true,
    min: 0,
    max: 10_000,
    default: 0,
    placeholder: "MS",
    unit: "ms",
    simulation: true,
    help: "every batch run waits this long first: a simulated accelerator whose capacity is --max-batch rows per MS",
  },
  /** Extra milliseconds every run of one model version takes (live and shadow), to make a slower candidate. */
  versionDelayMs: {
    flag: "version-delay-ms",
    env: "REGIONAL_VERSION_DELAY_MS",
    type: "parsed",
    placeholder: "M@V=MS,...",
    default: [],
    defaultText: "none",
    simulation: true,
    help: "every run of model M version V waits MS first, live or shadow: a slower rollout candidate",
    parse: (raw): VersionDelay[] =>
      raw
        .split(",")
        .filter((part) => part.trim() !== "")
        .map((part) => {
          const match = /^\s*([A-Za-z0-9_][\w.-]*)@(\d+)=(\d{1,6})\s*$/.exec(part);
          if (!match) throw new UsageError(`must be MODEL@VERSION=MS[,...] (e.g. digits@2=20), got "${part}"`);
          return { model: match[1]!, version: match[2]!, ms: Number(match[3]) };
        }),
  },
});
