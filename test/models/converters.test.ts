import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ortWeb from "onnxruntime-web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../protocol/digest.ts";
import type { HeldoutSet } from "../../protocol/heldout.ts";
import { runCommand } from "../../tools/cli/command.ts";
import { RefusedError } from "../../tools/cli/errors.ts";
import { parseImportOptions } from "../../tools/model/import/options.ts";
import { importModel } from "../../tools/model/import/run.ts";
import { importSummary } from "../../tools/model/import/summary.ts";
import { inspectCommand } from "../../tools/model/onnx/inspect-command.ts";
import { decodeModel, EXTERNAL_DATA } from "../../tools/model/onnx/proto.ts";
import { get, metric, post, startTestServer, type TestServer, testOptions } from "../support/regional-server.ts";

/**
 * Models as skl2onnx, onnxmltools and torch.onnx.export write them at their defaults (committed fixtures made
 * by test/fixtures/converters/make_fixtures.py), imported unchanged, then served by a real pool whose answers
 * are compared with the framework's own predict_proba on every row of the data.
 */
const FIXTURES = new URL("../fixtures/converters/", import.meta.url).pathname;
const fixture = (name: string) => join(FIXTURES, name);
const expected = JSON.parse(readFileSync(fixture("expected.json"), "utf8")) as Record<
  string,
  { data: string; probabilities: number[][] }
>;

const dir = mkdtempSync(join(tmpdir(), "edgecascade-converters-"));
const models = join(dir, "models");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** breast-cancer.csv with its label column as names (0 malignant, 1 benign), as a user's data often is. */
const namedCancerCsv = join(dir, "breast-cancer-named.csv");
writeFileSync(
  namedCancerCsv,
  readFileSync(fixture("breast-cancer.csv"), "utf8").replace(
    /,([01])$/gm,
    (_, c) => `,${c === "0" ? "malignant" : "benign"}`,
  ),
);

const importing = (argv: string[]) => {
  const notes: string[] = [];
  return importModel(parseImportOptions([...argv, "--models", models]), (l) => notes.push(l)).then((result) => ({
    result,
    notes,
  }));
};
const refusal = (argv: string[]) =>
  importing(argv).then(
    () => undefined,
    (err: Error) => err,
  );
const config = (name: string) => JSON.parse(readFileSync(join(models, name, "config.json"), "utf8"));

/** The rows of a fixture CSV (features only). */
function csvRows(file: string): number[][] {
  const lines = readFileSync(fixture(file), "utf8").trim().split("\n").slice(1);
  return lines.map((l) => l.split(",").slice(0, -1).map(Number));
}

