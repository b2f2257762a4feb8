"""Build the sample models for the UCI handwritten digits, reproducibly.

Writes into the model repository (Triton layout):
  models/digits/config.json,      models/digits/<v>/model.onnx       fp32 MLP 64-256-128-10 (regional pools)
  models/digits-edge/config.json, models/digits-edge/<v>/model.onnx  int8 MLP 64-32-10 (edge Worker)
  models/digits-heldout.json      the test split with labels and both models' expected outputs

Data: the UCI "Optical Recognition of Handwritten Digits" set (E. Alpaydin, C. Kaynak), as shipped
inside Debian's python3-sklearn (sklearn/datasets/data/digits.csv.gz): 1797 8x8 images, values 0-16.

Split (stratified, seed 0): 20% test, then 25% of the rest validation -> 1077 train / 360 validation /
360 test. Both models train on the train split only; the edge model's confidence threshold is calibrated
on validation; every figure in config.json that says "test" is measured on the test split, which nothing
was fitted or calibrated on.

Run with `npm run models` (which finds a Python with sklearn, onnx and numpy).
"""

import hashlib
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

SEED = 0
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
VERSION = "1"
OPSET = 13  # per-axis DequantizeLinear needs 13; onnxruntime-web and -node both run it
AGREEMENT_TARGET = 0.995
LABELS = [str(i) for i in range(10)]
INPUTS = [{"name": "pixels", "datatype": "FP32", "shape": [-1, 64]}]
OUTPUTS = [{"name": "probabilities", "datatype": "FP32", "shape": [-1, 10]}]


def split():
    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float32)
    x_rest, x_test, y_rest, y_test = train_test_split(x, y, test_size=0.2, stratify=y, random_state=SEED)
    x_train, x_val, y_train, y_val = train_test_split(
        x_rest, y_rest, test_size=0.25, stratify=y_rest, random_state=SEED
    )
    return (x_train, y_train), (x_val, y_val), (x_test, y_test)


def train(hidden, data, alpha):
    x, y = data
    clf = MLPClassifier(hidden_layer_sizes=hidden, alpha=alpha, max_iter=1000, random_state=SEED)
    # Scaling 0-16 -> 0-1 happens inside the exported graph, so clients send raw pixel values.
    clf.fit(x / 16.0, y)
    return [w.astype(np.float32) for w in clf.coefs_], [b.astype(np.float32) for b in clf.intercepts_]


def quantize_per_channel(w):
    """Symmetric int8, one scale per output channel (column): q = round(w / s), s = max|w| / 127."""
    scale = (np.abs(w).max(axis=0) / 127.0).astype(np.float32)
    scale[scale == 0] = np.float32(1.0)
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return q, scale


def graph(name, weights, biases, quantized):
    nodes = [helper.make_node("Mul", ["pixels", "inv_range"], ["h0"])]
    inits = [numpy_helper.from_array(np.array(1.0 / 16.0, dtype=np.float32), "inv_range")]
    prev = "h0"
    for i, (w, b) in enumerate(zip(weights, biases)):
        if quantized:
            q, s = quantize_per_channel(w)
            inits += [
                numpy_helper.from_array(q, f"w{i}_q"),
                numpy_helper.from_array(s, f"w{i}_scale"),
                numpy_helper.from_array(np.zeros(q.shape[1], dtype=np.int8), f"w{i}_zero"),
            ]
            nodes.append(
                helper.make_node("DequantizeLinear", [f"w{i}_q", f"w{i}_scale", f"w{i}_zero"], [f"w{i}"], axis=1)
            )
        else:
            inits.append(numpy_helper.from_array(w, f"w{i}"))
        inits.append(numpy_helper.from_array(b, f"b{i}"))
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
    g = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])],
        inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="edgecascade")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def forward(x, weights, biases, quantized):
    """float32 reference of the exported graph (dequantized weights where the graph dequantizes)."""
    h = x.astype(np.float32) * np.float32(1.0 / 16.0)
    for i, (w, b) in enumerate(zip(weights, biases)):
        if quantized:
            q, s = quantize_per_channel(w)
            w = q.astype(np.float32) * s
        z = h @ w + b
        if i < len(weights) - 1:
            h = np.maximum(z, np.float32(0))
        else:
            z = z - z.max(axis=1, keepdims=True)
            e = np.exp(z)
            return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def calibrate(edge_probs, full_probs):
    """Smallest threshold whose edge answers (top confidence >= t) agree with the full model on >= target.

    Add-one margin: agreement is counted with one more disagreement than validation showed, so that the
    threshold does not sit right at the last disagreement and still holds on rows it was not fitted to.
    """
    conf = edge_probs.max(axis=1)
    agree = edge_probs.argmax(axis=1) == full_probs.argmax(axis=1)
    for t in np.sort(np.unique(conf)):
        answered = conf >= t
        disagreements = int((~agree[answered]).sum())
        if 1.0 - (disagreements + 1) / answered.sum() >= AGREEMENT_TARGET:
            return float(t)
    return 1.0


