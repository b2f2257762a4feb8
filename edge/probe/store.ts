import { CACHE_ORIGIN } from "../cache/response-cache.ts";
import type { ProbeReport } from "./probe.ts";

/** Probe results older than this are ignored: the cron runs every minute, so five missed runs. */
export const PROBE_MAX_AGE_S = 300;
const KEY = `${CACHE_ORIGIN}/status/regions`;

/**
 * Where the scheduled probe leaves its results for the request isolates: the cron may run in another
 * isolate, so the report goes through the colo's Cache API, and each isolate re-reads it at most every
 * `memoMs` (default 5 s) so that requests do not pay a cache lookup each.
 */
export class ProbeStore {
  readonly #cache: Cache | undefined;
  readonly #memoMs: number;
  #memo: { report: ProbeReport | null; readAt: number } | undefined;

  constructor(cache: Cache | undefined, memoMs: number) {
    this.#cache = cache;
    this.#memoMs = memoMs;
  }

  async write(report: ProbeReport): Promise<void> {
    this.#memo = { report, readAt: report.at };
    if (!this.#cache) return;
    await this.#cache.put(
      new Request(KEY),
      new Response(JSON.stringify(report), {
        headers: { "content-type": "application/json", "cache-control": `max-age=${PROBE_MAX_AGE_S}` },
      }),
    );
  }

  /**
   * The latest report, if one younger than PROBE_MAX_AGE_S exists. Every request reads it first, so a
   * Cache API failure reads as no report (regions ordered by location and breakers alone) and is memoised
   * like a report, rather than failing the request.
   */
  async read(now: number): Promise<ProbeReport | null> {
    if (this.#memo && now - this.#memo.readAt < this.#memoMs) return this.#fresh(this.#memo.report, now);
    let report: ProbeReport | null = null;
    try {
      const hit = await this.#cache?.match(new Request(KEY));
      const body = (await hit?.json().catch(() => null)) as ProbeReport | null | undefined;
      if (body && typeof body.at === "number" && Array.isArray(body.regions)) report = body;
    } catch (err) {
      console.warn(`probe report lookup failed: ${(err as Error).message}`);
    }
    this.#memo = { report, readAt: now };
    return this.#fresh(report, now);
  }

  #fresh(report: ProbeReport | null, now: number): ProbeReport | null {
    return report && now - report.at < PROBE_MAX_AGE_S * 1000 ? report : null;
  }
}
