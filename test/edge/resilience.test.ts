import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import {
  classify,
  EU_CENTRAL,
  expectScores,
  getJson,
  NEW_YORK,
  NO_HEDGES,
  regionStatus,
  regionsVar,
  type StatusBody,
  serverTiming,
  TOKYO,
  US_EAST,
  unsureRows,
  usEuRegions,
} from "./support.ts";

const row = unsureRows[0]!;

/**
 * End a pool slowed by --delay-ms at once: it still holds the calls the edge gave up on, and a graceful stop
 * would wait each one's delay out (the drain is test/regional's subject, not these suites').
 */
async function kill(pool: RegionalPool | undefined): Promise<void> {
  if (!pool) return;
  try {
    process.kill(pool.pid, "SIGKILL");
  } catch {
    // Already exited.
  }
  await pool.exited;
}
/** Forced to the regions, so that the response cache never answers in place of the tier under test. */
const ask = (worker: EdgeWorker) => classify(worker, [row], { cascade: "regional" }, { cf: NEW_YORK });

describe("failover, circuit breaker and degradation", () => {
  let us: RegionalPool | undefined;
  let eu: RegionalPool | undefined;
  let usPort: number;
  let worker: EdgeWorker;
  const COOLDOWN_MS = 2000;
  beforeAll(async () => {
    [us, eu] = await Promise.all([startRegionalPool({ region: "us" }), startRegionalPool({ region: "eu" })]);
    usPort = us.port;
    worker = await startEdgeWorker({
      vars: {
        REGIONS: usEuRegions(us, eu),
        SLO_BUDGET_MS: "20000",
        BREAKER_FAILURES: "2",
        BREAKER_COOLDOWN_MS: String(COOLDOWN_MS),
        ...NO_HEDGES,
      },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([us?.stop(), eu?.stop()]);
  });

  it("answers from the nearest region while it is up", async () => {
    const answer = await ask(worker);
    expect(answer.body.servedBy).toBe("regional:us");
  });

  it("fails over to the second region when the nearest is down", async () => {
    await us!.stop();
    const answer = await ask(worker);
    expect(answer.status).toBe(200);
    expect(answer.body.servedBy).toBe("regional:eu");
    expectScores(answer.body, [row], "digits");
    const status = await regionStatus(worker, "us");
    expect(status.counters).toMatchObject({ admitted: 2, answered: 1, failed: 1 });
    expect(status.breaker.state).toBe("closed");
  });

  it("opens the breaker after consecutive failures: the down region is no longer called", async () => {
    expect((await ask(worker)).body.servedBy).toBe("regional:eu"); // second consecutive failure: opens
    const opened = await regionStatus(worker, "us");
    expect(opened.breaker.state).toBe("open");
    expect(opened.counters.failed).toBe(2);
    expect((await ask(worker)).body.servedBy).toBe("regional:eu");
    // An open breaker makes the region unhealthy: it is ordered last and, eu answering, never even asked.
    const after = await regionStatus(worker, "us");
    expect(after.counters.admitted).toBe(opened.counters.admitted);
    expect(after.counters.failed).toBe(2);
  });

  it("recovers: after the cool-down one probe goes through, and its success closes the breaker", async () => {
    us = await startRegionalPool({ region: "us", port: usPort });
    // Until the cool-down ends, eu keeps answering; then the half-open trial call reaches the restarted us.
    let answer = await ask(worker);
    const deadline = Date.now() + 10 * COOLDOWN_MS;
    while (answer.body.servedBy !== "regional:us" && Date.now() < deadline) {
      expect(answer.body.servedBy).toBe("regional:eu");
      await new Promise((r) => setTimeout(r, 200));
      answer = await ask(worker);
    }
    expect(answer.body.servedBy).toBe("regional:us");
    expect((await regionStatus(worker, "us")).breaker).toEqual({ state: "closed", failures: 0, ejections: 0 });
    expect((await ask(worker)).body.servedBy).toBe("regional:us");
  });

  it("degrades to the edge model's answer, a 200, when every region is down", async () => {
    await Promise.all([us!.stop(), eu!.stop()]);
    // An unsure row in the default (auto) mode: the cascade wants a region and none can answer.
    const unsure = unsureRows[1]!;
    const answer = await classify(worker, [unsure], undefined, { cf: NEW_YORK });
    expect(answer.status).toBe(200);
    expect(answer.body.servedBy).toBe("degraded");
    expect(answer.headers.get("x-served-by")).toBe("degraded");
    expect(answer.headers.get("x-edgecascade-degraded")).toBe("regions-failed");
    expectScores(answer.body, [unsure], "digits-edge");
    // Once both breakers are open nothing is even tried; the answer says why.
    await ask(worker);
    const open = await ask(worker);
    expect(open.status).toBe(200);
    expect(open.headers.get("x-edgecascade-degraded")).toBe("breakers-open");
    expect(open.body.predictions).toHaveLength(1);
    const { body } = await getJson<StatusBody>(worker, "/status/regions");
    expect(body.isolate.regions.map((r) => r.breaker.state)).toEqual(["open", "open"]);
  });

  it("degrades when the only region cannot answer within the SLO budget", async () => {
    const slow = await startRegionalPool({ region: "slow", extraArgs: ["--delay-ms", "5000"] });
    const tight = await startEdgeWorker({
      vars: { REGIONS: regionsVar([{ name: "slow", url: slow.url, at: US_EAST }]), SLO_BUDGET_MS: "500" },
    });
    try {
      const answer = await ask(tight);
      expect(answer.status).toBe(200);
      expect(answer.body.servedBy).toBe("degraded");
      expect(answer.headers.get("x-edgecascade-degraded")).toBe("deadline");
      expectScores(answer.body, [row], "digits-edge");
      const { counters } = await regionStatus(tight, "slow");
      // Besides the request's call, at most the warm probe its cut-off sent (edge/forward/warm-probe.ts). The
      // probe is counted when sent; its classify call is admitted after its readiness GET, which may still be in
      // flight when the status is read.
      expect(counters.warmProbes).toBeLessThanOrEqual(1);
      expect(counters.admitted).toBeGreaterThanOrEqual(1);
      expect(counters.admitted).toBeLessThanOrEqual(1 + counters.warmProbes);
      expect(counters).toMatchObject({ timedOut: 1, answered: 0 });
    } finally {
      await tight.dispose();
      await kill(slow);
    }
  });
});

describe("a region that runs out of the SLO budget", () => {
  let slow: RegionalPool | undefined;
  let eu: RegionalPool | undefined;
  let ap: RegionalPool | undefined;
  let worker: EdgeWorker;
  const BREAKER_FAILURES = 2;
  beforeAll(async () => {
    [slow, eu, ap] = await Promise.all([
      // Nearest to the requests, and slower than the budget by 10x.
      startRegionalPool({ region: "us", extraArgs: ["--delay-ms", "10000"] }),
      startRegionalPool({ region: "eu" }),
      startRegionalPool({ region: "ap" }),
    ]);
    worker = await startEdgeWorker({
      vars: {
        REGIONS: regionsVar([
          { name: "us", url: slow.url, at: US_EAST },
          { name: "eu", url: eu.url, at: EU_CENTRAL },
          { name: "ap", url: ap.url, at: TOKYO },
        ]),
        SLO_BUDGET_MS: "1000",
        BREAKER_FAILURES: String(BREAKER_FAILURES),
        BREAKER_COOLDOWN_MS: "600000",
        // Only failover could reach eu and ap; a hedge would be a real, budgeted call.
        ...NO_HEDGES,
      },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([kill(slow), eu?.stop(), ap?.stop()]);
  });

  it("charges the timeout to that region only, as slowness: it is skipped, its breaker closed, the regions never contacted untouched", async () => {
    const first = await ask(worker);
    expect(first.status).toBe(200);
    expect(first.body.servedBy).toBe("degraded");
    expect(first.headers.get("x-edgecascade-degraded")).toBe("deadline");
    // Cut off by the deadline: slower than the budget, not failing. The next requests (cascade "regional", so
    // no region is skipped) try the nearest region in reach first, which answers.
    for (let i = 0; i < BREAKER_FAILURES; i++) {
      const answer = await ask(worker);
      expect(answer.body.servedBy, answer.headers.get("x-edgecascade-degraded") ?? "").toBe("regional:eu");
      expectScores(answer.body, [row], "digits");
    }
    const us = await regionStatus(worker, "us");
    expect(us.breaker).toEqual({ state: "closed", failures: 0, ejections: 0 });
    expect(us.counters.admitted - us.counters.warmProbes).toBe(1);
    expect(us.counters).toMatchObject({ failed: 0, answered: 0 });
    for (const name of ["eu", "ap"]) {
      const region = await regionStatus(worker, name);
      expect(region.breaker).toEqual({ state: "closed", failures: 0, ejections: 0 });
      expect(region.counters).toMatchObject({ failed: 0, timedOut: 0 });
    }
    expect((await regionStatus(worker, "ap")).counters.admitted).toBe(0);
  });
});

describe("hedging", () => {
  let slow: RegionalPool;
  let fast: RegionalPool;
  const workers: EdgeWorker[] = [];
  beforeAll(async () => {
    [slow, fast] = await Promise.all([
      startRegionalPool({ region: "us", extraArgs: ["--delay-ms", "5000"] }),
      startRegionalPool({ region: "eu" }),
    ]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.dispose()));
  });
  afterAll(async () => {
    await Promise.all([kill(slow), fast?.stop()]);
  });

  const start = async (vars: Record<string, string>) => {
    const worker = await startEdgeWorker({
      vars: {
        REGIONS: regionsVar([
          { name: "us", url: slow.url, at: US_EAST },
          { name: "eu", url: fast.url, at: EU_CENTRAL },
        ]),
        SLO_BUDGET_MS: "30000",
        HEDGE_DELAY_MS: "200",
        ...vars,
      },
    });
    workers.push(worker);
    return worker;
  };

  it("a hedge to the next region wins against a slow nearest region, which is aborted", async () => {
    const worker = await start({});
    const answer = await ask(worker);
    expect(answer.status).toBe(200);
    expect(answer.body.servedBy).toBe("regional:eu");
    expectScores(answer.body, [row], "digits");
    expect(serverTiming(answer.headers)).toMatchObject({ regional: { desc: "eu" }, hedge: {} });
    expect((await regionStatus(worker, "eu")).counters).toMatchObject({ hedges: 1, answered: 1 });
    expect((await regionStatus(worker, "us")).counters).toMatchObject({ admitted: 1, cancelled: 1, failed: 0 });
    // A cancelled call is not a failure: the slow region's breaker stays closed.
    expect((await regionStatus(worker, "us")).breaker.state).toBe("closed");
  });

  it("spends at most the hedge budget: without tokens the request waits for the nearest region", async () => {
    const worker = await start({ HEDGE_BUDGET_BURST: "1", HEDGE_BUDGET_RATIO: "0.1" });
    expect((await ask(worker)).body.servedBy).toBe("regional:eu"); // the one token
    const unhedged = await ask(worker);
    expect(unhedged.body.servedBy).toBe("regional:us");
    expect(serverTiming(unhedged.headers).hedge).toBeUndefined();
    expect((await regionStatus(worker, "eu")).counters.hedges).toBe(1);
  });
});
