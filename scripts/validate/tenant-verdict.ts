/**
 * The two-tenant overload's verdict (two-tenants.ts), pure: tenant A's SLO beside the run with A alone, tenant B's
 * answers, and whether anything was lost or mixed up.
 */

/** One tenant's requests in one phase. */
export interface TenantTally {
  sent: number;
  /**
   * By HTTP status; 0 for requests no answer came to (lost); `edge` for requests an isolate answered itself
   * (degraded, `tenant-shed`) without a call, within a region's Retry-After.
   */
  statuses: Record<string, number>;
  /** 429s by their `code` (`tenant_shed`, `overloaded`, `queue_full`). */
  refusals: Record<string, number>;
  /** 200s whose `id` or classes were not the request's own. */
  mixedUp: number;
  /** Latency of the 200s, ms. */
  p50Ms: number;
  p99Ms: number;
  /** Rows answered per second. */
  rowsPerS: number;
  /** The generator's own lateness sending them, p99, ms: what of the latency is the instrument's. */
  sendLagP99Ms: number;
}

/**
 * A's promise, the title: another tenant's flood does not move its p99 (at most `p99Ratio` times its p99
 * alone; the rest is this shared machine's noise between two phases) and it is answered (at least `successRate`
 * of its requests 200). Its p99 against its deadline is reported beside, not judged: on a machine shared with
 * other work, it moves between runs with nothing else running.
 */
export interface TenantSlo {
  p99Ratio: number;
  successRate: number;
  /** The deadline A's requests carry, ms. */
  deadlineMs: number;
}

/** One round: A alone, and A beside B's flood, measured back to back. */
export interface TenantRound {
  aAlone: TenantTally;
  aWithB: TenantTally;
  b: TenantTally;
}

export interface TwoTenantVerdict {
  /** A's p99 with B flooding over A's p99 alone: the median of the rounds' own ratios, and each round's. */
  p99Ratio: number;
  p99Ratios: number[];
  /** A's success rate with B flooding, and alone, over every round. */
  successWithB: number;
  successAlone: number;
  /** A within its SLO with B flooding (p99 against alone, and success rate). */
  aWithinSlo: boolean;
  /** A's p99 with B flooding within its deadline, in every round. */
  p99WithinDeadline: boolean;
  /**
   * B's requests were answered 200, refused 429, past their deadline after admission (504: the edge degrades it
   * as it does a refusal), or answered by the edge itself: nothing else (no 5xx of another kind, no lost request).
   */
  bRefusedNotFailed: boolean;
  /** Requests with no answer, and answers that were not their request's, over both tenants and every phase. */
  lost: number;
  mixedUp: number;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const ok = (ts: TenantTally[]) => ts.reduce((n, t) => n + (t.statuses["200"] ?? 0), 0);
const sent = (ts: TenantTally[]) => ts.reduce((n, t) => n + t.sent, 0);
const successOf = (ts: TenantTally[]) => (sent(ts) > 0 ? ok(ts) / sent(ts) : 0);

/** The median of `xs` (the lower middle of an even count). */
function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

/**
 * The verdict over rounds: each round's p99 ratio is taken within it (the machine's load moves both of its phases
 * together), their median judged, as bench:regional takes its ratios.
 */
export function twoTenantVerdict(rounds: readonly TenantRound[], slo: TenantSlo): TwoTenantVerdict {
  const all = rounds.flatMap((r) => [r.aAlone, r.aWithB, r.b]);
  const p99Ratios = rounds.map((r) => (r.aAlone.p99Ms > 0 ? round3(r.aWithB.p99Ms / r.aAlone.p99Ms) : Number.NaN));
  const p99Ratio = median(p99Ratios);
  const successWithB = successOf(rounds.map((r) => r.aWithB));
  return {
    p99Ratio,
    p99Ratios,
    successWithB: round3(successWithB),
    successAlone: round3(successOf(rounds.map((r) => r.aAlone))),
    aWithinSlo: p99Ratio <= slo.p99Ratio && successWithB >= slo.successRate,
    p99WithinDeadline: rounds.every((r) => r.aWithB.p99Ms <= slo.deadlineMs),
    bRefusedNotFailed: rounds.every((r) =>
      Object.keys(r.b.statuses).every((s) => ["200", "429", "504", "edge"].includes(s)),
    ),
    lost: all.reduce((n, t) => n + (t.statuses["0"] ?? 0), 0),
    mixedUp: all.reduce((n, t) => n + t.mixedUp, 0),
  };
}
