import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionsView } from "../../edge/inference/session-pool.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { type DelayProxy, startDelayProxy } from "../../scripts/validate/delay-proxy.ts";
import {
  classify,
  confidentRows,
  expectScores,
  getJson,
  NEW_YORK,
  NO_HEDGES,
  post,
  regionsVar,
  US_EAST,
} from "./support.ts";

const SECRET = "cold-isolate-secret";
/** From Sydney, the distance prior puts us (US_EAST) about 210 ms away: beyond a client budget of 150 ms. */
const SYDNEY = { latitude: "-33.87", longitude: "151.21", continent: "OC", colo: "SYD" };
const FAR = { cf: SYDNEY, headers: { "x-edgecascade-budget-ms": "150" } };
/** LOAD_WAIT_MS's default: how much longer the regions get for a model without a session. */
const LOAD_WAIT_MS = 100;

interface Status {
  models: Record<
    string,
    { edge: { loaded: boolean; loads: number; evictions: number } | null; requests: Record<string, number> }
  >;
  sessions: SessionsView;
}

/** The edge variant of `model` has a session in this isolate (GET /status), after at most `tries` looks. */
async function edgeLoaded(worker: EdgeWorker, model = "digits", tries = 200): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    const { body } = await getJson<Status>(worker, "/status");
    if (body.models[model]?.edge?.loaded) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

