import { request } from "undici";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import type { WorkersAnswered } from "../../regional/model-control.ts";
import type { RolloutStatus } from "../../regional/rollout/rollouts.ts";
import type { Pool } from "./pools.ts";

/** A pool's rollout status as the admin endpoint answers it (with its workers, in a cluster). */
export type PoolStatus = RolloutStatus & WorkersAnswered;

/** What one pool answered: its status, or why it did not. */
export type PoolAnswer = { pool: Pool; ok: true; status: PoolStatus } | { pool: Pool; ok: false; error: string };

/** The admin endpoint of each pool: `GET` and `PUT /v2/repository/models/{model}/rollout` with ADMIN_TOKEN. */
export class PoolClient {
  readonly #token: string;
  readonly #timeoutMs: number;

  constructor(token: string, timeoutMs = 30_000) {
    this.#token = token;
    this.#timeoutMs = timeoutMs;
  }

  async #call(pool: Pool, model: string, method: "GET" | "PUT", body?: RolloutState): Promise<PoolAnswer> {
    try {
      const res = await request(`${pool.url}/v2/repository/models/${encodeURIComponent(model)}/rollout`, {
        method,
        headers: { authorization: `Bearer ${this.#token}`, "content-type": "application/json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      const text = await res.body.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return { pool, ok: false, error: `HTTP ${res.statusCode}: ${text.slice(0, 200)}` };
      }
      if (res.statusCode !== 200) {
        return { pool, ok: false, error: `HTTP ${res.statusCode}: ${(json as { error?: string }).error ?? text}` };
      }
      return { pool, ok: true, status: json as PoolStatus };
    } catch (err) {
      return { pool, ok: false, error: (err as Error).message };
    }
  }

  /** The models a pool serves (its repository index), or undefined when it cannot be read. */
  async models(pool: Pool): Promise<string[] | undefined> {
    try {
      const res = await request(`${pool.url}/v2/repository/index`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.#token}` },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return undefined;
      }
      const entries = (await res.body.json()) as { name: string }[];
      return [...new Set(entries.map((e) => e.name))];
    } catch {
      return undefined;
    }
  }

  status(pools: readonly Pool[], model: string): Promise<PoolAnswer[]> {
    return Promise.all(pools.map((p) => this.#call(p, model, "GET")));
  }

  put(pools: readonly Pool[], state: RolloutState): Promise<PoolAnswer[]> {
    return Promise.all(pools.map((p) => this.#call(p, state.model, "PUT", state)));
  }
}
