import { type FillRate, fullBucket, refill, type TokenBucket, take } from "../../protocol/token-bucket.ts";
import type { Recorder, TenantRecorder } from "../recorder.ts";
import { burstRows } from "./reservation.ts";
import { flowOf, type TenantTable } from "./tenant-table.ts";

/**
 * A pool process's tenants: their flows (tenant-table.ts), each guaranteed tenant's reservation bucket
 * (reservation.ts), and each one's recorder, made once so that nothing on the request path looks a label up.
 * Admission (middleware/admit-in-time.ts) and every model version's batcher (batcher.ts) share it: a reservation
 * is the tenant's across the pool's models.
 */
export class TenantScheduler {
  readonly table: TenantTable;
  readonly #recorders: TenantRecorder[];
  readonly #buckets: (TokenBucket | undefined)[];
  /** How each flow's bucket fills in this process (rows per second, on the `nowUs` clock) and what it holds. */
  readonly #fills: FillRate[];

  /**
   * `processShare`: this process's share of the pool's reservations, 1 / `--workers` (node:cluster hands the
   * pool's connections to its workers in turn, so each sees that share of every tenant's traffic).
   */
  constructor(table: TenantTable, recorder: Recorder, maxRequestRows: number, nowUs: number, processShare = 1) {
    this.table = table;
    this.#recorders = table.flows.map((f) => recorder.tenant(f.name, f.class, f.reservedRowsPerS));
    this.#fills = table.flows.map((f) => {
      const perS = f.reservedRowsPerS * processShare;
      return { perS, burst: burstRows(perS, maxRequestRows), unitsPerS: 1e6 };
    });
    this.#buckets = table.flows.map((f, i) =>
      f.class === "guaranteed" ? fullBucket(this.#fills[i]!.burst, nowUs) : undefined,
    );
  }

  /** The flow of a call's `x-edgecascade-tenant` header (400 for a malformed one). */
  flowOf(header: string | undefined): number {
    return flowOf(this.table, header);
  }

  weight(flow: number): number {
    return this.table.flows[flow]!.weight;
  }

  recorder(flow: number): TenantRecorder {
    return this.#recorders[flow]!;
  }

  /** Whether a call of this flow would run within its reservation now, for admission (before its rows are known). */
  withinReservation(flow: number, nowUs: number): boolean {
    const bucket = this.#fresh(flow, nowUs);
    return bucket !== undefined && bucket.tokens >= 1;
  }

  /** Take `rows` from the flow's reservation: true when they run within it, false when they run as best-effort. */
  reserve(flow: number, rows: number, nowUs: number): boolean {
    const bucket = this.#fresh(flow, nowUs);
    if (bucket === undefined) return false;
    const taken = take(bucket, rows);
    this.#buckets[flow] = taken.bucket;
    return taken.ok;
  }

  #fresh(flow: number, nowUs: number): TokenBucket | undefined {
    const bucket = this.#buckets[flow];
    if (bucket === undefined) return undefined;
    const refilled = refill(bucket, this.#fills[flow]!, nowUs);
    this.#buckets[flow] = refilled;
    return refilled;
  }
}
