import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { ModelMemory, Recorder } from "../recorder.ts";

/**
 * The series of models loaded on demand within the memory budget (docs/regional.md, *Load policies and the
 * memory budget*): load time by trigger, evictions, and the memory and model counts the repository reports,
 * read when scraped (each series says how workers add up).
 */
export function modelMemoryMetrics(common: {
  registers: Registry[];
}): Pick<Recorder, "modelLoadTime" | "modelEvicted" | "modelMemory"> {
  const loadDuration = new Histogram({
    name: "edgecascade_model_load_duration_seconds",
    help: "Successful model loads (file check, session, warm-up, fixture) by trigger: policy (at start, readiness), demand (a request), control (the load API, SIGHUP, a rollout), registry (the served version the model registry names).",
    labelNames: ["trigger"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ...common,
  });
  const evictions = new Counter({
    name: "edgecascade_model_evictions_total",
    help: "Serving versions evicted (least recently used) to make room within --model-memory-mb.",
    labelNames: ["model"],
    ...common,
  });
  let memory: (() => ModelMemory) | undefined;
  new Gauge({
    name: "edgecascade_model_resident_bytes",
    help: "Memory the loaded and retiring model versions are counted as (docs/regional.md, the memory budget); summed over workers.",
    ...common,
    collect() {
      if (memory) this.set(memory().residentBytes);
    },
  });
  new Gauge({
    name: "edgecascade_model_memory_budget_bytes",
    help: "--model-memory-mb in bytes, summed over workers; 0 with --load-policy all (no budget).",
    ...common,
    collect() {
      if (memory) this.set(memory().budgetBytes);
    },
  });
  new Gauge({
    name: "edgecascade_models_loaded",
    help: "Models with a version serving, summed over workers (a model served by two workers counts twice).",
    ...common,
    collect() {
      if (memory) this.set(memory().loaded);
    },
  });
  new Gauge({
    name: "edgecascade_models_available",
    help: "Models in the repository that a request may use (loaded or not; unloaded ones excluded).",
    aggregator: "max",
    ...common,
    collect() {
      if (memory) this.set(memory().available);
    },
  });
  return {
    modelLoadTime: (trigger, seconds) => loadDuration.observe({ trigger }, seconds),
    modelEvicted: (model) => evictions.inc({ model }),
    modelMemory(read) {
      memory = read;
    },
  };
}
