import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argmax } from "../../protocol/heldout.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { heldout } from "../support/heldout.ts";
import {
  classify,
  confidentRows,
  expectScores,
  FRANKFURT,
  getJson,
  NEW_YORK,
  NO_HEDGES,
  regionStatus,
  regionsVar,
  serverTiming,
  US_EAST,
  unsureRows,
  usEuRegions,
  warmEdge,
} from "./support.ts";

const SECRET = "edge-to-region-secret";

describe("cascade to real regional pools", () => {
  let us: RegionalPool;
  let eu: RegionalPool;
  let worker: EdgeWorker;
  let wrongSecret: EdgeWorker;
  beforeAll(async () => {
    const env = { REGIONAL_SHARED_SECRET: SECRET };
    [us, eu] = await Promise.all([startRegionalPool({ region: "us", env }), startRegionalPool({ region: "eu", env })]);
    const REGIONS = usEuRegions(us, eu);
    // A generous budget: this suite is about who answers, not about time (the resilience suite is).
    const vars = { REGIONS, SLO_BUDGET_MS: "20000", ...NO_HEDGES };
    worker = await startEdgeWorker({ vars: { ...vars, REGIONAL_SHARED_SECRET: SECRET } });
    wrongSecret = await startEdgeWorker({ vars: { ...vars, REGIONAL_SHARED_SECRET: "guess" } });
  });
  afterAll(async () => {
    await Promise.all([worker?.dispose(), wrongSecret?.dispose()]);
    await Promise.all([us?.stop(), eu?.stop()]);
  });

  it("forwards unsure rows to the nearest region, which answers with the full model", async () => {
    expect(unsureRows.length).toBeGreaterThan(0);
    for (const row of unsureRows) {
      const answer = await classify(worker, [row], undefined, { cf: NEW_YORK });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ servedBy: "regional:us", version: "1" });
      expect(answer.headers.get("x-served-by")).toBe("regional:us");
      expect(answer.headers.get("x-model-version")).toBe("1");
      expect(serverTiming(answer.headers).regional?.desc).toBe("us");
      expectScores(answer.body, [row], "digits");
    }
  });

  it("answers the whole held-out set through the cascade: confident rows at the edge, the rest regionally", async () => {
    // Four requests at a time rather than one: each is still one row, and the generous budget and NO_HEDGES
    // leave the tier that answers to the cascade alone.
    const answers: Awaited<ReturnType<typeof classify>>[] = [];
    let next = 0;
    const sender = async () => {
      for (let i = next++; i < heldout.rows.length; i = next++) {
        answers[i] = await classify(worker, [heldout.rows[i]!], undefined, { cf: FRANKFURT });
      }
    };
    await Promise.all([sender(), sender(), sender(), sender()]);
    let correct = 0;
    for (const [i, row] of heldout.rows.entries()) {
      const answer = answers[i]!;
      const edge = confidentRows.includes(row);
      expect(answer.body.servedBy).toMatch(edge ? /^(edge|cache)$/ : /^(regional:eu|cache)$/);
      expectScores(answer.body, [row], edge ? "digits-edge" : "digits");
      if (answer.body.predictions[0]!.class === row.label) correct++;
    }
    // The cascade is as accurate as the full model alone on this split (README: 97.78%).
    const full = heldout.rows.filter((r) => argmax(r.expected.digits!) === r.label).length;
    expect(correct).toBe(full);
  });

  it("sends a batch with any unsure row to the region as a whole", async () => {
    const rows = [...confidentRows.slice(0, 5), unsureRows[0]!, ...confidentRows.slice(5, 8)];
    const answer = await classify(worker, rows, undefined, { cf: NEW_YORK });
    expect(answer.body.servedBy).toBe("regional:us");
    expectScores(answer.body, rows, "digits");
  });

  it("forces a tier with parameters.cascade", async () => {
    const row = confidentRows[10]!;
    const regional = await classify(worker, [row], { cascade: "regional" }, { cf: NEW_YORK });
    expect(regional.body.servedBy).toBe("regional:us");
    expectScores(regional.body, [row], "digits");
    const unsure = unsureRows[1]!;
    const edge = await classify(worker, [unsure], { cascade: "edge" }, { cf: NEW_YORK });
    expect(edge.body.servedBy).toBe("edge");
    expectScores(edge.body, [unsure], "digits-edge");
  });

  it("picks the nearest region by request.cf, or by the location header where the override is allowed", async () => {
    const row = unsureRows[2]!;
    const fromFrankfurt = await classify(worker, [row], { cascade: "regional" }, { cf: FRANKFURT });
    expect(fromFrankfurt.body.servedBy).toBe("regional:eu");
    const fromNewYork = await classify(worker, [row], { cascade: "regional" }, { cf: NEW_YORK });
    expect(fromNewYork.body.servedBy).toBe("regional:us");
    // The local stack's wrangler.toml allows the override (ALLOW_LOCATION_OVERRIDE = "true").
    const overridden = await classify(
      worker,
      [row],
      { cascade: "regional" },
      { cf: NEW_YORK, headers: { "x-edgecascade-location": "48.85,2.35" } },
    );
    expect(overridden.body.servedBy).toBe("regional:eu");
    // Without coordinates, the continent decides. (Miniflare fills unset cf fields with Austin, TX; blank them.)
    const noPoint = { latitude: "", longitude: "", colo: "" };
    const byContinent = await classify(worker, [row], { cascade: "regional" }, { cf: { ...noPoint, continent: "EU" } });
    expect(byContinent.body.servedBy).toBe("regional:eu");
  });

  it("signs its calls: pools with a secret refuse a Worker that signs with another", async () => {
    const row = unsureRows[0]!;
    const answer = await classify(wrongSecret, [row], undefined, { cf: NEW_YORK });
    expect(answer.status).toBe(200);
    expect(answer.body.servedBy).toBe("degraded");
    expect(answer.headers.get("x-edgecascade-degraded")).toBe("regions-failed");
    const refused = await fetch(`${us.url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "digits", inputs: [row.input] }),
    });
    expect(refused.status).toBe(401);
    expect((await regionStatus(worker, "us")).counters.failed).toBe(0);
  });
});

describe("CASCADE_THRESHOLDS", () => {
  let us: RegionalPool;
  const workers: EdgeWorker[] = [];
  beforeAll(async () => {
    us = await startRegionalPool({ region: "us" });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.dispose()));
    await us?.stop();
  });
  /** A warm Worker with these thresholds (`warm: false` for a configuration that cannot load). */
  const start = async (thresholds: string, warm = true) => {
    const worker = await startEdgeWorker({
      vars: {
        REGIONS: regionsVar([{ name: "us", url: us.url, at: US_EAST }]),
        SLO_BUDGET_MS: "20000",
        CASCADE_THRESHOLDS: thresholds,
        ...NO_HEDGES,
      },
    });
    workers.push(worker);
    return warm ? warmEdge(worker) : worker;
  };

  it("0: the edge answers every row, unsure ones included", async () => {
    const worker = await start('{"digits": 0}');
    const answer = await classify(worker, [unsureRows[0]!], { cascade: "auto" }, { cf: NEW_YORK });
    expect(answer.body.servedBy).toBe("edge");
    expectScores(answer.body, [unsureRows[0]!], "digits-edge");
  });

  it("1: rows the calibrated threshold leaves to the edge go to the region", async () => {
    const worker = await start('{"digits": 1}');
    const row = confidentRows.find((r) => Math.max(...r.expected["digits-edge"]!) < 1)!;
    const answer = await classify(worker, [row], undefined, { cf: NEW_YORK });
    expect(answer.body.servedBy).toBe("regional:us");
    expectScores(answer.body, [row], "digits");
    const { body } = await getJson<{
      models: Record<string, { edge: { threshold: number; calibratedThreshold: number } }>;
    }>(worker, "/status");
    expect(body.models.digits!.edge.threshold).toBe(1);
    expect(body.models.digits!.edge.calibratedThreshold).toBeLessThan(1);
  });

  it("a model the edge does not serve: every request is a 500 naming the variable", async () => {
    const worker = await start('{"cats": 0.5}', false);
    const answer = await classify(worker, [confidentRows[0]!]);
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({
      code: "bad_configuration",
      error: expect.stringContaining('CASCADE_THRESHOLDS: the edge serves no model "cats"'),
    });
  });
});
