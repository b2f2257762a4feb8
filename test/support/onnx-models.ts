import { seededRandom } from "../../protocol/seeded-random.ts";
import { DataType, encodeModel, makeModel } from "../../tools/model/onnx/proto.ts";

/**
 * Small classifiers and data sets made inside the tests, so that import, quantization and serving are tested
 * on models nobody trained elsewhere: ONNX graphs written with the model tool's own protobuf schema.
 */

const floats = (name: string, dims: number[], values: ArrayLike<number>) => ({
  name,
  dims,
  dataType: DataType.FLOAT,
  floatData: Array.from(values),
});

const tensorInfo = (name: string, elemType: number, dims: (number | string)[]) => ({
  name,
  type: {
    tensorType: {
      elemType,
      shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) },
    },
  },
});

const attr = {
  ints: (name: string, ints: number[]) => ({ name, type: 7, ints }),
  floats: (name: string, floats: number[]) => ({ name, type: 6, floats }),
  strings: (name: string, strings: string[]) => ({
    name,
    type: 8,
    strings: strings.map((s) => new TextEncoder().encode(s)),
  }),
  string: (name: string, s: string) => ({ name, type: 3, s: new TextEncoder().encode(s) }),
  int: (name: string, i: number) => ({ name, type: 2, i }),
};

function model(graph: Record<string, unknown>, opsets: Record<string, number> = { "": 13 }): Uint8Array {
  return encodeModel(
    makeModel({
      irVersion: 8,
      producerName: "edgecascade tests",
      opsetImport: Object.entries(opsets).map(([domain, version]) => ({ domain, version })),
      graph,
    }),
  );
}

