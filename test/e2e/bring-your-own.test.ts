import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argmax, type HeldoutSet } from "../../protocol/heldout.ts";
import { calibrationOf, parseModelConfig } from "../../protocol/model-config.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import type { ClassifyResponse } from "../../protocol/types.ts";
import { type LocalStack, startLocalStack } from "../support/local-stack.ts";
import {
  csv,
  nearestCentroidMlp,
  SAMPLE_CENTROIDS,
  SAMPLE_STUMPS,
  stumpForest,
  threeClassBlobs,
  twoClassBlobs,
} from "../support/onnx-models.ts";
import { isRunning } from "../support/processes.ts";

/**
 * Bring your own models, end to end: a fresh MLP (edge variant by --quantize) and a fresh tree ensemble (edge
 * variant of its own), made here, imported with `npm run model -- import` into an empty repository, then served
 * by `npm start` with MODELS_DIR pointing at it: the Worker bundle is generated from that repository.
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const SECRET = "bring-your-own-secret";
const dir = mkdtempSync(join(tmpdir(), "edgecascade-byo-"));
const models = join(dir, "models");
const file = (name: string, content: string | Uint8Array) => {
  writeFileSync(join(dir, name), content);
  return join(dir, name);
};
const model = (...argv: string[]) => promisify(execFile)(process.execPath, ["tools/model.ts", ...argv], { cwd: ROOT });

let stack: LocalStack;
const summaries: string[] = [];

beforeAll(async () => {
  const mlpData = threeClassBlobs();
  const treeData = twoClassBlobs();
  const imported = await model(
    ...["import", "--name", "blobs", "--full", file("mlp.onnx", nearestCentroidMlp(SAMPLE_CENTROIDS, 2)), "--quantize"],
    ...["--data", file("blobs.csv", csv(mlpData.rows, mlpData.labels)), "--labels", "origin,east,north"],
    ...["--agreement", "0.98", "--models", models],
  );
  summaries.push(imported.stdout);
  const trees = await model(
    ...["import", "--name", "stumps", "--full", file("forest.onnx", stumpForest(3, SAMPLE_STUMPS))],
    ...[
      "--edge",
      file(
        "small.onnx",
        stumpForest(
          3,
          SAMPLE_STUMPS.filter((s) => s.threshold === 0),
        ),
      ),
    ],
    ...["--data", file("trees.csv", csv(treeData.rows, treeData.labels, ["a", "b", "c", "y"]))],
    ...["--labels", "no,yes", "--agreement", "0.95", "--models", models],
  );
  summaries.push(trees.stdout);
  stack = await startLocalStack(
    {
      MODELS_DIR: models,
      REGIONAL_SHARED_SECRET: SECRET,
      // Which tier answers is what these tests look at: a budget a loaded machine's first calls cannot miss.
      EDGE_SLO_BUDGET_MS: "5000",
      EDGE_HEDGE_BUDGET_RATIO: "0",
      EDGE_HEDGE_BUDGET_BURST: "0",
      // As a person runs it, so that its end can be SIGHUP to npm (below).
    },
    { viaNpm: true },
  );
  // A warm isolate: a cold one forwards its first requests while its sessions are created (docs/edge.md).
  expect((await fetch(`${stack.edgeUrl}/v2/health/ready`)).status).toBe(200);
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const config = (name: string) =>
  parseModelConfig(JSON.parse(readFileSync(join(models, name, "config.json"), "utf8")), name);
const fixture = (name: string): HeldoutSet => JSON.parse(readFileSync(join(models, name, "1", "heldout.json"), "utf8"));

async function classify(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/v1/classify`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as ClassifyResponse & { error?: string } };
}

describe("npm run model -- import, then npm start", () => {
  it("printed a summary of each import", () => {
    expect(summaries[0]).toMatch(/^blobs: 4 features -> 3 classes \(origin, east, north\)/);
    expect(summaries[0]).toMatch(/quantization: 2 weight tensors to int8, \d+ -> \d+ bytes/);
    expect(summaries[1]).toMatch(/^stumps: 3 features -> 2 classes \(no, yes\)/);
    expect(summaries[1]).toMatch(
      /cascade: the edge answers when its top probability is at least [\d.]+: agreement with the full model at least 0\.95 \(proven 0\.9\d+ at 95% confidence on the \d+ calibration rows it answers there/,
    );
    expect(stack.output()).toContain("models    blobs (edge: blobs-edge) · stumps (edge: stumps-edge)");
  });

  it.each(["blobs", "stumps"])(
    "%s: every held-out row gets the label of the tier that answered, at the edge or in a region",
    async (name) => {
      const { rows } = fixture(name);
      const { labels } = config(name);
      const { threshold } = calibrationOf(config(`${name}-edge`));
      const tiers = new Set<string>();
      for (const row of rows) {
        const { status, body } = await classify(stack.edgeUrl, { model: name, inputs: row.input });
        expect(status, body.error).toBe(200);
        const tier = body.servedBy.startsWith("regional:") ? "regional" : body.servedBy;
        tiers.add(tier);
        const confident = Math.max(...row.expected[`${name}-edge`]!) >= threshold;
        expect(tier).toBe(confident ? "edge" : "regional");
        const answeredBy = confident ? `${name}-edge` : name;
        expect(body.predictions[0]!.label).toBe(labels[argmax(row.expected[answeredBy]!)]);
      }
      expect([...tiers].sort()).toEqual(["edge", "regional"]);
    },
  );

  it("the regional pools serve both models themselves, signed calls only", async () => {
    const pool = stack.output().match(/regional {2}ready {2}us (http:\/\/127\.0\.0\.1:\d+)/)![1]!;
    for (const name of ["blobs", "stumps"]) {
      const meta = await (await fetch(`${pool}/v2/models/${name}`)).json();
      expect(meta).toMatchObject({ name, versions: ["1"], labels: config(name).labels });
      const rows = fixture(name).rows.slice(0, 20);
      const body = JSON.stringify({ model: name, inputs: rows.map((r) => r.input) });
      const unsigned = await classify(pool, JSON.parse(body));
      expect(unsigned.status).toBe(401);
      const headers = await signatureHeaders(SECRET, { method: "POST", path: "/v1/classify", body });
      const res = await fetch(`${pool}/v1/classify`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
      const answer = (await res.json()) as ClassifyResponse;
      expect(answer.predictions.map((p) => p.class)).toEqual(rows.map((r) => argmax(r.expected[name]!)));
    }
  });

  it("serves exactly the imported models: anything else is a 404 naming them", async () => {
    const { status, body } = await classify(stack.edgeUrl, { model: "digits", inputs: [0, 0, 0, 0] });
    expect(status).toBe(404);
    expect(body.error).toBe('unknown model "digits"; this endpoint serves "blobs", "stumps"');
    const index = (await (await fetch(`${stack.edgeUrl}/v2/repository/index`, { method: "POST" })).json()) as {
      name: string;
      edge: { name: string } | null;
    }[];
    expect(index.map((m) => [m.name, m.edge?.name])).toEqual([
      ["blobs", "blobs-edge"],
      ["stumps", "stumps-edge"],
    ]);
  });
});

describe("SIGHUP to npm (a closed terminal, an IDE's stop)", () => {
  it("stops every process of the stack", async () => {
    const pids = stack.pids;
    expect(pids.length).toBeGreaterThanOrEqual(5); // npm, scripts/start.ts, three pools, workerd
    process.kill(stack.process.pid!, "SIGHUP");
    await expect.poll(() => pids.filter(isRunning), { timeout: 20_000 }).toEqual([]);
  });
});