// A fresh Worker is a cold isolate: its edge variants have no session yet (docs/edge.md, *Cold isolates*).
describe("a cold isolate", () => {
  let us: RegionalPool;
  /** In front of `us` for `withRegion`, no delay: it keeps the deadlines the forwards carried. */
  let proxy: DelayProxy;
  let withRegion: EdgeWorker;
  let withoutRegions: EdgeWorker;
  /** Room for one session only: each model's session evicts the other's. */
  let oneSession: EdgeWorker;
  /** As `oneSession`, with no session created in place of another after an answer (EDGE_SESSION_REPLACEMENTS_PER_SECOND 0). */
  let noReplacements: EdgeWorker;
  beforeAll(async () => {
    us = await startRegionalPool({ region: "us", env: { REGIONAL_SHARED_SECRET: SECRET } });
    proxy = await startDelayProxy({ target: { host: "127.0.0.1", port: us.port } });
    const REGIONS = regionsVar([{ name: "us", url: us.url, at: US_EAST }]);
    const vars = { SLO_BUDGET_MS: "20000", LOCAL_CACHE_ONLY: "true", ...NO_HEDGES };
    const one = { ...vars, REGIONS, REGIONAL_SHARED_SECRET: SECRET, EDGE_SESSION_MEMORY_MB: "0.1" };
    [withRegion, withoutRegions, oneSession, noReplacements] = await Promise.all([
      startEdgeWorker({
        vars: {
          ...vars,
          REGIONS: regionsVar([{ name: "us", url: proxy.url, at: US_EAST }]),
          REGIONAL_SHARED_SECRET: SECRET,
        },
      }),
      startEdgeWorker({ vars: { ...vars, REGIONS: "[]" } }),
      startEdgeWorker({ vars: one }),
      startEdgeWorker({ vars: { ...one, EDGE_SESSION_REPLACEMENTS_PER_SECOND: "0" } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([
      withRegion?.dispose(),
      withoutRegions?.dispose(),
      oneSession?.dispose(),
      noReplacements?.dispose(),
    ]);
    await proxy?.close();
    await us?.stop();
  });

  it("forwards its first request while the session is created off the request path, then answers at the edge", async () => {
    const [first, second] = confidentRows;
    const cold = await classify(withRegion, [first!], undefined, { cf: NEW_YORK });
    expect(cold.status).toBe(200);
    // A row the edge would answer, answered by the region's full model: the request did not wait for a session.
    expect(cold.body.servedBy).toBe("regional:us");
    expectScores(cold.body, [first!], "digits");
    // The session the first request started (in waitUntil) becomes ready without another request asking for it.
    expect(await edgeLoaded(withRegion)).toBe(true);
    const warm = await classify(withRegion, [second!], undefined, { cf: NEW_YORK });
    expect(warm.body.servedBy).toBe("edge");
    expectScores(warm.body, [second!], "digits-edge");
    const { body } = await getJson<Status>(withRegion, "/status");
    expect(body.models.digits!.edge!.loads).toBe(1);
    expect(body.models.digits!.requests).toMatchObject({ regional: 1, edge: 1, degraded: 0 });
  });

  it("waits for the session when no region is in reach, and answers at the edge", async () => {
    const cold = await classify(withoutRegions, [confidentRows[2]!]);
    expect(cold.status).toBe(200);
    expect(cold.body.servedBy).toBe("edge");
    expectScores(cold.body, [confidentRows[2]!], "digits-edge");
    const { body } = await getJson<Status>(withoutRegions, "/status");
    expect(body.models.digits!.edge).toMatchObject({ loaded: true, loads: 1 });
    // Counted as a session created on the request path (and logged with why).
    expect(body.sessions).toMatchObject({ created: 1, onRequestPath: 1 });
  });

  it("creates each model's session on its own first request, forwarded even where the estimate puts the region out of reach", async () => {
    // breast-cancer's first row in an isolate whose digits session exists, from where the distance prior puts the
    // region beyond the request's budget: forwarded all the same (else the session would be created on the
    // request path), with LOAD_WAIT_MS more for a region that loads models on demand; its own session created after.
    const body = { model: "breast-cancer", inputs: Array.from({ length: 30 }, () => 1) };
    const answer = await post(withRegion, "/v1/classify", body, FAR);
    expect(answer.status).toBe(200);
    expect(answer.body.servedBy).toBe("regional:us");
    const deadlineMs = proxy.stats().deadlinesMs.at(-1)!;
    expect(deadlineMs).toBeGreaterThan(150);
    expect(deadlineMs).toBeLessThanOrEqual(150 + LOAD_WAIT_MS);
    expect(await edgeLoaded(withRegion, "breast-cancer")).toBe(true);
  });

  it("within a budget of one session: a model without one is forwarded; asked for more often than the other, its session evicts the other's", async () => {
    const [a, b, c, d, e] = confidentRows.slice(3, 8);
    const cancer = (v: number) => ({ model: "breast-cancer", inputs: Array.from({ length: 30 }, () => v) });
    const status = async () => (await getJson<Status>(oneSession, "/status")).body;
    expect((await classify(oneSession, [a!], undefined, { cf: NEW_YORK })).body.servedBy).toBe("regional:us");
    expect(await edgeLoaded(oneSession)).toBe(true);
    expect((await classify(oneSession, [b!], undefined, { cf: NEW_YORK })).body.servedBy).toBe("edge");
    // breast-cancer's requests are forwarded, and no session is made for it while it has not been asked for more
    // often than digits (twice) lately: it would evict a session asked for more. Its third makes one after the answer.
    for (const v of [1, 2]) {
      expect((await post(oneSession, "/v1/classify", cancer(v), { cf: NEW_YORK })).body.servedBy).toBe("regional:us");
      expect((await status()).models["breast-cancer"]!.edge).toMatchObject({ loaded: false, loads: 0 });
    }
    expect((await post(oneSession, "/v1/classify", cancer(3), { cf: NEW_YORK })).body.servedBy).toBe("regional:us");
    expect(await edgeLoaded(oneSession, "breast-cancer")).toBe(true);
    const evicted = await status();
    expect(evicted.models.digits!.edge).toMatchObject({ loaded: false, loads: 1, evictions: 1 });
    expect(evicted.sessions).toMatchObject({ resident: 1, created: 2, evictions: 1 });
    expect(evicted.sessions.residentBytes).toBeLessThanOrEqual(evicted.sessions.budgetBytes);
    // digits again: not resident, so forwarded (rows the edge would answer); asked for more often than breast-cancer
    // (4 times against 3) by its second, which makes its session again.
    for (const row of [c!, d!]) {
      const again = await classify(oneSession, [row], undefined, { cf: NEW_YORK });
      expect(again.body.servedBy).toBe("regional:us");
      expectScores(again.body, [row], "digits");
    }
    expect(await edgeLoaded(oneSession)).toBe(true);
    expect((await classify(oneSession, [e!], undefined, { cf: NEW_YORK })).body.servedBy).toBe("edge");
    const after = await status();
    expect(after.models.digits!.edge).toMatchObject({ loaded: true, loads: 2, evictions: 1 });
    expect(after.models["breast-cancer"]!.edge).toMatchObject({ loaded: false, evictions: 1 });
    expect(after.sessions).toMatchObject({ resident: 1, created: 3, evictions: 2 });
  });

  it("past the budget, creates no session in place of another beyond EDGE_SESSION_REPLACEMENTS_PER_SECOND (0 here): counted as deferred", async () => {
    const status = async () => (await getJson<Status>(noReplacements, "/status")).body;
    const cancer = (v: number) => ({ model: "breast-cancer", inputs: Array.from({ length: 30 }, () => v) });
    expect((await classify(noReplacements, [confidentRows[3]!], undefined, { cf: NEW_YORK })).body.servedBy).toBe(
      "regional:us",
    );
    expect(await edgeLoaded(noReplacements)).toBe(true); // fits: no rate applies
    expect((await classify(noReplacements, [confidentRows[4]!], undefined, { cf: NEW_YORK })).body.servedBy).toBe(
      "edge",
    );
    // breast-cancer's third request would have its session evict digits' (as above); the rate holds it back.
    for (const v of [1, 2, 3]) {
      expect((await post(noReplacements, "/v1/classify", cancer(v), { cf: NEW_YORK })).body.servedBy).toBe(
        "regional:us",
      );
    }
    const after = await status();
    expect(after.models["breast-cancer"]!.edge).toMatchObject({ loaded: false, loads: 0 });
    expect(after.models.digits!.edge).toMatchObject({ loaded: true, evictions: 0 });
    expect(after.sessions).toMatchObject({ resident: 1, created: 1, evictions: 0, deferred: 1, onRequestPath: 0 });
    // The same, alone and cheap to poll (/status lists every model).
    expect((await getJson(noReplacements, "/status/sessions")).body).toEqual(after.sessions);
  });
});
