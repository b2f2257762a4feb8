import { defineTable } from "../../tools/cli/flags.ts";

/** Which models load without being asked for, within what memory, and on which worker (issue 31's load policies). */
export const MODEL_OPTIONS = defineTable({
  /**
   * Which models load without a request asking (regional/repository.ts): `all` loads every model at start and
   * keeps it; `on-demand` loads the pinned ones at start and every other on its first request, within
   * `--model-memory-mb`, evicting the least recently used; `auto` is `all` while every model's estimate fits the
   * budget, else `on-demand`.
   */
  loadPolicy: {
    flag: "load-policy",
    env: "REGIONAL_LOAD_POLICY",
    type: "string",
    choices: ["auto", "all", "on-demand"] as const,
    default: "auto",
    help: "all: every model at start; on-demand: pinned ones at start, the rest on first request within --model-memory-mb; auto: all while they fit the budget",
  },
  /** Models always loaded (in every worker) and never evicted under `on-demand`; each must be in the repository. */
  pinnedModels: {
    flag: "pinned-models",
    env: "REGIONAL_PINNED_MODELS",
    type: "list",
    placeholder: "M,...",
    defaultText: "none",
    help: "models loaded at start in every worker and never evicted (with on-demand)",
  },
  /**
   * Memory each worker's loaded models may be counted as under `on-demand` (the estimate of
   * regional/memory-budget.ts); a load past it first evicts the least recently used models.
   */
  modelMemoryMb: {
    flag: "model-memory-mb",
    env: "REGIONAL_MODEL_MEMORY_MB",
    type: "number",
    integer: true,
    min: 1,
    max: 1_048_576,
    default: 256,
    placeholder: "MB",
    unit: "MiB",
    help: "memory per worker for models loaded on demand; past it the least recently used are evicted",
  },
  /**
   * With `--workers` above 1 and models loaded on demand: `hashed` gives each model one owning worker (by
   * rendezvous hashing of its name), and the other workers hand its requests to that one; `every-worker` lets
   * each worker load what its own requests ask for. Pinned and explicitly loaded models are in every worker.
   */
  modelPlacement: {
    flag: "model-placement",
    env: "REGIONAL_MODEL_PLACEMENT",
    type: "string",
    choices: ["hashed", "every-worker"] as const,
    default: "hashed",
    help: "with --workers > 1 and on-demand: hashed (one owning worker per model, the others hand it requests) or every-worker",
  },
});
