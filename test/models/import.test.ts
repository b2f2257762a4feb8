import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ortWeb from "onnxruntime-web";
import { afterAll, describe, expect, it } from "vitest";
import { argmax, type HeldoutSet } from "../../protocol/heldout.ts";
import { calibrationOf, parseModelConfig } from "../../protocol/model-config.ts";
import { RefusedError } from "../../tools/cli/errors.ts";
import { readRepository } from "../../tools/edge-bundle/edge-models.ts";
import { parseImportOptions } from "../../tools/model/import/options.ts";
import { importModel } from "../../tools/model/import/run.ts";
import { DataType, decodeModel } from "../../tools/model/onnx/proto.ts";
import {
  csv,
  nearestCentroidMlp,
  SAMPLE_CENTROIDS,
  SAMPLE_STUMPS,
  stumpForest,
  threeClassBlobs,
  twoClassBlobs,
} from "../support/onnx-models.ts";

const dir = mkdtempSync(join(tmpdir(), "edgecascade-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Uint8Array) => {
  writeFileSync(join(dir, name), content);
  return join(dir, name);
};

const mlp = file("mlp.onnx", nearestCentroidMlp(SAMPLE_CENTROIDS, 2));
const blobData = threeClassBlobs();
const blobCsv = file("blobs.csv", csv(blobData.rows, blobData.labels));
const forest = file("forest.onnx", stumpForest(3, SAMPLE_STUMPS));
const smallForest = file(
  "small-forest.onnx",
  stumpForest(3, [
    { feature: 0, threshold: 0 },
    { feature: 1, threshold: 0 },
    { feature: 0, threshold: 0.2 },
  ]),
);
const twoClass = twoClassBlobs();
const treeCsv = file(
  "trees.csv",
  csv(
    twoClass.rows,
    twoClass.labels.map((l) => ["no", "yes"][l]!),
    ["a", "b", "c", "ok"],
  ),
);

const run = (argv: string[], notes: string[] = []) => importModel(parseImportOptions(argv), (l) => notes.push(l));
const readJson = (path: string) => JSON.parse(readFileSync(join(dir, path), "utf8"));

describe("npm run model -- import", () => {
  const models = join(dir, "models");

  it("imports an MLP and makes its edge variant with --quantize: int8 weights, calibrated, measured", async () => {
    const notes: string[] = [];
    const result = await run(
      // 225 calibration rows prove at most 0.05^(1/225) = 0.9868 at 95%: the default 0.995 would need 598.
      ["--name", "blobs", "--full", mlp, "--quantize", "--data", blobCsv, "--agreement", "0.98", "--models", models],
      notes,
    );
    expect(notes[0]).toBe("quantized 2 weight tensors: w1 [4, 8], w2 [3, 8]");
    expect(result.plan).toMatchObject({ fullVersion: "1", edgeVersion: "1", serves: true });
    expect(result.rows).toEqual({ total: 450, calibration: 225, heldout: 225 });

    const full = parseModelConfig(readJson("models/blobs/config.json"), "blobs");
    const edge = parseModelConfig(readJson("models/blobs-edge/config.json"), "blobs-edge");
    expect(full).toMatchObject({ version: "1", labels: ["0", "1", "2"], inputs: [{ name: "x", shape: [-1, 4] }] });
    expect(edge).toMatchObject({ standsFor: "blobs", outputs: [{ name: "probs", shape: [-1, 3] }] });
    const entry = edge.versions["1"]!;
    expect(entry.weights).toBe("int8");
    expect(entry.quantization).toMatchObject({ tensors: 2, bytesBefore: full.versions["1"]!.bytes });
    expect(entry.quantization!.labelAgreement).toBeGreaterThan(0.97);

    // The quantized graph: int8 initializers, a per-axis DequantizeLinear for each, everything else as it was.
    const graph = decodeModel(readFileSync(join(models, "blobs-edge/1/model.onnx"))).graph!;
    expect(graph.node.map((n) => n.opType)).toEqual([
      "DequantizeLinear",
      "DequantizeLinear",
      "MatMul",
      "Add",
      "Relu",
      "Gemm",
      "Softmax",
    ]);
    expect(graph.initializer.filter((t) => t.dataType === DataType.INT8).map((t) => t.name)).toEqual([
      "w1_quantized",
      "w1_zero_point",
      "w2_quantized",
      "w2_zero_point",
    ]);
    const axes = graph.node.filter((n) => n.opType === "DequantizeLinear").map((n) => Number(n.attribute[0]!.i));
    expect(axes).toEqual([1, 0]); // MatMul [K, N]: columns; Gemm transB [N, K]: rows

    // The figures are the fixture's: recompute them from the held-out rows and the stored threshold.
    const fixture = readJson("models/blobs/1/heldout.json") as HeldoutSet;
    expect(fixture.rows).toHaveLength(225);
    const { threshold, test } = calibrationOf(edge);
    const answered = fixture.rows.filter((r) => Math.max(...r.expected["blobs-edge"]!) >= threshold);
    expect(Math.round((answered.length / 225) * 1e4) / 1e4).toBe(test.edgeShare);
    const correct = fixture.rows.filter((r) => argmax(r.expected.blobs!) === r.label).length;
    expect(Math.round((correct / 225) * 1e4) / 1e4).toBe(full.versions["1"]!.accuracy.test);
    expect(test.edgeShare).toBeGreaterThan(0.5);
    expect(test.edgeShare).toBeLessThan(1);
  });

  it("imports a tree ensemble with its own smaller edge forest, labels and feature names from the data", async () => {
    const result = await run([
      ...["--name", "stumps", "--full", forest, "--edge", smallForest, "--data", treeCsv],
      ...["--labels", "no,yes", "--agreement", "0.95", "--models", models],
    ]);
    expect(result.facts.edge!.weights).toBe("fp32");
    const full = parseModelConfig(readJson("models/stumps/config.json"), "stumps");
    expect(full).toMatchObject({ labels: ["no", "yes"], features: ["a", "b", "c"] });
    expect(full.outputs).toEqual([{ name: "probabilities", datatype: "FP32", shape: [-1, 2] }]);
    const { threshold } = calibrationOf(parseModelConfig(readJson("models/stumps-edge/config.json"), "e"));
    // The small forest's probabilities are thirds: it answers when all three stumps agree.
    expect(threshold).toBe(1);
    // The fixture's expected outputs are onnxruntime-node's; onnxruntime-web agrees, fetching by name.
    const fixture = readJson("models/stumps/1/heldout.json") as HeldoutSet;
    const session = await ortWeb.InferenceSession.create(readFileSync(forest), { executionProviders: ["wasm"] });
    const input = Float32Array.from(fixture.rows.flatMap((r) => r.input));
    const out = await session.run({ features: new ortWeb.Tensor("float32", input, [fixture.rows.length, 3]) }, [
      "probabilities",
    ]);
    const probs = out.probabilities!.data as Float32Array;
    fixture.rows.forEach((r, i) => {
      for (let c = 0; c < 2; c++) expect(Math.abs(probs[i * 2 + c]! - r.expected.stumps![c]!)).toBeLessThan(1e-6);
    });
    await session.release();
  });

  it("adds a new version to an existing model without changing the served one", async () => {
    const result = await run([
      ...["--name", "blobs", "--full", mlp, "--quantize", "--data", blobCsv, "--agreement", "0.98"],
      ...["--models", models],
    ]);
    expect(result.plan).toMatchObject({ fullVersion: "2", edgeVersion: "2", serves: false });
    const full = readJson("models/blobs/config.json");
    const edge = readJson("models/blobs-edge/config.json");
    expect([full.version, Object.keys(full.versions)]).toEqual(["1", ["1", "2"]]);
    expect([edge.version, Object.keys(edge.versions)]).toEqual(["1", ["1", "2"]]);
    expect(edge.versions["2"].cascade.against).toEqual({ model: "blobs", version: "2" });
    expect(readJson("models/blobs/2/heldout.json").models).toEqual({ blobs: "2", "blobs-edge": "2" });
    // The edge bundle generated from this repository has exactly its two models, each with its edge variant.
    expect(readRepository(models).map((m) => [m.config.name, m.edge?.config.name])).toEqual([
      ["blobs", "blobs-edge"],
      ["stumps", "stumps-edge"],
    ]);
  });

  it("keeps what it does not know about in an existing config", async () => {
    const path = join(models, "stumps/config.json");
    const config = JSON.parse(readFileSync(path, "utf8"));
    config.versions["1"].energy = { millijoules: 3 };
    config.owner = "team-a";
    writeFileSync(path, JSON.stringify(config));
    await run([...["--name", "stumps", "--full", forest, "--data", treeCsv, "--labels", "no,yes", "--models", models]]);
    const after = JSON.parse(readFileSync(path, "utf8"));
    expect(after.owner).toBe("team-a");
    expect(after.versions["1"].energy).toEqual({ millijoules: 3 });
    expect(Object.keys(after.versions)).toEqual(["1", "2"]);
  });
});

describe("import refuses, saying what to fix", () => {
  const models = join(dir, "refusals");
  const base = ["--name", "m", "--models", models];
  const garbage = file("garbage.onnx", "this is not a model");
  const twoInputs = file(
    "wide.onnx",
    nearestCentroidMlp(
      [
        [0, 0, 0],
        [1, 1, 1],
      ],
      1,
    ),
  );
  const threeClasses = file(
    "three.onnx",
    nearestCentroidMlp(
      [
        [0, 0, 0],
        [1, 1, 1],
        [2, 0, 0],
      ],
      1,
    ),
  );
  const oldOpset = file("old-opset.onnx", nearestCentroidMlp(SAMPLE_CENTROIDS, 2, 11));

  it.each<[string, string[], string | RegExp]>([
    [
      "a file that does not exist",
      ["--full", join(dir, "nope.onnx"), "--data", blobCsv],
      /--full nope\.onnx: cannot read the file/,
    ],
    ["a file that is not ONNX", ["--full", garbage, "--data", blobCsv], /--full garbage\.onnx: not an ONNX model/],
    [
      "an edge variant with another input width",
      ["--full", mlp, "--edge", twoInputs, "--data", blobCsv],
      "--full mlp.onnx takes 4 features and --edge wide.onnx takes 3; both must take the same input",
    ],
    [
      "an edge variant with other classes",
      ["--full", forest, "--edge", threeClasses, "--data", treeCsv],
      "--full forest.onnx outputs 2 classes and --edge three.onnx outputs 3; both must classify into the same classes",
    ],
    [
      "a CSV of the wrong width",
      ["--full", forest, "--data", blobCsv],
      "blobs.csv line 1 has 5 values; the model takes 3 features, so each line needs 4 (features, then the label)",
    ],
    [
      "a label that is not a class",
      ["--full", mlp, "--data", file("bad-label.csv", "1,2,3,4,0\n1,2,3,4,3\n")],
      'bad-label.csv line 2: label "3" is not a class of the model; labels are class indices 0 to 2',
    ],
    [
      "a non-number",
      ["--full", mlp, "--data", file("nan.csv", "1,2,3,4,0\n1,two,3,4,1\n")],
      'nan.csv line 2, column 2: "two" is not a number that fits float32',
    ],
    [
      "--labels of the wrong count",
      ["--full", mlp, "--data", blobCsv, "--labels", "a,b"],
      "--labels names 2 classes; the model outputs 3",
    ],
    [
      "too little data",
      ["--full", mlp, "--data", file("tiny.csv", csv(blobData.rows.slice(0, 12), blobData.labels.slice(0, 12)))],
      /tiny\.csv has 12 rows: 6 for calibration and 6 held out; each part needs at least 10/,
    ],
    [
      "quantizing a tree ensemble",
      ["--full", forest, "--quantize", "--data", treeCsv],
      /--quantize: the model has no MatMul or Gemm weights to quantize: it is a tree ensemble \(TreeEnsembleClassifier\)\. Make its edge variant from its first trees with --edge-trees K/,
    ],
    [
      "quantizing below opset 13",
      ["--full", oldOpset, "--quantize", "--data", blobCsv],
      "--quantize: the model imports opset 11; per-channel DequantizeLinear needs opset 13 or newer",
    ],
    [
      "an agreement the calibration rows cannot prove",
      ["--full", forest, "--edge", smallForest, "--data", treeCsv, "--labels", "no,yes", "--agreement", "0.999"],
      /cannot be shown to reach agreement 0\.999 with the full model at 95% confidence on the 200 calibration rows: the most they prove is agreement 0\.9\d+ \(threshold [\d.]+: \d+ rows answered, \d+ disagreeing\), so --agreement 0\.9\d+ would pass; (proving 0\.999 would take about \d+ calibration rows|no number of rows)/,
    ],
  ])("%s", async (_, argv, message) => {
    const failure = await run([...base, ...argv]).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure).toBeInstanceOf(RefusedError);
    expect(failure!.message).toMatch(message);
  });

  it.each<[string, string[], string]>([
    [
      "--edge with --quantize",
      ["--full", mlp, "--edge", mlp, "--quantize", "--data", blobCsv],
      "--edge, --quantize and --edge-trees exclude each other",
    ],
    [
      "--edge-trees with --quantize",
      ["--full", mlp, "--edge-trees", "4", "--quantize", "--data", blobCsv],
      "--edge, --quantize and --edge-trees exclude each other",
    ],
    [
      "--edge-trees 0",
      ["--full", mlp, "--edge-trees", "0", "--data", blobCsv],
      "--edge-trees must be a positive integer",
    ],
    ["a name ending in -edge", ["--name", "x-edge", "--full", mlp, "--data", blobCsv], 'not end in "-edge"'],
    ["a path as the name", ["--name", "../x", "--full", mlp, "--data", blobCsv], '--name "../x" must be'],
    [
      "an agreement above 1",
      ["--full", mlp, "--data", blobCsv, "--agreement", "1.5"],
      "--agreement must be a number in (0, 1)",
    ],
    ["a missing --data", ["--full", mlp], "--data is required"],
  ])("the command line: %s", (_, argv, message) => {
    expect(() => parseImportOptions([...base, ...argv])).toThrow(message);
  });

  it("an existing config.json it cannot read: refused naming it, never taken for a new model", async () => {
    const unreadable = join(dir, "unreadable");
    mkdirSync(join(unreadable, "m", "config.json"), { recursive: true });
    const failure = await run(["--name", "m", "--models", unreadable, "--full", mlp, "--data", blobCsv]).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure).toBeInstanceOf(RefusedError);
    expect(failure!.message).toBe(
      `cannot read ${join(unreadable, "m", "config.json")}: EISDIR: illegal operation on a directory, read`,
    );
  });

  it("writes nothing when it refuses", () => {
    expect(() => readFileSync(join(models, "m/config.json"))).toThrow();
  });
});
