"""Train the two sample models reproducibly and export them as ONNX, with the rows they were not trained on.

Writes into OUTDIR (the first argument), for `npm run models` to quantize and import
(scripts/build-models.sh runs `npm run model -- quantize` and `npm run model -- import` on these files):

  digits-full.onnx             fp32 MLP 64-256-128-10 (regional pools)
  digits-edge-fp32.onnx        fp32 MLP 64-32-10 (quantized to int8 for the edge Worker)
  digits.csv                   the 720 rows not trained on: 64 pixel values 0-16, then the digit
  breast-cancer-full.onnx      random forest, 100 trees (ai.onnx.ml TreeEnsembleClassifier)
  breast-cancer-edge.onnx      random forest, 8 trees of depth 4 (the edge variant)
  breast-cancer.csv            the rows not trained on, with a header: 30 features, then the class

Data, both as shipped inside Debian's python3-sklearn (no network needed):
  - UCI "Optical Recognition of Handwritten Digits" (E. Alpaydin, C. Kaynak): 1797 8x8 images, values 0-16.
  - UCI "Breast Cancer Wisconsin (Diagnostic)" (W. Wolberg, W. Street, O. Mangasarian): 569 rows, 30
    features of cell nuclei, malignant (0) or benign (1).

Each data set is split once, stratified with seed 0, into training rows and the rest; the import splits the
rest again into calibration and held-out rows. sklearn has no ONNX exporter here (no skl2onnx), so both kinds
of graph are built by hand with python3-onnx: the MLPs from their weight matrices, the forests from
sklearn's tree arrays.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

SEED = 0
OPSET = 13  # per-axis DequantizeLinear (the edge's int8 weights) needs 13; both runtimes run it
ML_OPSET = 3  # ai.onnx.ml TreeEnsembleClassifier with float thresholds


def finish(graph):
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
        producer_name="edgecascade",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def mlp_graph(name, weights, biases, width, classes):
    """Dense ReLU layers and a softmax; raw 0-16 pixel values in (scaling to 0-1 happens inside the graph)."""
    nodes = [helper.make_node("Mul", ["pixels", "inv_range"], ["h0"])]
    inits = [numpy_helper.from_array(np.array(1.0 / 16.0, dtype=np.float32), "inv_range")]
    prev = "h0"
    for i, (w, b) in enumerate(zip(weights, biases)):
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [
            helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"z{i}"]),
        ]
        last = i == len(weights) - 1
        nodes.append(
            helper.make_node("Softmax", [f"z{i}"], ["probabilities"], axis=-1)
            if last
            else helper.make_node("Relu", [f"z{i}"], [f"h{i + 1}"])
        )
        prev = f"h{i + 1}"
    return finish(
        helper.make_graph(
            nodes,
            name,
            [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["batch", width])],
            [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", classes])],
            inits,
        )
    )


def forest_graph(name, forest, width):
    """A fitted RandomForestClassifier as one TreeEnsembleClassifier: sklearn sends x <= threshold left
    (BRANCH_LEQ true -> left child); each leaf votes its class fractions divided by the number of trees, so the
    probabilities are sklearn's predict_proba (soft voting). Outputs: labels (int64) first, then probabilities."""
    attrs = {k: [] for k in (
        "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values", "nodes_modes",
        "nodes_truenodeids", "nodes_falsenodeids", "class_treeids", "class_nodeids", "class_ids", "class_weights",
    )}
    n_trees = len(forest.estimators_)
    classes = len(forest.classes_)
    for t, estimator in enumerate(forest.estimators_):
        tree = estimator.tree_
        for node in range(tree.node_count):
            leaf = tree.children_left[node] == -1
            attrs["nodes_treeids"].append(t)
            attrs["nodes_nodeids"].append(node)
            attrs["nodes_featureids"].append(0 if leaf else int(tree.feature[node]))
            attrs["nodes_values"].append(0.0 if leaf else float(tree.threshold[node]))
            attrs["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            attrs["nodes_truenodeids"].append(0 if leaf else int(tree.children_left[node]))
            attrs["nodes_falsenodeids"].append(0 if leaf else int(tree.children_right[node]))
            if leaf:
                votes = tree.value[node][0]
                fractions = votes / votes.sum()
                for c in range(classes):
                    attrs["class_treeids"].append(t)
                    attrs["class_nodeids"].append(node)
                    attrs["class_ids"].append(c)
                    attrs["class_weights"].append(float(fractions[c]) / n_trees)
    node = helper.make_node(
        "TreeEnsembleClassifier",
        ["features"],
        ["label", "probabilities"],
        domain="ai.onnx.ml",
        classlabels_int64s=[int(c) for c in forest.classes_],
        post_transform="NONE",
        **attrs,
    )
    return finish(
        helper.make_graph(
            [node],
            name,
            [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", width])],
            [
                helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
                helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", classes]),
            ],
        )
    )


def save(outdir, name, model):
    with open(os.path.join(outdir, name), "wb") as f:
        f.write(model.SerializeToString())


def write_csv(path, x, y, header=None, integers=False):
    with open(path, "w") as f:
        if header:
            f.write(",".join(header) + "\n")
        for row, label in zip(x, y):
            cells = [str(int(v)) for v in row] if integers else [repr(float(v)) for v in row]
            f.write(",".join(cells + [str(int(label))]) + "\n")


def digits(outdir):
    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float32)
    # 60% train; the other 40% (720 rows) are split by the import into calibration and held-out rows.
    x_train, x_rest, y_train, y_rest = train_test_split(x, y, test_size=0.4, stratify=y, random_state=SEED)
    print(f"digits: {len(y_train)} train / {len(y_rest)} for calibration and held-out", flush=True)

    def train(hidden, alpha):
        clf = MLPClassifier(hidden_layer_sizes=hidden, alpha=alpha, max_iter=1000, random_state=SEED)
        clf.fit(x_train / 16.0, y_train)
        return [w.astype(np.float32) for w in clf.coefs_], [b.astype(np.float32) for b in clf.intercepts_]

    print("  training the full model (MLP 64-256-128-10)...", flush=True)
    save(outdir, "digits-full.onnx", mlp_graph("digits", *train((256, 128), 1e-4), 64, 10))
    print("  training the edge model (MLP 64-32-10)...", flush=True)
    save(outdir, "digits-edge-fp32.onnx", mlp_graph("digits-edge", *train((32,), 1e-3), 64, 10))
    write_csv(os.path.join(outdir, "digits.csv"), x_rest, y_rest, integers=True)


def breast_cancer(outdir):
    data = load_breast_cancer()
    y = data.target
    # 40% train; the import gets 60% (342 rows), enough calibration rows to show 99% agreement.
    train, rest = train_test_split(np.arange(len(y)), test_size=0.6, stratify=y, random_state=SEED)
    x_train, y_train, y_rest = data.data[train].astype(np.float32), y[train], y[rest]
    print(f"breast-cancer: {len(y_train)} train / {len(y_rest)} for calibration and held-out", flush=True)
    print("  training the full model (random forest, 100 trees)...", flush=True)
    full = RandomForestClassifier(n_estimators=100, random_state=SEED).fit(x_train, y_train)
    save(outdir, "breast-cancer-full.onnx", forest_graph("breast-cancer", full, data.data.shape[1]))
    print("  training the edge model (random forest, 8 trees of depth 4)...", flush=True)
    edge = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=SEED).fit(x_train, y_train)
    save(outdir, "breast-cancer-edge.onnx", forest_graph("breast-cancer-edge", edge, data.data.shape[1]))
    header = [name.replace(" ", "_") for name in data.feature_names] + ["diagnosis"]
    # The values as the data set has them (e.g. 17.99); the models see their float32 rounding, as clients send.
    write_csv(os.path.join(outdir, "breast-cancer.csv"), data.data[rest], y_rest, header=header)


def main():
    if len(sys.argv) != 2:
        print("usage: build_models.py OUTDIR", file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    digits(outdir)
    breast_cancer(outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
