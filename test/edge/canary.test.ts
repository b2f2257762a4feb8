import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { addVersion, copyModels, startTestServer, type TestServer, testOptions } from "../support/regional-server.ts";
import { advance, rolloutOf } from "../support/rollout.ts";
import { getJson, NO_HEDGES, post, regionsVar, US_EAST, unsureRows } from "./support.ts";

// The edge's cache during a canary: a real pool at 50% behind the Worker in workerd. Each answer is cached
// under the version that produced it, and a repeat of the input finds it there.
const TOKEN = "canary-token";
let models: ReturnType<typeof copyModels>;
let pool: TestServer;
let worker: EdgeWorker;

async function put(state: RolloutState) {
  const res = await request(`${pool.url}/v2/repository/models/digits/rollout`, {
    method: "PUT",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(state),
  });
  expect(res.statusCode).toBe(200);
  await res.body.dump();
}

beforeAll(async () => {
  models = copyModels();
  await addVersion(models.dir, "digits", "2", { gates: "passed" });
  pool = await startTestServer(testOptions(["--models", models.dir], { ADMIN_TOKEN: TOKEN }));
  const REGIONS = regionsVar([{ name: "us", url: pool.url, at: US_EAST }]);
  worker = await startEdgeWorker({ vars: { REGIONS, SLO_BUDGET_MS: "20000", ...NO_HEDGES } });
});
afterAll(async () => {
  await worker?.dispose();
  await pool?.shutdown();
  models?.remove();
});

describe("the edge during a canary", () => {
  it("caches each answer under the version that produced it, and a repeat gets that version again", async () => {
    const shadow = rolloutOf({ candidate: "2", revision: 1, config: { steps: [0, 50, 100] } });
    await put(shadow);
    await put(advance(shadow, 1));
    const rows = unsureRows;
    const first = [];
    for (const row of rows) first.push(await post(worker, "/v1/classify", { model: "digits", inputs: row.input }));
    const firstVersions = first.map((a) => a.body.version);
    // Both versions answer some of the inputs (50% by hash).
    expect(new Set(firstVersions)).toEqual(new Set(["1", "2"]));
    for (const [i, row] of rows.entries()) {
      const again = await post(worker, "/v1/classify", { model: "digits", inputs: row.input });
      expect(again.body).toMatchObject({ servedBy: "cache", version: firstVersions[i] });
    }
    const status = await getJson<{ models: Record<string, { rollout: unknown }> }>(worker, "/status");
    expect(status.body.models.digits!.rollout).toMatchObject({ candidate: "2", percent: 50, phase: "running" });
    // The scheduled region status check reads it from the model metadata too (isolates that have not forwarded yet).
    await worker.scheduled();
    const regions = await getJson<{
      regionStatus: { regions: { rollouts?: Record<string, unknown>; versions?: unknown }[] };
    }>(worker, "/status/regions");
    expect(regions.body.regionStatus.regions[0]).toMatchObject({
      versions: { digits: "1" },
      rollouts: { digits: { candidate: "2", percent: 50 } },
    });
  });

  it("learns a rollback from the next regional answer, and forwards inputs it had cached under the candidate", async () => {
    const state = advance(rolloutOf({ candidate: "2", revision: 1, config: { steps: [0, 50, 100] } }), 1);
    const { rollBack } = await import("../support/rollout.ts");
    await put(rollBack(state));
    // One request that reaches the pool brings back the rolled-back state.
    const forced = await post(worker, "/v1/classify", {
      model: "digits",
      inputs: unsureRows[0]!.input,
      parameters: { cascade: "regional" },
    });
    expect(forced.body.servedBy).toBe("regional:us");
    for (const row of unsureRows) {
      const answer = await post(worker, "/v1/classify", { model: "digits", inputs: row.input });
      expect(answer.body.version).toBe("1");
    }
  });
});
