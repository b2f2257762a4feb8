import { type AttributeProto, attribute, int64, type ModelProto, type NodeProto } from "../onnx/proto.ts";

/** The ensemble cannot be cut as asked; the message says why. */
export class EdgeTreesError extends Error {}

export interface EdgeTrees {
  model: ModelProto;
  /** Trees in the full ensemble and kept. */
  trees: number;
  kept: number;
  /** `boosted`: the first K trees, weights, base values and post-transform as they were; `forest`: K trees, weights x trees/K. */
  kind: "boosted" | "forest";
  postTransform: string;
}

const NODE_ARRAYS = [
  "nodes_treeids",
  "nodes_nodeids",
  "nodes_featureids",
  "nodes_values",
  "nodes_modes",
  "nodes_truenodeids",
  "nodes_falsenodeids",
  "nodes_hitrates",
  "nodes_missing_value_tracks_true",
];
const CLASS_ARRAYS = ["class_treeids", "class_nodeids", "class_ids", "class_weights"];

function values(a: AttributeProto): unknown[] {
  if (a.ints.length > 0) return a.ints;
  if (a.floats.length > 0) return a.floats;
  return a.strings;
}

function withValues(a: AttributeProto, kept: unknown[]): AttributeProto {
  if (a.ints.length > 0) return { ...a, ints: kept } as AttributeProto;
  if (a.floats.length > 0) return { ...a, floats: kept } as AttributeProto;
  return { ...a, strings: kept } as AttributeProto;
}

/**
 * An edge variant cut from a tree ensemble (`ai.onnx.ml` TreeEnsembleClassifier): the first `k` trees, in the
 * order of their ids. A boosted ensemble (a post-transform, LOGISTIC or SOFTMAX, or base values: LightGBM,
 * XGBoost, gradient boosting) keeps its leaf values, base values and post-transform, so its scores are those of
 * the first k boosting rounds (a multiclass booster has one tree per class per round: pass a multiple of the
 * classes). A forest (no post-transform, no base values: leaves vote class fractions / trees, as skl2onnx writes
 * a random forest) has its weights scaled by trees / k, so the k trees' votes still sum to 1.
 */
export function edgeTrees(source: ModelProto, k: number): EdgeTrees {
  const graph = source.graph!;
  const ensembles = graph.node.filter((n) => n.opType === "TreeEnsembleClassifier");
  if (ensembles.length !== 1) {
    throw new EdgeTreesError(
      `--edge-trees needs a model with one TreeEnsembleClassifier; this one has ${ensembles.length} (${graph.node.map((n) => n.opType).join(", ")})`,
    );
  }
  const node = ensembles[0]!;
  const tensorAttributes = node.attribute.filter((a) => a.name.endsWith("_as_tensor"));
  if (tensorAttributes.length > 0) {
    throw new EdgeTreesError(
      `--edge-trees reads the ensemble's float attributes; this one stores ${tensorAttributes.map((a) => a.name).join(", ")} as tensors`,
    );
  }
  const treeIds = attribute(node, "nodes_treeids")?.ints.map(int64) ?? [];
  const trees = [...new Set(treeIds)].sort((a, b) => a - b);
  if (!(Number.isInteger(k) && k >= 1 && k < trees.length)) {
    throw new EdgeTreesError(
      `--edge-trees ${k}: the ensemble has ${trees.length} trees; K must be 1 to ${trees.length - 1}`,
    );
  }
  const keep = new Set(trees.slice(0, k));
  const postTransform = new TextDecoder().decode(attribute(node, "post_transform")?.s ?? new Uint8Array()) || "NONE";
  const baseValues = attribute(node, "base_values")?.floats ?? [];
  const kind = postTransform !== "NONE" || baseValues.length > 0 ? "boosted" : "forest";
  const nodeKeep = treeIds.map((t) => keep.has(t));
  const classKeep = (attribute(node, "class_treeids")?.ints ?? []).map((t) => keep.has(int64(t)));
  const scale = kind === "forest" ? trees.length / k : 1;
  const attributes = node.attribute.map((a) => {
    const mask = NODE_ARRAYS.includes(a.name) ? nodeKeep : CLASS_ARRAYS.includes(a.name) ? classKeep : undefined;
    if (!mask || values(a).length === 0) return a;
    let kept = values(a).filter((_, i) => mask[i]);
    if (a.name === "class_weights" && scale !== 1) kept = (kept as number[]).map((w) => Math.fround(w * scale));
    return withValues(a, kept);
  });
  const cut: NodeProto = { ...node, attribute: attributes };
  const model = { ...source, graph: { ...graph, node: graph.node.map((n) => (n === node ? cut : n)) } } as ModelProto;
  return { model, trees: trees.length, kept: k, kind, postTransform };
}
