import { UsageError } from "../../tools/cli/errors.ts";
import { defineTable } from "../../tools/cli/flags.ts";
import { parseTenantSpecs, type TenantSpec } from "../tenants/tenant-table.ts";

/** The batcher and admission: batch size and wait, queue bounds, and the tenants' reservations. */
export const ADMISSION_OPTIONS = defineTable({
  /** Most rows in one `session.run`, also capped by each model's `maxBatchSize`. */
  maxBatch: {
    flag: "max-batch",
    env: "REGIONAL_MAX_BATCH",
    type: "number",
    integer: true,
    min: 1,
    max: 4096,
    default: 64,
    placeholder: "ROWS",
    unit: "rows",
    help: "most rows per session.run, capped by the model's maxBatchSize",
  },
  /**
   * Microseconds a partial batch may wait for more rows once the model is busy (Triton's
   * `max_queue_delay_microseconds`). A request reaching an idle model never waits.
   */
  maxQueueDelayUs: {
    flag: "max-queue-delay-us",
    env: "REGIONAL_MAX_QUEUE_DELAY_US",
    type: "number",
    integer: true,
    min: 0,
    max: 10_000_000,
    default: 0,
    placeholder: "US",
    unit: "µs",
    help: "how long a partial batch may wait for more rows while the model is busy",
  },
  /** Requests waiting per model version before new ones are refused. */
  maxQueue: {
    flag: "max-queue",
    env: "REGIONAL_MAX_QUEUE",
    type: "number",
    integer: true,
    min: 1,
    max: 1_000_000,
    default: 256,
    placeholder: "N",
    unit: "requests",
    help: "requests waiting per model version before refusing",
  },
  /** Status for a full queue: 429 (with Retry-After) or 503, as Triton answers. */
  queueFullStatus: {
    flag: "queue-full-status",
    env: "REGIONAL_QUEUE_FULL_STATUS",
    type: "parsed",
    placeholder: "429|503",
    default: 429,
    help: "status for a full queue, with Retry-After either way",
    parse(raw): 429 | 503 {
      if (raw === "429" || raw === "503") return Number(raw) as 429 | 503;
      throw new UsageError(`must be 429 or 503, got "${raw}"`);
    },
  },
  /**
   * The pool's tenants (regional/tenants/): `NAME=guaranteed:ROWS_PER_S` reserves that many rows per second of the
   * pool for the edge tenant NAME; `NAME=best-effort[:WEIGHT]` shares what reservations leave, by weight. `direct`
   * (calls without a tenant: gRPC, direct API callers) and `other` (edge tenants not declared) are best-effort of
   * weight 1 unless declared.
   */
  tenants: {
    env: "REGIONAL_TENANTS",
    type: "parsed",
    placeholder: "T=CLASS[:N],...",
    default: [],
    defaultText: "none",
    help: "tenants: NAME=guaranteed:ROWS_PER_S (reserved) or NAME=best-effort[:WEIGHT], comma-separated; direct and other name the callers without a tenant and the undeclared ones",
    parse(raw): TenantSpec[] {
      try {
        return parseTenantSpecs(raw);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
    },
  },
  /**
   * With tenants declared: the share of its deadline a best-effort request may expect to wait, in percent; the rest
   * is kept for reservations, so under overload best-effort work is refused first.
   */
  bestEffortWaitPercent: {
    flag: "best-effort-wait-percent",
    env: "REGIONAL_BEST_EFFORT_WAIT_PERCENT",
    type: "number",
    integer: true,
    min: 1,
    max: 100,
    default: 50,
    placeholder: "PCT",
    help: "with tenants: percent of its deadline a best-effort request may wait; the rest is kept for reservations",
  },
});
