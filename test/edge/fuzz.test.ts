import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { runFuzz } from "../../scripts/validate/fuzz-run.ts";
import { validationModel } from "../../scripts/validate/model.ts";
import { getJson, regionsVar, US_EAST } from "./support.ts";

const SECRET = "edge-fuzz-secret";
const KEY = "edge-fuzz-key";

describe("fuzz: malformed and hostile requests at the edge", () => {
  let pool: RegionalPool | undefined;
  let worker: EdgeWorker;
  beforeAll(async () => {
    pool = await startRegionalPool({ region: "us", env: { REGIONAL_SHARED_SECRET: SECRET } });
    worker = await startEdgeWorker({
      vars: {
        REGIONS: regionsVar([{ name: "us", url: pool.url, at: US_EAST }]),
        REGIONAL_SHARED_SECRET: SECRET,
        API_KEYS: KEY,
        SLO_BUDGET_MS: "20000",
      },
      rateLimit: false,
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await pool?.stop();
  });

  it("a smaller run of npm run validate:fuzz: no 5xx, no dropped connection, every error a JSON 4xx, valid answers right", async () => {
    const report = await runFuzz(
      { name: "edge", origin: worker.url, model: validationModel(), apiKey: KEY },
      { requests: 1500, seed: 20260102, slowBodies: 4, slowBodyMs: 500 },
    );
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ serverErrors: 0, dropped: 0, slowBodiesAnswered: 4 });
    expect(report.validCorrect).toBe(report.valid);
    for (const status of ["400", "401", "404", "405", "413", "415"]) {
      expect(report.statuses[status], `status ${status}`).toBeGreaterThan(0);
    }
    expect((await getJson(worker, "/v2/health/ready")).status).toBe(200);
  });
});
