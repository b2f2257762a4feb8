import type { ServedBy } from "../../protocol/types.ts";

/** One model's requests in this isolate: answered, by the tier that answered, and refused or failed. */
export interface ModelCounts {
  answered: number;
  cache: number;
  edge: number;
  regional: number;
  degraded: number;
  /** Answered with a 4xx after the model was named (bad rows, forbidden, rate limited). */
  refused: number;
  /** Answered with a 5xx (no region and no edge variant, say). */
  failed: number;
  /** Runs of its edge variant that failed, each logged with its reason (the request went on without it). */
  edgeFailed: number;
}

/** One tenant's requests in this isolate: answered per model, and refusals by status. */
export interface TenantCounts {
  answered: number;
  models: Record<string, number>;
  refused: Record<string, number>;
}

export interface CountsSnapshot {
  /** Unix ms since when this isolate counts. */
  since: number;
  models: Record<string, ModelCounts>;
  tenants: Record<string, TenantCounts>;
}

const tierOf = (servedBy: ServedBy): "cache" | "edge" | "regional" | "degraded" =>
  servedBy.startsWith("regional:") ? "regional" : (servedBy as "cache" | "edge" | "degraded");

/**
 * Per-model and per-tenant request counts of one isolate (Workers keep no state across isolates: these are a
 * sample of the traffic, not totals). Tenants are the configured API keys' (plus `anonymous` without keys),
 * models the bundled ones, so both maps stay as small as the configuration.
 */
export class RequestCounts {
  readonly since: number;
  readonly #models = new Map<string, ModelCounts>();
  readonly #tenants = new Map<string, TenantCounts>();

  constructor(models: readonly string[], now: number) {
    this.since = now;
    for (const name of models) {
      this.#models.set(name, {
        answered: 0,
        cache: 0,
        edge: 0,
        regional: 0,
        degraded: 0,
        refused: 0,
        failed: 0,
        edgeFailed: 0,
      });
    }
  }

  #tenant(name: string): TenantCounts {
    let counts = this.#tenants.get(name);
    if (!counts) {
      counts = { answered: 0, models: {}, refused: {} };
      this.#tenants.set(name, counts);
    }
    return counts;
  }

  /** A request for `model` by `tenant` was answered by `servedBy`. */
  answered(model: string, tenant: string, servedBy: ServedBy): void {
    const m = this.#models.get(model);
    if (m) {
      m.answered++;
      m[tierOf(servedBy)]++;
    }
    const t = this.#tenant(tenant);
    t.answered++;
    t.models[model] = (t.models[model] ?? 0) + 1;
  }

  /** A request ended with an error `status`; `model` and `tenant` when they were known by then. */
  failed(model: string | undefined, tenant: string | undefined, status: number): void {
    const m = model === undefined ? undefined : this.#models.get(model);
    if (m) {
      if (status >= 500) m.failed++;
      else m.refused++;
    }
    if (tenant !== undefined) {
      const t = this.#tenant(tenant);
      t.refused[status] = (t.refused[status] ?? 0) + 1;
    }
  }

  /** A run of `model`'s edge variant failed. */
  edgeFailed(model: string): void {
    const m = this.#models.get(model);
    if (m) m.edgeFailed++;
  }

  /** The counts of the models and tenants a caller may see (everything when `visible` allows it all). */
  snapshot(visible: { model: (name: string) => boolean; tenant: (name: string) => boolean }): CountsSnapshot {
    const pick = <T>(map: Map<string, T>, keep: (name: string) => boolean) =>
      Object.fromEntries([...map].filter(([name]) => keep(name)).map(([name, c]) => [name, structuredClone(c)]));
    return {
      since: this.since,
      models: pick(this.#models, visible.model),
      tenants: pick(this.#tenants, visible.tenant),
    };
  }
}
