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
// edge/region-status/store.ts's REGION_STATUS_KEY and REPORT_MAX_AGE_S (that file needs the Workers types, which
// the tests' tsconfig leaves out).
const REGION_STATUS_KEY = "regions";
const REPORT_MAX_AGE_S = 300;
/** Short, so the test sees the memo expire; long enough that two requests in a row fall inside it. */
const MEMO_MS = 3000;

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
 * writer and the reader are two Miniflare instances, one after the other, on one persist directory: the
 * reader's isolate has no memory of the writer's, so what it shows can only have come from KV.
 */
describe("the region status report in Workers KV, read by an isolate that never ran the cron", () => {
  let modelsDir: string;
  let pool: RegionalPool;
  let persistDir: string;
  let regions: string;
  let reader: EdgeWorker | undefined;
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
    await reader?.dispose();
    await pool?.stop();
    rmSync(modelsDir, { recursive: true, force: true });
    rmSync(persistDir, { recursive: true, force: true });
  });

  it("shows the readiness and served versions another isolate's cron wrote, and memoises them for PROBE_MEMO_MS", async () => {
    // The writer: runs the cron once, then is gone.
    const writer = await startEdgeWorker({ persistDir, vars: { REGIONS: regions, PROBE_MEMO_MS: String(MEMO_MS) } });
    let written: RegionStatusReport;
    try {
      await writer.scheduled();
      const kv = await writer.miniflare.getKVNamespace("REGION_STATUS");
      written = (await kv.get(REGION_STATUS_KEY, "json")) as RegionStatusReport;
      expect(written.regions).toMatchObject([
        { name: "us", ready: true, versions: { digits: "2", "breast-cancer": "1" } },
        { name: "gone", ready: false },
      ]);
    } finally {
      await writer.dispose();
    }

    // The reader: a fresh Worker whose cron never runs; its bundle serves digits 1.
    reader = await startEdgeWorker({ persistDir, vars: { REGIONS: regions, PROBE_MEMO_MS: String(MEMO_MS) } });
    const firstReadFrom = Date.now();
    const first = (await getJson<StatusBody>(reader, "/status/regions")).body;
    expect(first.probe).toEqual(written);
    // Readiness and the served version from the report: only the writer's cron saw digits 2 at the pool.
    expect(first.servedVersions).toEqual({ "breast-cancer": "1", digits: "2" });

    // A newer report lands in KV as the cron writes it (store.ts): us not ready, gone ready with digits 3.
    const newer: RegionStatusReport = {
      at: Date.now(),
      regions: [
        { name: "us", ready: false, error: "ready: HTTP 503" },
        { name: "gone", ready: true, versions: { digits: "3", "breast-cancer": "1" } },
      ],
    };
    const kv = await reader.miniflare.getKVNamespace("REGION_STATUS");
    await kv.put(REGION_STATUS_KEY, JSON.stringify(newer), { expirationTtl: REPORT_MAX_AGE_S });

    // Within PROBE_MEMO_MS of its read, the isolate still shows the report it read.
    const memoised = (await getJson<StatusBody>(reader, "/status/regions")).body;
    const memoisedAnsweredAt = Date.now();
    if (memoisedAnsweredAt - firstReadFrom < MEMO_MS) {
      expect(memoised.probe).toEqual(written);
      expect(memoised.servedVersions.digits).toBe("2");
    } else {
      // Both requests did not fit in the memo on this (loaded) machine: the memo may have expired already.
      expect([written, newer]).toContainEqual(memoised.probe);
    }

    // After it, the newer report and what it says: never before PROBE_MEMO_MS from the first read.
    let seen: StatusBody | undefined;
    let seenAt = 0;
    for (let i = 0; i < 100 && !seen; i++) {
      const { body } = await getJson<StatusBody>(reader, "/status/regions");
      if (body.probe?.at === newer.at) [seen, seenAt] = [body, Date.now()];
      else {
        expect(body.probe).toEqual(written);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect(seen?.probe).toEqual(newer);
    expect(seenAt - firstReadFrom).toBeGreaterThanOrEqual(MEMO_MS);
    // Served versions only rise: digits 3 from the newer report.
    expect(seen?.servedVersions).toEqual({ "breast-cancer": "1", digits: "3" });
  });
});
