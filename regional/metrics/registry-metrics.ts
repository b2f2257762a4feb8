import { Counter, Gauge, type Registry } from "prom-client";
import type { RegistryRecorder } from "../recorder.ts";

/** The model registry's series (regional/registry/): reads, refusals, when it was last read, revisions followed. */
export function registryMetrics(common: { registers: Registry[] }): (registry: string) => RegistryRecorder {
  const registryPolls = new Counter({
    name: "edgecascade_registry_polls_total",
    help: "Reads of the model registry's served states, by outcome: unchanged, changed (and applied), failed (the registry could not be read; the versions loaded keep serving).",
    labelNames: ["outcome"],
    ...common,
  });
  const registryRefusals = new Counter({
    name: "edgecascade_registry_refusals_total",
    help: "Registry objects refused before anything loaded them: a file whose checksum or signature fails, a config or served state that does not parse.",
    labelNames: ["model", "reason"],
    ...common,
  });
  const registryLastRead = new Gauge({
    name: "edgecascade_registry_last_read_timestamp_seconds",
    help: "When this pool last read the model registry successfully (Unix seconds); only pools started with --registry have it.",
    labelNames: ["registry"],
    aggregator: "min",
    ...common,
  });
  const registryRevision = new Gauge({
    name: "edgecascade_registry_served_revision",
    help: "The revision of each model's served state this pool follows.",
    labelNames: ["model"],
    aggregator: "min",
    ...common,
  });
  return (registry) => ({
    poll(outcome) {
      registryPolls.inc({ outcome });
      if (outcome !== "failed") registryLastRead.set({ registry }, Date.now() / 1000);
    },
    refused: (model, reason) => registryRefusals.inc({ model, reason }),
    following: (model, revision) => registryRevision.set({ model }, revision),
  });
}