describe("converters' default exports import unchanged", () => {
  it("skl2onnx's random forest with a ZipMap: the probability tensor behind it is served", async () => {
    const { result } = await importing([
      "--name",
      "rf",
      "--full",
      fixture("rf-zipmap.onnx"),
      "--data",
      fixture("breast-cancer.csv"),
      "--labels",
      "malignant,benign",
    ]);
    expect(result.facts.full.conversions).toEqual([
      {
        step: "zipmap",
        detail:
          'ZipMap "ZipMap" removed: "probabilities" (the probability tensor it was built from) is served instead of "output_probability"',
      },
    ]);
    expect(config("rf")).toMatchObject({
      labels: ["malignant", "benign"],
      outputs: [{ name: "probabilities", shape: [-1, 2] }],
      versions: { 1: { conversions: [{ step: "zipmap" }] } },
    });
  });

  it("class names the model carries (classlabels_strings) are its labels; --labels that contradict them are refused", async () => {
    const swapped = await refusal([
      "--name",
      "lr",
      "--full",
      fixture("lr-strings.onnx"),
      "--data",
      namedCancerCsv,
      "--labels",
      "malignant,benign",
    ]);
    expect(swapped).toBeInstanceOf(RefusedError);
    expect(swapped!.message).toBe(
      '--full lr-strings.onnx: --labels malignant,benign contradict the model: its output columns are benign, malignant (ZipMap "ZipMap" (classlabels_strings)), ' +
        "the same names in another order. The columns follow the classes the model was trained on (scikit-learn: sorted classes_); drop --labels to use the model's",
    );
    await importing(["--name", "lr", "--full", fixture("lr-strings.onnx"), "--data", namedCancerCsv]);
    expect(config("lr").labels).toEqual(["benign", "malignant"]);
  });

  it("labels encoded in another order than the model's columns: below chance, refused with the likely cause, nothing written", async () => {
    // breast-cancer.csv says 0 for malignant; the model's column 0 is benign (sorted classes_).
    const failure = await refusal([
      "--name",
      "lr-swapped",
      "--full",
      fixture("lr-strings.onnx"),
      "--data",
      fixture("breast-cancer.csv"),
    ]);
    expect(failure).toBeInstanceOf(RefusedError);
    expect(failure!.message).toMatch(
      /held-out accuracy 1\.16% is below chance \(50\.00% for 2 classes\), so the data's labels do not follow the model's output columns \(benign, malignant\)\. Read as malignant, benign, the columns would score 98\.84%.*sorted classes_\)\. Nothing was written$/,
    );
    expect(existsSync(join(models, "lr-swapped"))).toBe(false);
  });

  it("skl2onnx's FP64 input: cast to FP32 at the input, stated and measured against the FP64 model", async () => {
    const { result } = await importing([
      "--name",
      "lr64",
      "--full",
      fixture("lr-fp64.onnx"),
      "--data",
      fixture("wine.csv"),
    ]);
    const [cast, outputCast] = result.facts.full.conversions!;
    expect(cast).toMatchObject({ step: "input-cast", measured: { rows: 107, labelAgreement: 1 } });
    expect(cast!.measured!.maxProbabilityDifference).toBeLessThan(1e-5);
    expect(outputCast).toMatchObject({ step: "output-cast" });
    expect(importSummary(result)).toMatch(
      /converted \(lr64\): input "X" was FP64: .*; on the 107 rows of the data, labels agree with the FP64 model on 100\.00%, probabilities differ by at most/,
    );
    expect(config("lr64")).toMatchObject({ inputs: [{ name: "X", datatype: "FP32" }], labels: ["0", "1", "2"] });
  });

  it("margins (LinearSVC behind a ZipMap): refused without --softmax, a Softmax appended with it", async () => {
    const failure = await refusal([
      "--name",
      "svc",
      "--full",
      fixture("linearsvc-zipmap.onnx"),
      "--data",
      fixture("wine.csv"),
    ]);
    expect(failure!.message).toMatch(
      /not a probability: the model ends in logits or margins.*Import it with --softmax/,
    );
    const { result } = await importing([
      "--name",
      "svc",
      "--full",
      fixture("linearsvc-zipmap.onnx"),
      "--softmax",
      "--data",
      fixture("wine.csv"),
    ]);
    expect(result.facts.full.conversions!.map((c) => c.step)).toEqual(["zipmap", "softmax"]);
    expect(config("svc").versions["1"].conversions[1].detail).toMatch(/^Softmax appended to "probabilities"/);
  });

  it("torch.onnx.export's logits with external data: inlined into the stored file, Softmax with --softmax; alone, refused naming the file", async () => {
    const lonely = join(dir, "lonely.onnx");
    copyFileSync(fixture("torch-mlp/model.onnx"), lonely);
    const missing = await refusal(["--name", "torch", "--full", lonely, "--softmax", "--data", fixture("wine.csv")]);
    expect(missing!.message).toContain(
      `--full lonely.onnx: its weights are in an external file, ${join(dir, "model.onnx.data")} (location "model.onnx.data"), which cannot be read`,
    );
    const { result } = await importing([
      "--name",
      "torch",
      "--full",
      fixture("torch-mlp/model.onnx"),
      "--softmax",
      "--data",
      fixture("wine.csv"),
    ]);
    expect(result.facts.full.conversions!.map((c) => c.step)).toEqual(["external-data", "softmax"]);
    const stored = decodeModel(readFileSync(join(models, "torch", "1", "model.onnx")));
    expect(stored.graph!.initializer.filter((t) => t.dataLocation === EXTERNAL_DATA)).toEqual([]);
    expect(stored.graph!.node.at(-1)!.opType).toBe("Softmax");
  });

  it("LightGBM-style boosters (base values, LOGISTIC / SOFTMAX, ZipMap) with edge variants of their first trees", async () => {
    const { result } = await importing([
      "--name",
      "gbdt",
      "--full",
      fixture("gbdt-binary.onnx"),
      "--edge-trees",
      "8",
      // 170 calibration rows prove at most 0.05^(1/170) = 0.9825 at 95%.
      "--agreement",
      "0.98",
      "--data",
      fixture("breast-cancer.csv"),
      "--labels",
      "malignant,benign",
    ]);
    expect(result.facts.edge!.trees).toEqual({ kept: 8, of: 48, kind: "boosted", postTransform: "LOGISTIC" });
    expect(config("gbdt-edge").versions["1"]).toMatchObject({
      trees: { from: { model: "gbdt", version: "1" }, kept: 8, of: 48 },
      cascade: { against: { model: "gbdt", version: "1" } },
    });
    // The edge runs it in onnxruntime-web: the same outputs as the fixture's (onnxruntime-node's).
    const heldout = JSON.parse(readFileSync(join(models, "gbdt", "1", "heldout.json"), "utf8")) as HeldoutSet;
    const session = await ortWeb.InferenceSession.create(readFileSync(join(models, "gbdt-edge", "1", "model.onnx")), {
      executionProviders: ["wasm"],
    });
    const input = Float32Array.from(heldout.rows.flatMap((r) => r.input));
    const out = await session.run({ X: new ortWeb.Tensor("float32", input, [heldout.rows.length, 30]) }, [
      "probabilities",
    ]);
    const web = out.probabilities!.data as Float32Array;
    heldout.rows.forEach((r, i) => {
      expect(web[i * 2 + 1]).toBeCloseTo(r.expected["gbdt-edge"]![1]!, 5);
    });
    await session.release();
    // Wine, 178 rows: 52 calibrate, 48 of them answered by the first 12 trees without a disagreement, which
    // proves 0.9394 at 95%; the held-out rows then show 91.84% (45 of 49). The promise of 0.93 is refused with those
    // numbers (issue 33: it was written, and broken on the held-out rows); 0.9 is kept.
    const wine = (agreement: string) => [
      ...["--name", "gbdt3", "--full", fixture("gbdt-softmax.onnx"), "--edge-trees", "12"],
      ...["--agreement", agreement, "--data", fixture("wine.csv")],
    ];
    const broken = await refusal(wine("0.93"));
    expect(broken).toBeInstanceOf(RefusedError);
    expect(broken!.message).toMatch(
      /agrees with the full model on 91\.84% of the 49 held-out rows it answers at threshold [\d.]+, below --agreement 0\.93, although its 48 calibration rows there \(0 disagreeing\) proved 0\.9394 at 95% confidence/,
    );
    await importing(wine("0.9"));
    expect(config("gbdt3-edge").versions["1"].cascade).toMatchObject({ agreementTarget: 0.9, confidence: 0.95 });
  });

  it("exports with a fixed batch (skl2onnx's [1, N], torch.onnx.export without dynamic_axes) import, saying what was chosen", async () => {
    const lr = await importing([
      "--name",
      "lr-fixed",
      "--full",
      fixture("lr-fixed.onnx"),
      "--data",
      fixture("breast-cancer.csv"),
      "--labels",
      "malignant,benign",
    ]);
    expect(config("lr-fixed").versions["1"].fixedBatch).toBe(1);
    expect(importSummary(lr.result)).toContain(
      'fixed batch (lr-fixed): input "X" was exported as [1, 30], not [-1, 30]: served one row per run (as Triton serves max_batch_size 0)',
    );
    // An int8 edge variant quantized from a fixed-batch MLP keeps its fixed batch; both run at the edge's batch sizes.
    const torch = await importing([
      "--name",
      "torch-fixed",
      "--full",
      fixture("torch-fixed.onnx"),
      "--softmax",
      "--quantize",
      // The 52 calibration rows of wine.csv prove at most 0.944 at 95% confidence (the import's rule since issue 33).
      "--agreement",
      "0.9",
      "--data",
      fixture("wine.csv"),
    ]);
    expect(torch.result.facts.edge!.tensors.fixedBatch).toBe(1);
    expect(config("torch-fixed-edge").versions["1"]).toMatchObject({ fixedBatch: 1, weights: "int8" });
    expect(importSummary(torch.result)).toMatch(
      /fixed batch \(torch-fixed-edge\): input "input" was exported as \[1, 13\]/,
    );
  });

  describe("served by a real pool, as the framework predicts", () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer(testOptions(["--models", models]));
    });
    afterAll(() => server?.shutdown());

    it.each([
      ["rf", "rf-zipmap"],
      ["lr", "lr-strings"],
      ["lr64", "lr-fp64"],
      ["svc", "linearsvc-zipmap"],
      ["torch", "torch-mlp"],
      ["gbdt", "gbdt-binary"],
      ["gbdt3", "gbdt-softmax"],
      // Fixed batch of 1: each request's 32 rows run one at a time.
      ["lr-fixed", "lr-fixed"],
      ["torch-fixed", "torch-fixed"],
    ])("%s answers every row with the framework's probabilities (%s)", async (model, name) => {
      const want = expected[name]!;
      const rows = csvRows(want.data);
      const labels = config(model).labels as string[];
      let worst = 0;
      for (let start = 0; start < rows.length; start += 32) {
        const res = await post(`${server.url}/v1/classify`, { model, inputs: rows.slice(start, start + 32) });
        expect(res.status).toBe(200);
        res.body.predictions.forEach((p: { scores: number[]; label: string }, i: number) => {
          const probs = want.probabilities[start + i]!;
          probs.forEach((q, c) => {
            worst = Math.max(worst, Math.abs(p.scores[c]! - q));
          });
          expect(p.label).toBe(labels[probs.indexOf(Math.max(...probs))]);
        });
      }
      // float32 inference against float64 sklearn (and float32 tree thresholds): within 1e-4.
      expect(worst).toBeLessThan(1e-4);
    });

    it("describes a fixed-batch model as Triton does one with max_batch_size 0, and batches no more than it takes", async () => {
      const triton = await get(`${server.url}/v2/models/lr-fixed/config`);
      expect(triton.body).toMatchObject({ max_batch_size: 0, input: [{ name: "X", dims: [1, 30] }] });
      expect(triton.body.dynamic_batching).toBeUndefined();
      // Concurrent one-row requests: the batcher never gathers more rows than a run takes, one execution each.
      const counts = async () => {
        const text = (await get(`${server.url}/metrics`)).body as string;
        const labels = { model: "lr-fixed" };
        return [
          metric(text, "edgecascade_inference_executions_total", labels),
          metric(text, "edgecascade_inference_rows_total", labels),
        ];
      };
      const [executions, rowsBefore] = await counts();
      const rows = csvRows("breast-cancer.csv").slice(0, 24);
      const answers = await Promise.all(
        rows.map((r) => post(`${server.url}/v1/classify`, { model: "lr-fixed", inputs: r })),
      );
      for (const a of answers) expect(a.status).toBe(200);
      expect(await counts()).toEqual([executions! + 24, rowsBefore! + 24]);
    });
  });
});

