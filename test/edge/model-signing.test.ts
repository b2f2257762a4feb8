import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { signRepository, testSigner } from "../support/model-keys.ts";
import { copyModels, startTestServer, type TestServer, testOptions } from "../support/regional-server.ts";
import { closedPort, confidentRows, getJson, NO_HEDGES, post, regionsVar, US_EAST, warmEdge } from "./support.ts";

// One bundle of a signed copy of the repository, run with the right key, another key and none; a real pool
// (verifying with the right key) behind it.
const signer = await testSigner();
const other = await testSigner();
const row = confidentRows[0]!.input;

let models: ReturnType<typeof copyModels>;
let pool: TestServer;
beforeAll(async () => {
  models = copyModels();
  await signRepository(models.dir, signer);
  pool = await startTestServer(testOptions(["--models", models.dir], { MODEL_PUBLIC_KEY: signer.publicKey }));
});
afterAll(async () => {
  await pool?.shutdown();
  models?.remove();
});

/** The Worker of the signed repository with `vars` on top; what it logs goes to `logs`. */
async function worker(vars: Record<string, string>, logs: string[] = []): Promise<EdgeWorker> {
  const REGIONS = regionsVar([{ name: "us", url: pool.url, at: US_EAST }]);
  return startEdgeWorker({
    modelsDir: models.dir,
    vars: { REGIONS, SLO_BUDGET_MS: "20000", ...NO_HEDGES, ...vars },
    onLog: (_level, message) => logs.push(message),
  });
}

interface Status {
  modelSignatures: unknown;
  models: Record<
    string,
    { edge: { loaded: boolean; loadError?: string } | null; requests: { edgeFailed: number; failed: number } }
  >;
}

describe("edge model signatures in workerd", () => {
  it("with the right key, the signed edge model loads and answers", async () => {
    const w = await worker({ MODEL_PUBLIC_KEY: signer.publicKey });
    try {
      await warmEdge(w); // 200: the signed variants loaded
      const answer = await post(w, "/v1/classify", { model: "digits", inputs: row });
      expect(answer).toMatchObject({ status: 200, body: { servedBy: "edge" } });
      const meta = await getJson<{ modelSignatures: unknown }>(w, "/v2");
      expect(meta.body.modelSignatures).toEqual({ required: true, key: signer.keyId });
    } finally {
      await w.dispose();
    }
  });

  it("with another key, the edge model is refused with the reason and the region answers instead", async () => {
    const logs: string[] = [];
    const w = await worker({ MODEL_PUBLIC_KEY: other.publicKey }, logs);
    const reason = `signature refused: digits-edge/1 is signed by key ${signer.keyId}, and this server only trusts key ${other.keyId}; the edge model will not load`;
    try {
      const answer = await post(w, "/v1/classify", { model: "digits", inputs: row });
      expect(answer).toMatchObject({ status: 200, body: { servedBy: "regional:us" } });
      // Readiness tries the load (a cold isolate's first request leaves it to after its answer) and fails.
      expect((await getJson(w, "/v2/health/ready")).status).toBe(503);
      const status = await getJson<Status>(w, "/status");
      expect(status.body.models.digits!.edge).toMatchObject({ loaded: false });
      expect(status.body.models.digits!.edge!.loadError).toBe(reason);
      // A request that runs the edge model: its failure is answered, logged with model and version, and counted.
      const forced = await post(w, "/v1/classify", { model: "digits", inputs: row, parameters: { cascade: "edge" } });
      expect(forced).toMatchObject({ status: 503, body: { error: `edge model not available: ${reason}` } });
      expect(logs).toContain(`edge model digits-edge version 1 (model digits) failed: ${reason}`);
      expect((await getJson<Status>(w, "/status")).body.models.digits!.requests).toMatchObject({
        edgeFailed: 1,
        failed: 1,
      });
    } finally {
      await w.dispose();
    }
    // No region either: the 503 says why the edge model could not answer instead.
    const gone = await startEdgeWorker({
      modelsDir: models.dir,
      vars: {
        REGIONS: regionsVar([{ name: "us", url: `http://127.0.0.1:${await closedPort()}`, at: US_EAST }]),
        MODEL_PUBLIC_KEY: other.publicKey,
      },
    });
    try {
      await getJson(gone, "/v2/health/ready"); // the edge model's load is tried, and fails
      const stranded = await post(gone, "/v1/classify", { model: "digits", inputs: row });
      expect(stranded.status).toBe(503);
      expect((stranded.body as unknown as { error: string }).error).toMatch(
        /^no region answered and the edge model is not available \(signature refused: /,
      );
    } finally {
      await gone.dispose();
    }
  });

  it("without a key, unsigned models load and /v2 and /status say signatures are not verified", async () => {
    const w = await worker({});
    try {
      await warmEdge(w);
      expect((await post(w, "/v1/classify", { model: "digits", inputs: row })).body.servedBy).toBe("edge");
      expect((await getJson<{ modelSignatures: unknown }>(w, "/v2")).body.modelSignatures).toEqual({ required: false });
      expect((await getJson<Status>(w, "/status")).body.modelSignatures).toEqual({ required: false });
    } finally {
      await w.dispose();
    }
  });
});
