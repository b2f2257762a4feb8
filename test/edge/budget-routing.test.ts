import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HeldoutRow } from "../../protocol/heldout.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { type DelayProxy, startDelayProxy } from "../../scripts/validate/delay-proxy.ts";
import {
  classify,
  EU_CENTRAL,
  expectScores,
  FRANKFURT,
  NO_HEDGES,
  regionStatus,
  regionsVar,
  serverTiming,
  US_EAST,
  unsureRows,
} from "./support.ts";

/**
 * Budget-aware routing with real network distance: each pool sits behind a delay proxy
 * (scripts/validate/delay-proxy.ts), and requests come from Frankfurt, so eu is the nearest region by the
 * distance prior and us the next. The budget is 600 ms and eu is made 500 ms away each way, so a call to it
 * cannot answer in time; the numbers are large so that scheduling noise on a loaded machine cannot move a
 * region across the budget. No cron runs here: what the isolate knows of the regions is its own.
 */
const BUDGET_MS = 600;
const FAR_MS = 500;
const WARM_PROBE_INTERVAL_MS = 1000;
const READY = "GET /v2/health/ready";
const CLASSIFY = "POST /v1/classify";

describe("budget-aware routing", () => {
  let us: RegionalPool | undefined;
  let eu: RegionalPool | undefined;
  let usProxy: DelayProxy | undefined;
  let euProxy: DelayProxy | undefined;
  let worker: EdgeWorker;

  beforeAll(async () => {
    [us, eu] = await Promise.all([startRegionalPool({ region: "us" }), startRegionalPool({ region: "eu" })]);
    [usProxy, euProxy] = await Promise.all([
      startDelayProxy({ target: { host: "127.0.0.1", port: us.port } }),
      startDelayProxy({ target: { host: "127.0.0.1", port: eu.port }, delayMs: FAR_MS }),
    ]);
    worker = await startEdgeWorker({
      vars: {
        REGIONS: regionsVar([
          { name: "us", url: usProxy.url, at: US_EAST },
          { name: "eu", url: euProxy.url, at: EU_CENTRAL },
        ]),
        SLO_BUDGET_MS: String(BUDGET_MS),
        MAX_BUDGET_MS: "10000",
        WARM_PROBE_INTERVAL_MS: String(WARM_PROBE_INTERVAL_MS),
        // One failure would open a breaker: a region being far must never count as one.
        BREAKER_FAILURES: "1",
        ...NO_HEDGES,
      },
    });
    // The edge model loads on first use (about half a second): not inside a request under test.
    expect((await classify(worker, [unsureRows[5]!], { cascade: "edge" })).status).toBe(200);
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([usProxy?.close(), euProxy?.close()]);
    await Promise.all([us?.stop(), eu?.stop()]);
  });

  /** The row with its first value moved by `n`/1000: a new cache key, the same unsure answer in effect. */
  const nudged = (row: HeldoutRow, n: number): HeldoutRow => ({
    ...row,
    input: [row.input[0]! + n / 1000, ...row.input.slice(1)],
  });
  const ask = (row = unsureRows[0]!, parameters?: Record<string, unknown>, headers?: Record<string, string>) =>
    classify(worker, [row], parameters, { cf: FRANKFURT, headers });

  it("a region that is really far: one call learns it, then it stays out of the path at the cost of warm probes alone, its breaker closed", async () => {
    // The prior says eu is next door: the first call goes there and is cut off by the deadline.
    const first = await ask();
    expect(first.body.servedBy).toBe("degraded");
    expect(first.headers.get("x-edgecascade-degraded")).toBe("deadline");
    const started = Date.now();
    const rows = unsureRows.slice(1, 11);
    for (const row of rows) {
      const answer = await ask(row);
      expect(answer.body.servedBy).toBe("regional:us");
      expectScores(answer.body, [row], "digits");
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    // Warm probes still under way end within two round trips of the far region.
    await new Promise((resolve) => setTimeout(resolve, 4 * FAR_MS + 200));
    const elapsedMs = Date.now() - started + 4 * FAR_MS;
    const sent = euProxy!.stats().requests;
    const far = await regionStatus(worker, "eu", FRANKFURT);
    const probes = far.counters.warmProbes;
    // Each warm probe is a GET on a new or idle connection and one classify timed on it, and one goes out at
    // most every WARM_PROBE_INTERVAL_MS; the only other call was the first request's.
    expect(probes).toBeGreaterThanOrEqual(1);
    expect(probes).toBeLessThanOrEqual(Math.floor(elapsedMs / WARM_PROBE_INTERVAL_MS) + 1);
    expect(sent).toEqual({ [READY]: probes, [CLASSIFY]: 1 + probes });
    expect(far.breaker).toEqual({ state: "closed", failures: 0, ejections: 0 });
    expect(far.counters).toMatchObject({ admitted: 1 + probes, timedOut: 1, failed: 0, tooFar: rows.length });
    expect(far.lastWarmProbe!.ms).toBeGreaterThanOrEqual(2 * FAR_MS);
    expect(far.expectedAnswerMs).toBeGreaterThanOrEqual(2 * FAR_MS);
  });

  it("a 'too far' corrects itself within seconds once the region is near again", async () => {
    euProxy!.setDelay(0);
    let answer = await ask(unsureRows[11]!);
    const deadline = Date.now() + 10_000;
    for (let i = 1; answer.body.servedBy !== "regional:eu" && Date.now() < deadline; i++) {
      expect(answer.body.servedBy).toBe("regional:us");
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await ask(nudged(unsureRows[11]!, i));
    }
    expect(answer.body.servedBy).toBe("regional:eu");
    expect(serverTiming(answer.headers).regional?.desc).toBe("eu");
    expect((await regionStatus(worker, "eu", FRANKFURT)).breaker.state).toBe("closed");
  });

  /** Whether the isolate expects the region to answer no sooner than a far round trip (or not in time at all). */
  const judgedFar = async (name: string) => {
    const expected = (await regionStatus(worker, name, FRANKFURT)).expectedAnswerMs;
    return expected === "cut-off" || (typeof expected === "number" && expected >= 2 * FAR_MS);
  };

  it('cascade "regional" goes to a region whatever the estimate; only its deadline degrades it', async () => {
    euProxy!.setDelay(FAR_MS);
    usProxy!.setDelay(FAR_MS);
    // Auto requests teach the isolate that both are far now (calls cut off by the deadline, warm probes).
    for (let i = 2; i < 40 && !((await judgedFar("eu")) && (await judgedFar("us"))); i++) {
      expect((await ask(nudged(unsureRows[12]!, i))).body.servedBy).toBe("degraded");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([await judgedFar("eu"), await judgedFar("us")]).toEqual([true, true]);
    // No region is in reach of the default budget, so the nearest is asked all the same, and the answer is
    // degraded for the deadline, not for the estimate.
    const cut = await ask(unsureRows[5]!, { cascade: "regional" });
    expect(cut.body.servedBy).toBe("degraded");
    expect(cut.headers.get("x-edgecascade-degraded")).toBe("deadline");
    // With a budget of its own that fits the round trip, the client gets the full model.
    const row = unsureRows[6]!;
    const answer = await ask(row, { cascade: "regional" }, { "x-edgecascade-budget-ms": String(6 * FAR_MS) });
    expect(answer.body.servedBy).toMatch(/^regional:/);
    expectScores(answer.body, [row], "digits");
    for (const name of ["eu", "us"]) expect((await regionStatus(worker, name, FRANKFURT)).breaker.state).toBe("closed");
  });

  it("a client's budget lets an auto request wait for a far region; a malformed one is a 400", async () => {
    // A warm probe has measured eu (about 2 x FAR_MS): it is in reach of a long budget, not of the default.
    const until = Date.now() + 10_000;
    while (typeof (await regionStatus(worker, "eu", FRANKFURT)).expectedAnswerMs !== "number" && Date.now() < until) {
      await ask(nudged(unsureRows[13]!, 100));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await regionStatus(worker, "eu", FRANKFURT)).expectedAnswerMs).toBeGreaterThanOrEqual(2 * FAR_MS);
    const row = unsureRows[13]!;
    const quick = await ask(row);
    expect(quick.headers.get("x-edgecascade-degraded")).toBe("too-far");
    const patient = await ask(row, undefined, { "x-edgecascade-budget-ms": String(6 * FAR_MS) });
    expect(patient.body.servedBy).toMatch(/^regional:/);
    expectScores(patient.body, [row], "digits");
    const bad = await ask(row, undefined, { "x-edgecascade-budget-ms": "soon" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "bad_request", error: expect.stringMatching(/x-edgecascade-budget-ms/) });
  });

  it('cascade "regional" requests alone bring back a region judged too far: passing it over sends its warm probe', async () => {
    // Both far, as the tests before left them; their warm probes still under way end within two far round trips.
    await new Promise((resolve) => setTimeout(resolve, 4 * FAR_MS + 200));
    expect([await judgedFar("eu"), await judgedFar("us")]).toEqual([true, true]);
    usProxy!.setDelay(0);
    const probesBefore = (await regionStatus(worker, "eu", FRANKFURT)).counters.warmProbes;
    const regional = (n: number) => ask(nudged(unsureRows[14]!, 200 + n), { cascade: "regional" });
    // Until the isolate knows us is near again (the warm probe of a region passed over), eu, the nearest, goes first.
    const until = Date.now() + 10_000;
    let n = 0;
    let first = await regional(n++);
    while (first.body.servedBy !== "regional:us" && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      first = await regional(n++);
    }
    expect(first.body.servedBy).toBe("regional:us");
    expect(await judgedFar("eu")).toBe(true);
    euProxy!.setDelay(0);
    const seen: string[] = [];
    let answer = await regional(n++);
    while (answer.body.servedBy !== "regional:eu" && Date.now() < until + 10_000) {
      seen.push(answer.body.servedBy);
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await regional(n++);
    }
    // Only regional requests were sent: eu came back through the warm probes they triggered.
    expect(answer.body.servedBy, seen.join(", ")).toBe("regional:eu");
    expect(seen.every((s) => s === "regional:us")).toBe(true);
    expect((await regionStatus(worker, "eu", FRANKFURT)).counters.warmProbes).toBeGreaterThan(probesBefore);
  });
});