describe("inspect agrees with import", () => {
  const inspect = async (argv: string[]) => {
    const lines: string[] = [];
    const notes: string[] = [];
    const out = { log: (l: string) => lines.push(l), note: (l: string) => notes.push(l) };
    const code = await runCommand(inspectCommand, argv, out);
    return { code, lines, refusal: notes.join("\n") };
  };

  it("refuses what import refuses (logits without --softmax, external data that is not there) and shows the conversions", async () => {
    const logits = await inspect([fixture("torch-mlp/model.onnx")]);
    expect(logits).toMatchObject({
      code: 1,
      refusal: expect.stringMatching(/not a probability: .*Import it with --softmax/),
    });
    const lonely = join(dir, "inspect-lonely.onnx");
    copyFileSync(fixture("torch-mlp/model.onnx"), lonely);
    const refused = await inspect([lonely]);
    expect(refused.code).toBe(1);
    expect(refused.refusal).toContain(`${join(dir, "model.onnx.data")}`);
    const ok = await inspect(["--softmax", fixture("torch-mlp/model.onnx")]);
    expect(ok.code).toBe(0);
    expect(ok.lines.join("\n")).toMatch(
      /loads in onnxruntime-node[\s\S]*converted {6}6 initializers \(1204 bytes\) copied from model\.onnx\.data[\s\S]*converted {6}Softmax appended/,
    );
  });
});

