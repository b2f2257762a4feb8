import type { ProbeResult, ProbeSummary } from "./summary.ts";

/** How a probe run ends: 0 when its target held and few enough requests erred; else why not, in words. */
export interface ProbeVerdict {
  /** 0 held; 1 the p95 target was missed; 3 more than the allowed share of requests erred. */
  exitCode: 0 | 1 | 3;
  /** One line per cause, the likeliest fix first. */
  causes: string[];
}

/** Exit code of a run whose error share passed `--max-error-share` (checked before the target: errors miss it too). */
export const ERRORS_EXIT = 3;
/** Exit code of a run that missed its p95 target. */
export const MISSED_EXIT = 1;

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** What an error status most likely means for the person running the probe. */
function statusCause(status: number, count: number, apiKeySent: boolean): string {
  const n = `${count} request${count === 1 ? "" : "s"}`;
  switch (status) {
    case 0:
      return `${n} got no answer (refused, reset or timed out): is the edge running at that URL?`;
    case 401:
      return apiKeySent
        ? `${n} answered 401: the edge refused the API key; pass one of its keys with --api-key`
        : `${n} answered 401: the edge requires an API key; pass --api-key KEY (or set EDGECASCADE_API_KEY)`;
    case 403:
      return `${n} answered 403: the API key may not call this model; pass a key scoped to it with --api-key`;
    case 404:
      return `${n} answered 404: the edge does not serve this model (--model) or this is not an edge URL`;
    case 429:
      return `${n} answered 429: rate limited; lower --rate or raise the edge's limit`;
    default:
      return `${n} answered ${status}`;
  }
}

/**
 * The run's verdict from its summary and results (pure): more than `maxErrorShare` of the requests erred (exit 3,
 * each error status with what it most likely means: a 401 says to pass --api-key), else the p95 target missed
 * (exit 1, measured against the target, and how much of it the probe's own floor took), else held (0).
 */
export function probeVerdict(
  summary: ProbeSummary,
  results: readonly ProbeResult[],
  options: { maxErrorShare: number; apiKeySent: boolean },
): ProbeVerdict {
  if (summary.sent === 0 || results.length === 0) return { exitCode: MISSED_EXIT, causes: ["no request was sent"] };
  if (summary.errorRate > options.maxErrorShare) {
    const byStatus = new Map<number, number>();
    for (const r of results) if (r.path === "error") byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    const statuses = [...byStatus].sort((a, b) => b[1] - a[1]);
    return {
      exitCode: ERRORS_EXIT,
      causes: [
        `${pct(summary.errorRate)} of requests erred (${summary.errors} of ${results.length}), more than --max-error-share ${pct(options.maxErrorShare)}`,
        ...statuses.map(([status, count]) => statusCause(status, count, options.apiKeySent)),
      ],
    };
  }
  const { target, floor } = summary;
  if (!target.holds) {
    const floorNote = floor ? ` (the probe's own p95 against a no-op server: ${floor.p95Ms} ms)` : "";
    return {
      exitCode: MISSED_EXIT,
      causes: [
        target.measuredP95Ms === null
          ? `fewer than 95% of requests were answered, so p95 is over any target (errors count as never answered)`
          : `p95 ${target.measuredP95Ms} ms over the ${target.p95Ms} ms target${floorNote}`,
      ],
    };
  }
  return { exitCode: 0, causes: [] };
}
