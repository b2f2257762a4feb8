"""The edge Worker's start-up model (edge/inference/warm-up-model.ts): one small graph with every operator the
edge variants use (an int8 MLP: DequantizeLinear, Mul, MatMul, Add, Relu, Softmax; a tree ensemble:
ai.onnx.ml TreeEnsembleClassifier). Creating and running a session of it at start-up makes workerd compile the
ORT code those operators need before any request does. Prints the model as base64.
Run: /usr/bin/python3 scripts/build_warmup_model.py (Debian's python3-onnx, python3-numpy)."""
import base64

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2])
mlp = helper.make_tensor_value_info("mlp", TensorProto.FLOAT, [None, 2])
label = helper.make_tensor_value_info("label", TensorProto.INT64, [None])
trees = helper.make_tensor_value_info("trees", TensorProto.FLOAT, [None, 2])
inits = [
    numpy_helper.from_array(np.array([[1, -2], [3, 4]], dtype=np.int8), "w1q"),
    numpy_helper.from_array(np.array([[2, 1], [-1, 5]], dtype=np.int8), "w2q"),
    numpy_helper.from_array(np.array(0.05, dtype=np.float32), "scale"),
    numpy_helper.from_array(np.array(0, dtype=np.int8), "zero"),
    numpy_helper.from_array(np.array([1.0, 0.5], dtype=np.float32), "k"),
    numpy_helper.from_array(np.array([0.1, -0.1], dtype=np.float32), "b"),
]
nodes = [
    helper.make_node("DequantizeLinear", ["w1q", "scale", "zero"], ["w1"]),
    helper.make_node("DequantizeLinear", ["w2q", "scale", "zero"], ["w2"]),
    helper.make_node("Mul", ["x", "k"], ["xs"]),
    helper.make_node("MatMul", ["xs", "w1"], ["h0"]),
    helper.make_node("Add", ["h0", "b"], ["h1"]),
    helper.make_node("Relu", ["h1"], ["h2"]),
    helper.make_node("MatMul", ["h2", "w2"], ["o0"]),
    helper.make_node("Add", ["o0", "b"], ["o1"]),
    helper.make_node("Softmax", ["o1"], ["mlp"], axis=-1),
    helper.make_node(
        "TreeEnsembleClassifier",
        ["x"],
        ["label", "trees"],
        domain="ai.onnx.ml",
        classlabels_int64s=[0, 1],
        nodes_treeids=[0, 0, 0],
        nodes_nodeids=[0, 1, 2],
        nodes_featureids=[0, 0, 0],
        nodes_values=[0.5, 0.0, 0.0],
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 0, 0],
        nodes_falsenodeids=[2, 0, 0],
        nodes_missing_value_tracks_true=[0, 0, 0],
        nodes_hitrates=[1.0, 1.0, 1.0],
        class_treeids=[0, 0, 0, 0],
        class_nodeids=[1, 1, 2, 2],
        class_ids=[0, 1, 0, 1],
        class_weights=[0.8, 0.2, 0.3, 0.7],
        post_transform="NONE",
    ),
]
graph = helper.make_graph(nodes, "warmup", [x], [mlp, label, trees], inits)
model = helper.make_model(
    graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 3)], producer_name=""
)
model.ir_version = 8
onnx.checker.check_model(model)
print(base64.b64encode(model.SerializeToString()).decode())
