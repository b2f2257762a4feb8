import { describe, expect, it } from "vitest";
import { stumpForest } from "../../../test/support/onnx-models.ts";
import { attribute, decodeModel, encodeModel, int64 } from "../onnx/proto.ts";
import { edgeTrees } from "./edge-trees.ts";

const forest = decodeModel(
  stumpForest(
    2,
    [0, 1, 2, 3].map((t) => ({ feature: t % 2, threshold: t / 10 })),
  ),
);

describe("edgeTrees", () => {
  it("keeps a forest's first K trees and scales their votes by trees / K", () => {
    const cut = edgeTrees(forest, 2);
    expect(cut).toMatchObject({ trees: 4, kept: 2, kind: "forest", postTransform: "NONE" });
    const node = decodeModel(encodeModel(cut.model)).graph!.node[0]!;
    expect(new Set(attribute(node, "nodes_treeids")!.ints.map(int64))).toEqual(new Set([0, 1]));
    expect(new Set(attribute(node, "class_treeids")!.ints.map(int64))).toEqual(new Set([0, 1]));
    const before = attribute(forest.graph!.node[0]!, "class_weights")!.floats;
    const after = attribute(node, "class_weights")!.floats;
    expect(after).toHaveLength(before.length / 2);
    expect(after[0]).toBeCloseTo(before[0]! * 2, 6);
  });

  it("refuses K outside 1..trees-1 and a model without one tree ensemble", () => {
    expect(() => edgeTrees(forest, 4)).toThrow("--edge-trees 4: the ensemble has 4 trees; K must be 1 to 3");
    const mlp = { ...forest, graph: { ...forest.graph!, node: [] } };
    expect(() => edgeTrees(mlp, 1)).toThrow("--edge-trees needs a model with one TreeEnsembleClassifier");
  });
});