/** Gaussian clusters: `classes` centroids in `width` dimensions, `perClass` rows each, noise `sigma`. */
export function blobs(options: {
  width: number;
  centroids: number[][];
  perClass: number;
  sigma: number;
  seed: number;
}) {
  const random = seededRandom(options.seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const rows: number[][] = [];
  const labels: number[] = [];
  for (let i = 0; i < options.perClass; i++) {
    options.centroids.forEach((c, label) => {
      rows.push(c.map((v) => Math.round((v + options.sigma * gauss()) * 1000) / 1000));
      labels.push(label);
    });
  }
  return { rows, labels };
}

/** The suites' sample problems: three clusters in 4 features (for an MLP), two in 3 features (for trees). */
export const SAMPLE_CENTROIDS = [
  [0, 0, 0, 0],
  [3, 0, 1, 0],
  [0, 3, 0, 1],
];
export const threeClassBlobs = () =>
  blobs({ width: 4, centroids: SAMPLE_CENTROIDS, perClass: 150, sigma: 0.9, seed: 1 });
export const twoClassBlobs = () =>
  blobs({
    width: 3,
    centroids: [
      [-1, -1, 0],
      [1, 1, 0],
    ],
    perClass: 200,
    sigma: 0.8,
    seed: 2,
  });
/** Depth-1 trees on the first two features of `twoClassBlobs`, for `stumpForest`. */
export const SAMPLE_STUMPS = [-0.6, -0.3, 0, 0.3, 0.6].flatMap((threshold) =>
  [0, 1].map((feature) => ({ feature, threshold })),
);

/**
 * An MLP that classifies by the nearest centroid: `h = relu([x, -x])` (MatMul, Add, Relu), then
 * `softmax(sharpness * (x·c - |c|²/2))` as a Gemm with transposed weights, so that both quantizable node kinds
 * and both weight layouts occur.
 */
export function nearestCentroidMlp(centroids: number[][], sharpness: number, opset = 13): Uint8Array {
  const width = centroids[0]!.length;
  const classes = centroids.length;
  const w1 = new Float32Array(width * 2 * width);
  for (let i = 0; i < width; i++) {
    w1[i * 2 * width + i] = 1;
    w1[i * 2 * width + width + i] = -1;
  }
  const w2 = centroids.flatMap((c) => [...c, ...c.map((v) => -v)].map((v) => v * sharpness));
  const b2 = centroids.map((c) => (-sharpness * c.reduce((s, v) => s + v * v, 0)) / 2);
  return model(
    {
      name: "nearest-centroid",
      input: [tensorInfo("x", DataType.FLOAT, ["batch", width])],
      output: [tensorInfo("probs", DataType.FLOAT, ["batch", classes])],
      initializer: [
        floats("w1", [width, 2 * width], w1),
        floats("b1", [2 * width], new Float32Array(2 * width)),
        floats("w2", [classes, 2 * width], w2),
        floats("b2", [classes], b2),
      ],
      node: [
        { opType: "MatMul", input: ["x", "w1"], output: ["m1"] },
        { opType: "Add", input: ["m1", "b1"], output: ["z1"] },
        { opType: "Relu", input: ["z1"], output: ["h1"] },
        { opType: "Gemm", input: ["h1", "w2", "b2"], output: ["z2"], attribute: [attr.int("transB", 1)] },
        { opType: "Softmax", input: ["z2"], output: ["probs"], attribute: [attr.int("axis", -1)] },
      ],
    },
    { "": opset },
  );
}

/**
 * A forest of decision stumps as an `ai.onnx.ml` TreeEnsembleClassifier over `width` features: stump `t` says
 * class 1 when `feature > threshold`. Soft voting: each leaf gives its class weight 1/n. Labels come first,
 * probabilities second, as tree converters write them.
 */
export function stumpForest(width: number, stumps: { feature: number; threshold: number }[]): Uint8Array {
  const n = stumps.length;
  const nodes = {
    treeids: [] as number[],
    nodeids: [] as number[],
    featureids: [] as number[],
    values: [] as number[],
  };
  const modes: string[] = [];
  const truenodes: number[] = [];
  const falsenodes: number[] = [];
  const classes = { treeids: [] as number[], nodeids: [] as number[], ids: [] as number[], weights: [] as number[] };
  stumps.forEach(({ feature, threshold }, t) => {
    // Node 0: x[feature] <= threshold -> node 1 (class 0), else node 2 (class 1).
    for (const [id, mode, f, v] of [
      [0, "BRANCH_LEQ", feature, threshold],
      [1, "LEAF", 0, 0],
      [2, "LEAF", 0, 0],
    ] as const) {
      nodes.treeids.push(t);
      nodes.nodeids.push(id);
      nodes.featureids.push(f);
      nodes.values.push(v);
      modes.push(mode);
      truenodes.push(id === 0 ? 1 : 0);
      falsenodes.push(id === 0 ? 2 : 0);
    }
    // Every leaf weighs both classes (0 for the other): with one class id per leaf, onnxruntime reads a
    // two-class ensemble as a binary scorer and outputs [-score, score].
    for (const [leaf, vote] of [
      [1, 0],
      [2, 1],
    ] as const) {
      for (const cls of [0, 1]) {
        classes.treeids.push(t);
        classes.nodeids.push(leaf);
        classes.ids.push(cls);
        classes.weights.push(cls === vote ? 1 / n : 0);
      }
    }
  });
  return model(
    {
      name: "stumps",
      input: [tensorInfo("features", DataType.FLOAT, ["batch", width])],
      output: [
        tensorInfo("label", DataType.INT64, ["batch"]),
        tensorInfo("probabilities", DataType.FLOAT, ["batch", 2]),
      ],
      node: [
        {
          opType: "TreeEnsembleClassifier",
          domain: "ai.onnx.ml",
          input: ["features"],
          output: ["label", "probabilities"],
          attribute: [
            attr.ints("classlabels_int64s", [0, 1]),
            attr.string("post_transform", "NONE"),
            attr.ints("nodes_treeids", nodes.treeids),
            attr.ints("nodes_nodeids", nodes.nodeids),
            attr.ints("nodes_featureids", nodes.featureids),
            attr.floats("nodes_values", nodes.values),
            attr.strings("nodes_modes", modes),
            attr.ints("nodes_truenodeids", truenodes),
            attr.ints("nodes_falsenodeids", falsenodes),
            attr.ints("class_treeids", classes.treeids),
            attr.ints("class_nodeids", classes.nodeids),
            attr.ints("class_ids", classes.ids),
            attr.floats("class_weights", classes.weights),
          ],
        },
      ],
    },
    { "": 13, "ai.onnx.ml": 3 },
  );
}

/** CSV text: an optional header, then each row's features and its label. */
export function csv(rows: readonly number[][], labels: readonly (number | string)[], header?: string[]): string {
  const lines = rows.map((r, i) => [...r, labels[i]].join(","));
  return `${header ? `${header.join(",")}\n` : ""}${lines.join("\n")}\n`;
}
