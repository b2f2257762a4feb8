import { describe, expect, it } from "vitest";
import { type ProbeResult, summarize } from "./summary.ts";
import { ERRORS_EXIT, MISSED_EXIT, probeVerdict } from "./verdict.ts";

const run = { url: "http://x", startedAt: "t", durationS: 1, rateRps: 100 };
const answered = (n: number, latencyMs: number): ProbeResult[] =>
  Array.from({ length: n }, () => ({ path: "edge", latencyMs, status: 200 }));
const failed = (n: number, status: number): ProbeResult[] =>
  Array.from({ length: n }, () => ({ path: "error", latencyMs: 1, status, error: `HTTP ${status}` }));
const verdict = (results: ProbeResult[], options = { maxErrorShare: 0.01, apiKeySent: false }) =>
  probeVerdict(summarize(results, { ...run, sent: results.length }), results, options);

describe("probeVerdict", () => {
  it("holds when p95 is within the target and few requests erred", () => {
    expect(verdict([...answered(99, 2), ...failed(1, 503)])).toEqual({ exitCode: 0, causes: [] });
  });

  it("exits 1 when p95 is over the target, saying by how much", () => {
    const v = verdict([...answered(90, 2), ...answered(10, 12)]);
    expect(v.exitCode).toBe(MISSED_EXIT);
    expect(v.causes).toEqual(["p95 12 ms over the 10 ms target"]);
  });

  it("exits 3 when every request was refused for want of a key, and says to pass --api-key", () => {
    const v = verdict(failed(100, 401));
    expect(v.exitCode).toBe(ERRORS_EXIT);
    expect(v.causes[0]).toBe("100.00% of requests erred (100 of 100), more than --max-error-share 1.00%");
    expect(v.causes[1]).toMatch(/100 requests answered 401: .*pass --api-key/);
  });

  it("names each error status, most frequent first, and a refused key apart from a missing one", () => {
    const v = verdict([...answered(80, 1), ...failed(5, 429), ...failed(15, 0)], {
      maxErrorShare: 0.1,
      apiKeySent: true,
    });
    expect(v.exitCode).toBe(ERRORS_EXIT);
    expect(v.causes.slice(1)).toEqual([
      "15 requests got no answer (refused, reset or timed out): is the edge running at that URL?",
      "5 requests answered 429: rate limited; lower --rate or raise the edge's limit",
    ]);
    expect(verdict(failed(3, 401), { maxErrorShare: 0, apiKeySent: true }).causes[1]).toMatch(/refused the API key/);
  });

  it("a share of errors at the limit is allowed; the target still counts them as never answered", () => {
    const v = verdict([...answered(94, 1), ...failed(6, 503)], { maxErrorShare: 0.06, apiKeySent: false });
    expect(v.exitCode).toBe(MISSED_EXIT);
    expect(v.causes).toEqual([
      "fewer than 95% of requests were answered, so p95 is over any target (errors count as never answered)",
    ]);
  });
});
