import { request } from "undici";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import type { WorkersAnswered } from "../../regional/model-control.ts";
import type { RolloutStatus } from "../../regional/rollout/rollouts.ts";
import type { Pool } from "./pools.ts";

/** A pool's rollout status as the admin endpoint answers it (with its workers, in a cluster). */
export type PoolStatus = RolloutStatus & WorkersAnswered;

/** What one pool answered: its status, or why it did not. */
export type PoolAnswer = { pool: Pool; ok: true; status: PoolStatus } | { pool: Pool; ok: false; error: string };

/**
 * Why a call to a pool failed, in words that tell a refusal from a pool never reached: `HTTP <status>: <the
 * pool's error>` (with a hint for 401/403) when it answered, else `unreachable (<code>): <message>` (DNS,
 * refused connection, timeout).
 */
export function failureReason(failure: { status: number; body: string } | { error: unknown }): string {
  if ("error" in failure) {
    const err = failure.error as NodeJS.ErrnoException;
    return `unreachable (${err.code ?? err.name}): ${err.message}`;
  }
  const { status, body } = failure;
  let said = body.slice(0, 200);
  try {
    said = (JSON.parse(body) as { error?: string }).error ?? said;
  } catch {
    // Not JSON (a proxy's page, say): its first bytes.
  }
  const hint = status === 401 || status === 403 ? " (is ADMIN_TOKEN the pools' admin token?)" : "";
  return `HTTP ${status}: ${said}${hint}`;
}

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
      if (res.statusCode !== 200)
        return { pool, ok: false, error: failureReason({ status: res.statusCode, body: text }) };
      try {
        return { pool, ok: true, status: JSON.parse(text) as PoolStatus };
      } catch {
        return { pool, ok: false, error: `HTTP 200 that is not JSON: ${text.slice(0, 200)}` };
      }
    } catch (err) {
      return { pool, ok: false, error: failureReason({ error: err }) };
    }
  }

  /** The models a pool serves (its repository index), or why it cannot be read. */
  async models(pool: Pool): Promise<{ ok: true; models: string[] } | { ok: false; error: string }> {
    try {
      const res = await request(`${pool.url}/v2/repository/index`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.#token}` },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) return { ok: false, error: failureReason({ status: res.statusCode, body: text }) };
      const entries = JSON.parse(text) as { name: string }[];
      return { ok: true, models: [...new Set(entries.map((e) => e.name))] };
    } catch (err) {
      return { ok: false, error: failureReason({ error: err }) };
    }
  }

  status(pools: readonly Pool[], model: string): Promise<PoolAnswer[]> {
    return Promise.all(pools.map((p) => this.#call(p, model, "GET")));
  }

  put(pools: readonly Pool[], state: RolloutState): Promise<PoolAnswer[]> {
    return Promise.all(pools.map((p) => this.#call(p, state.model, "PUT", state)));
  }
}
