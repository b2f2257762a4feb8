import { ModelNotReady } from "../protocol/errors.ts";
import type { ModelConfig } from "../protocol/model-config.ts";
import { nowUs } from "./clock.ts";
import { LoadSlots, MemoryBudget, withinDeadline } from "./demand-loads.ts";
import { versionBytes } from "./memory-budget.ts";
import type { ModelLifecycle } from "./model-lifecycle.ts";
import { waitsForLoad } from "./readiness-policy.ts";
import type { ModelMemory } from "./recorder.ts";

/** Loads started by requests that may run at once in one worker (more wait their turn, within their deadline). */
export const DEMAND_LOAD_SLOTS = 2;
/** Loads whose durations say how long the next will take (`waitsForLoad`). */
const RECENT_LOADS = 16;

/** What on-demand loading needs of the repository. */
export interface OnDemandContext {
  /** The memory the loaded versions may be counted as (`--model-memory-mb`). */
  budgetBytes: number;
  /** Every model the repository knows. */
  models: () => Iterable<ModelLifecycle>;
  /** A model's config.json as it is on disk now (its size for the room a load needs), kept for its metadata. */
  readConfig: (name: string) => Promise<ModelConfig>;
}

/**
 * The pool's loads under `--load-policy on-demand` (the repository's manager calls them; the pure rules are
 * memory-budget.ts, protocol/memory-room.ts and readiness-policy.ts): every load made room for within the memory
 * budget first, and the loads requests start: one per model at a time, shared by every request waiting for it,
 * in one of `DEMAND_LOAD_SLOTS`, each request waiting within its deadline or answered 503 at once when that is
 * shorter than loads take here.
 */
export class OnDemandLoads {
  readonly budget: MemoryBudget;
  readonly #context: OnDemandContext;
  readonly #slots = new LoadSlots(DEMAND_LOAD_SLOTS);
  /** Each model's load started by requests, shared by every request waiting for it. */
  readonly #demanded = new Map<string, Promise<void>>();
  /** Recent loads started by requests, in ms (the last `RECENT_LOADS`). */
  readonly #loadMs: number[] = [];

  constructor(context: OnDemandContext) {
    this.#context = context;
    this.budget = new MemoryBudget(context.budgetBytes, context.models);
  }

  /**
   * `load` run with room made for the version it brings (the config re-read for its size; the load itself reads
   * it again and fails with the reason if it cannot). A config that cannot be read makes no room: the load then
   * fails on it.
   */
  async withRoom<T>(model: ModelLifecycle, version: string | undefined, load: () => Promise<T>): Promise<T> {
    const config = await this.#context.readConfig(model.name).catch(() => undefined);
    const entry = config?.versions[version ?? config.version];
    if (!config || !entry) return load();
    const release = await this.budget.room(model.name, versionBytes(entry.bytes));
    try {
      return await load();
    } finally {
      release();
    }
  }

  /**
   * A request's wait for `model`'s load on demand (started, or joined), within its deadline (`deadlineUs`,
   * `nowUs` clock: 504 past it, the load goes on). Throws 503 at once, the load going on for the requests after
   * it, when the deadline leaves less than the longest of the recent loads (`waitsForLoad`): a caller with a
   * short deadline (the edge's) is answered now rather than cut off by its own deadline as often as not.
   */
  waitFor(model: ModelLifecycle, deadlineUs: number): Promise<void> {
    const loading = this.start(model).catch((err: Error) => {
      throw err instanceof ModelNotReady
        ? err
        : new ModelNotReady(`model "${model.name}" is not ready: ${err.message}`, 1);
    });
    const leftMs = (deadlineUs - nowUs()) / 1000;
    const expectedMs = this.#loadMs.length === 0 ? undefined : Math.max(...this.#loadMs);
    if (!waitsForLoad(leftMs, expectedMs)) {
      loading.catch(() => {}); // its failure is the model's, for the requests after this one
      throw new ModelNotReady(
        `model "${model.name}" is loading on demand (loads take about ${Math.round(expectedMs!)} ms here, ` +
          `more than the ${Math.max(0, Math.round(leftMs))} ms this request may wait); retry shortly`,
        1,
      );
    }
    return withinDeadline(loading, deadlineUs, model.name);
  }

  /** The memory and model counts `/metrics` and readiness report; the budget only when it applies (`onDemand`). */
  memory(onDemand: boolean): ModelMemory {
    let loaded = 0;
    let available = 0;
    for (const m of this.#context.models()) {
      if (m.serves) loaded++;
      if (!m.view().unloaded) available++;
    }
    const budgetBytes = onDemand ? this.budget.budgetBytes : 0;
    return { residentBytes: this.budget.usedBytes(), budgetBytes, loaded, available };
  }

  /**
   * The load requests start for a model that does not serve (or the one under way). Fails as the load did
   * (`LoadFailed`, logged and counted by the lifecycle) or with the 503 for no room within the budget.
   */
  start(model: ModelLifecycle): Promise<void> {
    let loading = this.#demanded.get(model.name);
    if (loading) return loading;
    loading = this.#slots
      .run(async () => {
        if (model.serves) return;
        const started = performance.now();
        await this.withRoom(model, undefined, () => model.load(undefined, "demand"));
        this.#loadMs.push(performance.now() - started);
        if (this.#loadMs.length > RECENT_LOADS) this.#loadMs.shift();
      })
      .finally(() => this.#demanded.delete(model.name));
    this.#demanded.set(model.name, loading);
    return loading;
  }
}
