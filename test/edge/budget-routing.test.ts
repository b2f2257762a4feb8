import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { type DelayProxy, startDelayProxy } from "../../scripts/validate/delay-proxy.ts";
import {
  classify,
  EU_CENTRAL,
  expectScores,
  FRANKFURT,
  getJson,
  NO_HEDGES,
  regionStatus,
  regionsVar,
  type StatusBody,
  serverTiming,
  US_EAST,
  unsureRows,
} from "./support.ts";

/**
 * Budget-aware routing with real network distance: each pool sits behind a delay proxy
 * (scripts/validate/delay-proxy.ts). The budget is 600 ms and a far region 500 ms away each way, so a call
 * to it could never answer in time; the numbers are large so that scheduling noise on a loaded machine
 * cannot move a region across the budget.
 */
const BUDGET_MS = 600;
const FAR_MS = 500;

describe("budget-aware routing", () => {
  let us: RegionalPool | undefined;
  let eu: RegionalPool | undefined;
  let usProxy: DelayProxy | undefined;
  let euProxy: DelayProxy | undefined;
  let worker: EdgeWorker;

  beforeAll(async () => {
    [us, eu] = await Promise.all([startRegionalPool({ region: "us" }), startRegionalPool({ region: "eu" })]);
    [usProxy, euProxy] = await Promise.all([
      startDelayProxy({ target: { host: "127.0.0.1", port: us.port }, delayMs: FAR_MS }),
      startDelayProxy({ target: { host: "127.0.0.1", port: eu.port }, delayMs: FAR_MS }),
    ]);
    worker = await startEdgeWorker({
      vars: {
        // Requests come from Frankfurt: eu is the nearest region, us the next.
        REGIONS: regionsVar([
          { name: "us", url: usProxy.url, at: US_EAST },
          { name: "eu", url: euProxy.url, at: EU_CENTRAL },
        ]),
        SLO_BUDGET_MS: String(BUDGET_MS),
        BREAKER_FAILURES: "1",
        PROBE_MEMO_MS: "0",
        ...NO_HEDGES,
      },
    });
    // The edge model loads on first use (about half a second): not inside a request under test.
    expect((await classify(worker, [unsureRows[5]!], { cascade: "edge" })).status).toBe(200);
    // The cron's probe measures each region's round trip (2 x 500 ms): both are beyond the budget.
    await worker.scheduled();
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([usProxy?.close(), euProxy?.close()]);
    await Promise.all([us?.stop(), eu?.stop()]);
  });

  const ask = (row = unsureRows[0]!) => classify(worker, [row], undefined, { cf: FRANKFURT });

  it("a client far from every region: degraded too-far at once, nothing sent, no breaker touched", async () => {
    const sentBefore = [usProxy!.stats().bytesForward, euProxy!.stats().bytesForward];
    for (const row of unsureRows.slice(0, 3)) {
      const answer = await ask(row);
      expect(answer.status).toBe(200);
      expect(answer.body.servedBy).toBe("degraded");
      // Not "deadline": nothing waited for the budget to run out.
      expect(answer.headers.get("x-edgecascade-degraded")).toBe("too-far");
      expect(serverTiming(answer.headers).regional).toBeUndefined();
      expectScores(answer.body, [row], "digits-edge");
    }
    // Not one byte of a classify call reached either region.
    expect([usProxy!.stats().bytesForward, euProxy!.stats().bytesForward]).toEqual(sentBefore);
    const { body } = await getJson<StatusBody>(worker, "/status/regions");
    for (const region of body.isolate.regions) {
      expect(region.breaker).toEqual({ state: "closed", failures: 0, ejections: 0 });
      expect(region.counters).toMatchObject({ admitted: 0, failed: 0, timedOut: 0, tooFar: 3 });
      expect(region.expectedAnswerMs).toBeGreaterThan(BUDGET_MS);
    }
    expect(body.probe!.regions.every((r) => r.ready && r.latencyMs! >= 2 * FAR_MS)).toBe(true);
  });

  it("skips the nearest region when it is too far and asks the next one that is in reach", async () => {
    usProxy!.setDelay(0);
    await worker.scheduled();
    const answer = await ask();
    expect(answer.body.servedBy).toBe("regional:us");
    expectScores(answer.body, [unsureRows[0]!], "digits");
    const eu = await regionStatus(worker, "eu");
    expect(eu.counters).toMatchObject({ admitted: 0, tooFar: 4 });
    expect(eu.breaker.state).toBe("closed");
  });

  it("routes back to the nearest region once the probe finds it in reach again", async () => {
    euProxy!.setDelay(0);
    await worker.scheduled();
    const answer = await ask(unsureRows[4]!);
    expect(answer.body.servedBy).toBe("regional:eu");
    expect((await regionStatus(worker, "eu")).counters).toMatchObject({ admitted: 1, answered: 1, tooFar: 4 });
  });
});