describe("one model that cannot load never takes the others down", () => {
  it("a version whose weights are outside its file is refused at start; the pod serves the others and says why", async () => {
    // As the issue found it: torch's model.onnx stored without its model.onnx.data (checksum and config in order).
    const broken = join(dir, "broken-repo");
    const { cpSync } = await import("node:fs");
    cpSync(models, broken, { recursive: true });
    const bytes = readFileSync(fixture("torch-mlp/model.onnx"));
    writeFileSync(join(broken, "torch", "1", "model.onnx"), bytes);
    const torchConfig = JSON.parse(readFileSync(join(broken, "torch", "config.json"), "utf8"));
    torchConfig.versions["1"] = { ...torchConfig.versions["1"], sha256: await sha256Hex(bytes), bytes: bytes.length };
    writeFileSync(join(broken, "torch", "config.json"), JSON.stringify(torchConfig));

    const server = await startTestServer(testOptions(["--models", broken]), {}, { waitReady: false });
    try {
      await server.loaded;
      const ready = await get(`${server.url}/v2/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body.failed).toEqual([
        { model: "torch", reason: expect.stringMatching(/^cannot create a session: .*model\.onnx\.data/) },
      ]);
      expect(await get(`${server.url}/v2/models/torch/ready`)).toMatchObject({
        status: 503,
        body: { name: "torch", ready: false, reason: expect.stringMatching(/cannot create a session/) },
      });
      expect((await get(`${server.url}/v2/models/rf/ready`)).status).toBe(200);
      const rf = await post(`${server.url}/v1/classify`, { model: "rf", inputs: csvRows("breast-cancer.csv")[0] });
      expect(rf.status).toBe(200);
      const torch = await post(`${server.url}/v1/classify`, { model: "torch", inputs: csvRows("wine.csv")[0] });
      expect(torch).toMatchObject({ status: 503, body: { code: "model_not_ready" } });
      expect(server.logs.filter((l) => l.msg === "ready without some models: their load failed")).toHaveLength(1);
    } finally {
      await server.shutdown();
    }
  });
});
