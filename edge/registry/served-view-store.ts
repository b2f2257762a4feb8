import { asEdgeServedView, EDGE_SERVED_KEY, type EdgeServedView } from "../../protocol/registry/edge-view.ts";

/**
 * The registry's served state as every isolate reads it: one document in the `REGION_STATUS` KV namespace
 * (the one the region status check writes to), written by the cron (refresh.ts) and read by each isolate at most
 * once per `memoMs`. A read that fails reads as no news: the isolate keeps what it serves.
 */
export class ServedViewStore {
  readonly #kv: KVNamespace;
  readonly #memoMs: number;
  #memo: { view: EdgeServedView | null; readAt: number } | undefined;
  /** KV reads that failed (the isolate kept what it had). */
  failures = 0;

  constructor(kv: KVNamespace, memoMs: number) {
    this.#kv = kv;
    this.#memoMs = memoMs;
  }

  async write(view: EdgeServedView): Promise<void> {
    this.#memo = { view, readAt: view.at };
    await this.#kv.put(EDGE_SERVED_KEY, JSON.stringify(view));
  }

  /** The latest view; at once (no promise) while the memo is fresh. */
  read(now: number): EdgeServedView | null | Promise<EdgeServedView | null> {
    if (this.#memo && now - this.#memo.readAt < this.#memoMs) return this.#memo.view;
    return this.#readKv(now);
  }

  async #readKv(now: number): Promise<EdgeServedView | null> {
    let view = this.#memo?.view ?? null;
    try {
      view = asEdgeServedView(await this.#kv.get(EDGE_SERVED_KEY, "json")) ?? view;
    } catch (err) {
      this.failures++;
      console.warn(
        `registry: the served state could not be read from KV, serving what is loaded: ${(err as Error).message}`,
      );
    }
    this.#memo = { view, readAt: now };
    return view;
  }
}