def cascade_figures(threshold, edge_probs, full_probs, y):
    conf = edge_probs.max(axis=1)
    answered = conf >= threshold
    edge_label, full_label = edge_probs.argmax(axis=1), full_probs.argmax(axis=1)
    cascade_label = np.where(answered, edge_label, full_label)
    return {
        "edgeShare": round(float(answered.mean()), 4),
        "agreement": round(float((edge_label[answered] == full_label[answered]).mean()), 4),
        "cascadeAccuracy": round(float((cascade_label == y).mean()), 4),
    }


def accuracy(probs, y):
    return round(float((probs.argmax(axis=1) == y).mean()), 4)


def write_version(name, model):
    path = os.path.join(ROOT, name, VERSION, "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = model.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    return {"file": "model.onnx", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def write_json(path, obj, indent=2):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, separators=None if indent else (",", ":"))
        f.write("\n")


def main():
    train_set, val_set, test_set = split()
    print(f"split: {len(train_set[1])} train / {len(val_set[1])} validation / {len(test_set[1])} test", flush=True)

    print("training digits (fp32 MLP 64-256-128-10)...", flush=True)
    full_w, full_b = train((256, 128), train_set, alpha=1e-4)
    print("training digits-edge (MLP 64-32-10, int8 per-channel weights)...", flush=True)
    edge_w, edge_b = train((32,), train_set, alpha=1e-3)

    full_file = write_version("digits", graph("digits", full_w, full_b, quantized=False))
    edge_file = write_version("digits-edge", graph("digits-edge", edge_w, edge_b, quantized=True))

    probs = {
        split_name: (forward(x, full_w, full_b, False), forward(x, edge_w, edge_b, True), y)
        for split_name, (x, y) in (("validation", val_set), ("test", test_set))
    }
    # Floored to 6 decimals so that the stored threshold admits exactly the rows it was calibrated on.
    threshold = math.floor(calibrate(probs["validation"][1], probs["validation"][0]) * 1e6) / 1e6
    dataset = {
        "source": "UCI Optical Recognition of Handwritten Digits (E. Alpaydin, C. Kaynak), via Debian python3-sklearn",
        "split": "stratified, seed 0: 1077 train / 360 validation / 360 test",
    }
    full_config = {
        "name": "digits",
        "platform": "onnxruntime_onnx",
        "description": "Full model: fp32 MLP 64-256-128-10 with ReLU and softmax, for the regional pools",
        "inputs": INPUTS,
        "outputs": OUTPUTS,
        "labels": LABELS,
        "maxBatchSize": 256,
        "version": VERSION,
        "versions": {
            VERSION: {
                **full_file,
                "accuracy": {s: accuracy(p[0], p[2]) for s, p in probs.items()},
            }
        },
        "dataset": dataset,
    }
    edge_config = {
        "name": "digits-edge",
        "platform": "onnxruntime_onnx",
        "description": "Edge model: MLP 64-32-10, int8 per-channel symmetric weights (DequantizeLinear), for the Worker",
        "standsFor": "digits",
        "inputs": INPUTS,
        "outputs": OUTPUTS,
        "labels": LABELS,
        "maxBatchSize": 64,
        "version": VERSION,
        "versions": {
            VERSION: {
                **edge_file,
                "weights": "int8",
                "accuracy": {s: accuracy(p[1], p[2]) for s, p in probs.items()},
                "cascade": {
                    "against": {"model": "digits", "version": VERSION},
                    "threshold": threshold,
                    "agreementTarget": AGREEMENT_TARGET,
                    "calibratedOn": "validation",
                    **{s: cascade_figures(threshold, p[1], p[0], p[2]) for s, p in probs.items()},
                },
            }
        },
        "dataset": dataset,
    }
    write_json(os.path.join(ROOT, "digits", "config.json"), full_config)
    write_json(os.path.join(ROOT, "digits-edge", "config.json"), edge_config)

    full_p, edge_p, y = probs["test"]
    heldout = {
        "description": "Held-out test split with labels and each model's expected probabilities (float32 reference)",
        "split": "test",
        "models": {"digits": VERSION, "digits-edge": VERSION},
        "rows": [
            {
                "input": [int(v) for v in x],
                "label": int(label),
                "expected": {
                    "digits": [float(f"{v:.7g}") for v in fp],
                    "digits-edge": [float(f"{v:.7g}") for v in ep],
                },
            }
            for x, label, fp, ep in zip(test_set[0], y, full_p, edge_p)
        ],
    }
    write_json(os.path.join(ROOT, "digits-heldout.json"), heldout, indent=None)

    edge_cascade = edge_config["versions"][VERSION]["cascade"]
    print(f"digits:      {full_file['bytes']} bytes, test accuracy {full_config['versions'][VERSION]['accuracy']['test']}")
    print(f"digits-edge: {edge_file['bytes']} bytes, test accuracy {edge_config['versions'][VERSION]['accuracy']['test']}")
    print(f"threshold {threshold:.6f} (validation): test edge share {edge_cascade['test']['edgeShare']}, "
          f"agreement {edge_cascade['test']['agreement']}, cascade accuracy {edge_cascade['test']['cascadeAccuracy']}")


if __name__ == "__main__":
    sys.exit(main())
