import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { MODELS_DIR } from "../support/heldout.ts";
import {
  classify,
  closedPort,
  confidentRows,
  EU_CENTRAL,
  expectScores,
  getJson,
  NEW_YORK,
  NO_HEDGES,
  post,
  regionStatus,
  regionsVar,
  type StatusBody,
  US_EAST,
  unsureRows,
  usEuRegions,
  warmEdge,
} from "./support.ts";

const ADMIN_TOKEN = "admin-token";

/** A copy of models/ where digits also has a version 2 (the same weights under a new version number). */
function modelsWithVersion2(): string {
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-models-"));
  cpSync(MODELS_DIR, dir, { recursive: true });
  cpSync(join(dir, "digits/1"), join(dir, "digits/2"), { recursive: true });
  const configPath = join(dir, "digits/config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  config.versions["2"] = config.versions["1"];
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return dir;
}

async function loadVersion2(pool: RegionalPool) {
  const response = await fetch(`${pool.url}/v2/repository/models/digits/load`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ parameters: { version: "2" } }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const meta = (await (await fetch(`${pool.url}/v2/models/digits`)).json()) as { versions: string[] };
  expect(meta.versions).toEqual(["2"]);
}

describe("cache and a regional model version change", () => {
  let modelsDir: string;
  let pool: RegionalPool;
  let worker: EdgeWorker;
  beforeAll(async () => {
    modelsDir = modelsWithVersion2();
    pool = await startRegionalPool({ region: "us", modelsDir, env: { ADMIN_TOKEN } });
    worker = await warmEdge(
      await startEdgeWorker({
        vars: { REGIONS: regionsVar([{ name: "us", url: pool.url, at: US_EAST }]), SLO_BUDGET_MS: "20000" },
      }),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await pool?.stop();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it("misses the cache after the regions move to a new version, then caches under it", async () => {
    const [confident, unsure] = [confidentRows[20]!, unsureRows[0]!];
    expect((await classify(worker, [confident])).body).toMatchObject({ servedBy: "edge", version: "1" });
    expect((await classify(worker, [unsure])).body).toMatchObject({ servedBy: "regional:us", version: "1" });
    expect((await classify(worker, [confident])).body).toMatchObject({ servedBy: "cache", version: "1" });
    expect((await classify(worker, [unsure])).body).toMatchObject({ servedBy: "cache", version: "1" });

    await loadVersion2(pool);
    // The edge learns the new version from the next regional answer (x-model-version: 2)...
    const fresh = await classify(worker, [unsureRows[1]!]);
    expect(fresh.body).toMatchObject({ servedBy: "regional:us", version: "2" });
    expect(fresh.headers.get("x-model-version")).toBe("2");
    expect((await getJson<StatusBody>(worker, "/status/regions")).body.servedVersions.digits).toBe("2");
    // ...and from then on the old answers are not found: the version is part of the key.
    expect((await classify(worker, [confident])).body).toMatchObject({ servedBy: "edge", version: "2" });
    expect((await classify(worker, [unsure])).body).toMatchObject({ servedBy: "regional:us", version: "2" });
    expect((await classify(worker, [confident])).body).toMatchObject({ servedBy: "cache", version: "2" });
    expect((await classify(worker, [unsure])).body).toMatchObject({ servedBy: "cache", version: "2" });
  });

  it("serves only the version it believes current", async () => {
    const pinned = (version: string) =>
      worker.dispatchFetch(`${worker.url}/v1/classify`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "digits", version, inputs: [confidentRows[0]!.input] }),
      });
    expect((await pinned("2")).status).toBe(200);
    expect((await pinned("1")).status).toBe(404);
  });
});

describe("a pinned version during a rollout", () => {
  let modelsDir: string;
  let us: RegionalPool;
  let eu: RegionalPool;
  let worker: EdgeWorker;
  const BREAKER_FAILURES = 2;
  beforeAll(async () => {
    modelsDir = modelsWithVersion2();
    [us, eu] = await Promise.all([
      startRegionalPool({ region: "us", modelsDir, env: { ADMIN_TOKEN } }),
      startRegionalPool({ region: "eu", modelsDir, env: { ADMIN_TOKEN } }),
    ]);
    // The rollout has reached us (nearest to the requests) but not eu yet.
    await loadVersion2(us);
    worker = await startEdgeWorker({
      vars: {
        REGIONS: usEuRegions(us, eu),
        SLO_BUDGET_MS: "20000",
        BREAKER_FAILURES: String(BREAKER_FAILURES),
        ...NO_HEDGES,
      },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([us?.stop(), eu?.stop()]);
    rmSync(modelsDir, { recursive: true, force: true });
  });

  const pinned = (version: string, row = unsureRows[3]!) =>
    post(
      worker,
      "/v1/classify",
      { model: "digits", version, inputs: [row.input], parameters: { cascade: "regional" } },
      { cf: NEW_YORK },
    );

  it("answers the pinned version from a region that has it; the one that does not is skipped, not ejected", async () => {
    for (let i = 0; i <= BREAKER_FAILURES; i++) {
      const answer = await pinned("1");
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ servedBy: "regional:eu", version: "1" });
      expect(answer.headers.get("x-model-version")).toBe("1");
      expectScores(answer.body, [unsureRows[3]!], "digits");
    }
    const skipped = await regionStatus(worker, "us");
    expect(skipped.breaker).toEqual({ state: "closed", failures: 0, ejections: 0 });
    expect(skipped.counters).toMatchObject({ admitted: BREAKER_FAILURES + 1, wrongVersion: BREAKER_FAILURES + 1 });
    expect(skipped.counters).toMatchObject({ failed: 0, answered: 0 });
    expect((await getJson<StatusBody>(worker, "/status/regions")).body.servedVersions.digits).toBe("1");

    // The v2 route pins through its path the same way.
    const infer = await post<{ model_version: string }>(
      worker,
      "/v2/models/digits/versions/1/infer",
      {
        inputs: [{ name: "pixels", shape: [1, 64], datatype: "FP32", data: unsureRows[4]!.input }],
        parameters: { cascade: "regional" },
      },
      { cf: NEW_YORK },
    );
    expect(infer.status).toBe(200);
    expect(infer.body.model_version).toBe("1");
    expect(infer.headers.get("x-served-by")).toBe("regional:eu");
  });

  it("an unpinned request is answered by the nearest region, whose newer version the edge then serves", async () => {
    const answer = await classify(worker, [unsureRows[5]!], { cascade: "regional" }, { cf: NEW_YORK });
    expect(answer.body).toMatchObject({ servedBy: "regional:us", version: "2" });
    expect((await getJson<StatusBody>(worker, "/status/regions")).body.servedVersions.digits).toBe("2");
    // From here version 1 is no longer served by this edge: pinning it is a 404 that names the served version.
    const old = await pinned("1");
    expect(old.status).toBe(404);
    expect((old.body as unknown as { error: string }).error).toMatch(/the served version is "2"/);
  });
});

describe("scheduled region status check", () => {
  let pool: RegionalPool;
  let modelsDir: string;
  let worker: EdgeWorker;
  beforeAll(async () => {
    modelsDir = modelsWithVersion2();
    pool = await startRegionalPool({ region: "us", modelsDir, env: { ADMIN_TOKEN } });
    const gone = `http://127.0.0.1:${await closedPort()}`;
    worker = await startEdgeWorker({
      vars: {
        // "gone" sits in Frankfurt, nearest to the requests below, but nothing listens on its port.
        REGIONS: regionsVar([
          { name: "us", url: pool.url, at: US_EAST },
          { name: "gone", url: gone, at: EU_CENTRAL },
        ]),
        SLO_BUDGET_MS: "20000",
        // A hedge to "gone" would blur whether the status check kept requests away from it.
        ...NO_HEDGES,
      },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await pool?.stop();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it("stores each region's readiness and versions in Workers KV, where the isolates of every colo read them", async () => {
    expect((await getJson<StatusBody>(worker, "/status/regions")).body.regionStatus).toBeNull();
    await loadVersion2(pool);
    await worker.scheduled();
    const { body } = await getJson<StatusBody>(worker, "/status/regions");
    const [us, gone] = body.regionStatus!.regions;
    expect(us).toMatchObject({ name: "us", ready: true, versions: { digits: "2", "breast-cancer": "1" } });
    // No round trip: one measured where the cron ran says nothing about the colos that serve requests.
    expect(us).not.toHaveProperty("latencyMs");
    expect(gone).toMatchObject({ name: "gone", ready: false });
    expect(gone!.error).toBeTruthy();
    expect(body.servedVersions).toEqual({ "breast-cancer": "1", digits: "2" });
    // The report went to Miniflare's own KV (REGION_STATUS), not to the colo-local Cache API.
    const kv = await worker.miniflare.getKVNamespace("REGION_STATUS");
    expect(await kv.get("regions", "json")).toEqual(body.regionStatus);
    const shared = (await worker.miniflare.getCaches()).default;
    expect(await shared.match("https://cache.edgecascade.internal/status/regions")).toBeUndefined();
  });

  it("orders a region the status check found not ready last, so requests go straight to a ready one", async () => {
    const answer = await classify(
      worker,
      [unsureRows[2]!],
      { cascade: "regional" },
      { cf: { ...NEW_YORK, ...FRANKFURT_POINT } },
    );
    expect(answer.body.servedBy).toBe("regional:us");
    expect((await regionStatus(worker, "gone")).counters.admitted).toBe(0);
  });
});

const FRANKFURT_POINT = { latitude: String(EU_CENTRAL.latitude), longitude: String(EU_CENTRAL.longitude) };
