import type { RegionStatusReport } from "./check.ts";

/** Reports older than this are ignored: the cron runs every minute, so five missed runs. */
export const REPORT_MAX_AGE_S = 300;
/** The report's key in the REGION_STATUS namespace (one namespace per deployed environment). */
export const REGION_STATUS_KEY = "regions";

/**
 * Where the cron leaves each region's readiness and served versions for every isolate: Workers KV
 * (`REGION_STATUS`), which every colo reads. Not the Cache API: Cron Triggers run on an underutilised machine
 * anywhere, and the Cache API is per data centre, so a report cached there would reach only the isolates of
 * the cron's colo. KV is eventually consistent (up to about a minute between colos), which suits a report
 * written every minute; each isolate rereads it at most every `memoMs` (default 5 s), so requests do not pay
 * a KV read each. Without the binding there is no shared report.
 */
export class RegionStatusStore {
  readonly #kv: KVNamespace | undefined;
  readonly #memoMs: number;
  #memo: { report: RegionStatusReport | null; readAt: number } | undefined;

  constructor(kv: KVNamespace | undefined, memoMs: number) {
    this.#kv = kv;
    this.#memoMs = memoMs;
  }

  async write(report: RegionStatusReport): Promise<void> {
    this.#memo = { report, readAt: report.at };
    await this.#kv?.put(REGION_STATUS_KEY, JSON.stringify(report), { expirationTtl: REPORT_MAX_AGE_S });
  }

  /**
   * The latest report, if one younger than REPORT_MAX_AGE_S exists. Every request reads it first, so a KV
   * failure reads as no report (regions ordered by location and breakers alone) and is memoised like a
   * report, rather than failing the request. While the memo is fresh the report comes at once, not as a
   * promise: every answer asks, and a promise and its await are garbage and a hop per request.
   */
  read(now: number): RegionStatusReport | null | Promise<RegionStatusReport | null> {
    if (this.#memo && now - this.#memo.readAt < this.#memoMs) return this.#fresh(this.#memo.report, now);
    return this.#readKv(now);
  }

  async #readKv(now: number): Promise<RegionStatusReport | null> {
    let report: RegionStatusReport | null = null;
    try {
      const body = (await this.#kv?.get(REGION_STATUS_KEY, "json")) as RegionStatusReport | null | undefined;
      if (body && typeof body.at === "number" && Array.isArray(body.regions)) report = body;
    } catch (err) {
      console.warn(`region status read failed: ${(err as Error).message}`);
    }
    this.#memo = { report, readAt: now };
    return this.#fresh(report, now);
  }

  #fresh(report: RegionStatusReport | null, now: number): RegionStatusReport | null {
    return report && now - report.at < REPORT_MAX_AGE_S * 1000 ? report : null;
  }
}
