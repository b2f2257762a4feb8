import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegionStatusReport } from "../../edge/region-status/check.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { MODELS_DIR } from "../support/heldout.ts";
import { closedPort, EU_CENTRAL, getJson, regionsVar, type StatusBody, US_EAST } from "./support.ts";

const ADMIN_TOKEN = "admin-token";
// edge/region-status/store.ts's REGION_STATUS_KEY (that file needs the Workers types, which the tests' tsconfig
// leaves out).
const REGION_STATUS_KEY = "regions";
/**
 * The reader's memo: longer than the test could take, so whatever the machine's speed, its reads after the first
 * come from the memo. When a memo expires is edge/region-status/store.test.ts's, on a clock that test controls;
 * here a second reader without a memo shows the newer report.
 */
const MEMO_MS = 3_600_000;

/** A copy of models/ where digits also has a version 2, which the pool then loads: the edge's bundle stays at 1. */
async function poolServingDigits2(): Promise<{ pool: RegionalPool; modelsDir: string }> {
  const modelsDir = mkdtempSync(join(tmpdir(), "edgecascade-models-"));
  cpSync(MODELS_DIR, modelsDir, { recursive: true });
  cpSync(join(modelsDir, "digits/1"), join(modelsDir, "digits/2"), { recursive: true });
  const configPath = join(modelsDir, "digits/config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  config.versions["2"] = config.versions["1"];
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const pool = await startRegionalPool({ region: "us", modelsDir, env: { ADMIN_TOKEN } });
  const response = await fetch(`${pool.url}/v2/repository/models/digits/load`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ parameters: { version: "2" } }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return { pool, modelsDir };
}

/**
 * The cron's report reaches isolates that never ran the cron, through Workers KV (REGION_STATUS) alone. The
 * writer and the reader are two Miniflare instances (two workerd processes) on one persist directory, so one
 * KV namespace: the reader's isolate shares no memory with the writer's, and what it shows can only come from KV.
 */
describe("the region status report in Workers KV, read by an isolate that never ran the cron", () => {
  let modelsDir: string;
  let pool: RegionalPool;
  let persistDir: string;
  let regions: string;
  let writer: EdgeWorker | undefined;
  let reader: EdgeWorker | undefined;
  let fresh: EdgeWorker | undefined;
  beforeAll(async () => {
    persistDir = mkdtempSync(join(tmpdir(), "edgecascade-kv-"));
    ({ pool, modelsDir } = await poolServingDigits2());
    const gone = `http://127.0.0.1:${await closedPort()}`;
    regions = regionsVar([
      { name: "us", url: pool.url, at: US_EAST },
      { name: "gone", url: gone, at: EU_CENTRAL },
    ]);
  });
  afterAll(async () => {
    await Promise.all([writer?.dispose(), reader?.dispose(), fresh?.dispose()]);
    await pool?.stop();
    rmSync(modelsDir, { recursive: true, force: true });
    rmSync(persistDir, { recursive: true, force: true });
  });

  it("shows the readiness and served versions another isolate's cron wrote, and memoises them for REGION_STATUS_MEMO_MS", async () => {
    const vars = { REGIONS: regions, REGION_STATUS_MEMO_MS: String(MEMO_MS) };
    // The writer: the isolate whose cron runs. Its bundle, like the reader's, serves digits 1.
    writer = await startEdgeWorker({ persistDir, vars });
    await writer.scheduled();
    const kv = await writer.miniflare.getKVNamespace("REGION_STATUS");
    const written = (await kv.get(REGION_STATUS_KEY, "json")) as RegionStatusReport;
    expect(written.regions).toMatchObject([
      { name: "us", ready: true, versions: { digits: "2", "breast-cancer": "1" } },
      { name: "gone", ready: false },
    ]);
    // The pool goes away before the reader exists: what the reader says of it can only come from KV.
    await pool.stop();

    // The readers: other Workers on the same storage, whose cron never runs and which never reach a region; the
    // first memoises what it reads for longer than this test, the second (no memo) reads KV on every request.
    [reader, fresh] = await Promise.all([
      startEdgeWorker({ persistDir, vars }),
      startEdgeWorker({ persistDir, vars: { ...vars, REGION_STATUS_MEMO_MS: "0" } }),
    ]);
    for (const isolate of [reader, fresh]) {
      const first = (await getJson<StatusBody>(isolate, "/status/regions")).body;
      expect(first.regionStatus).toEqual(written);
      // The served version from the report: only the writer's cron saw digits 2 at the pool.
      expect(first.servedVersions).toEqual({ "breast-cancer": "1", digits: "2" });
    }

    // The writer's next cron finds us gone and writes a newer report.
    await writer.scheduled();
    const newer = (await kv.get(REGION_STATUS_KEY, "json")) as RegionStatusReport;
    expect(newer.at).toBeGreaterThan(written.at);
    expect(newer.regions).toMatchObject([
      { name: "us", ready: false },
      { name: "gone", ready: false },
    ]);

    // Within REGION_STATUS_MEMO_MS of its read, an isolate still shows the report it read.
    const memoised = (await getJson<StatusBody>(reader, "/status/regions")).body;
    expect(memoised.regionStatus).toEqual(written);
    expect(memoised.servedVersions.digits).toBe("2");

    // Past its memo (here: none), the newer report and what it says.
    const seen = (await getJson<StatusBody>(fresh, "/status/regions")).body;
    expect(seen.regionStatus).toEqual(newer);
    // Served versions only rise: a region that stopped answering does not take digits back to 1.
    expect(seen.servedVersions).toEqual({ "breast-cancer": "1", digits: "2" });
  });
});
