import {
  DataType,
  defaultOpset,
  EXTERNAL_DATA,
  int64,
  intAttribute,
  type ModelProto,
  makeNode,
  makeTensor,
  type NodeProto,
  type TensorProto,
} from "../onnx/proto.ts";
import { quantizePerChannel } from "./per-channel.ts";

/** Per-axis DequantizeLinear (the `axis` attribute) exists from opset 13 on. */
export const MIN_OPSET = 13;

export interface QuantizedTensor {
  name: string;
  dims: [number, number];
  /** 1: MatMul `[K, N]`; 0: Gemm with transB `[N, K]`. */
  axis: 0 | 1;
}

export interface GraphQuantization {
  model: ModelProto;
  tensors: QuantizedTensor[];
}

/** The model cannot be quantized as asked; the message says why and what to do instead. */
export class QuantizeError extends Error {}

/** The float32 values of an initializer, from `float_data` or little-endian `raw_data`. */
export function floatValues(tensor: TensorProto): Float32Array {
  if (tensor.dataLocation === EXTERNAL_DATA) {
    throw new QuantizeError(
      `initializer "${tensor.name}" keeps its values in an external file; save the model as one file`,
    );
  }
  if (tensor.floatData.length > 0) return Float32Array.from(tensor.floatData);
  const raw = tensor.rawData;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new Float32Array(raw.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

function littleEndianFloats(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
  return out;
}

/** The axis of output channels for a weight consumed as input B of this node, or undefined if it is not one. */
function weightAxis(node: NodeProto, name: string): 0 | 1 | undefined {
  if (node.input[1] !== name || node.input[0] === name) return undefined;
  if (node.opType === "MatMul") return 1;
  if (node.opType === "Gemm") return intAttribute(node, "transB", 0) === 1 ? 0 : 1;
  return undefined;
}

/**
 * Weight-only int8 for the edge: every FP32 2-D initializer used only as the weights (input B) of MatMul or
 * Gemm nodes becomes int8 per output channel, symmetric, with a `DequantizeLinear` node that restores it
 * under its old name, so the consumers are unchanged; everything else in the model stays as it was. The
 * model itself is not modified; a quantized copy is returned. Refuses a model without any such weights (a tree
 * ensemble: the message points to `--edge-trees`), and one whose default opset is below 13.
 */
export function quantizeWeights(source: ModelProto): GraphQuantization {
  const graph = source.graph!;
  const consumers = new Map<string, NodeProto[]>();
  for (const node of graph.node) {
    for (const input of node.input) consumers.set(input, [...(consumers.get(input) ?? []), node]);
  }
  const graphInputs = new Set(graph.input.map((i) => i.name));
  const taken = new Set([
    ...graph.initializer.map((t) => t.name),
    ...graph.node.flatMap((n) => [...n.input, ...n.output, n.name]),
    ...graph.input.map((i) => i.name),
  ]);
  const fresh = (base: string) => {
    let name = base;
    for (let n = 1; taken.has(name); n++) name = `${base}_${n}`;
    taken.add(name);
    return name;
  };

  const tensors: QuantizedTensor[] = [];
  const initializers: TensorProto[] = [];
  const dequantizers: NodeProto[] = [];
  for (const tensor of graph.initializer) {
    const users = consumers.get(tensor.name) ?? [];
    const axes = users.map((node) => weightAxis(node, tensor.name));
    const axis = axes[0];
    const eligible =
      tensor.dataType === DataType.FLOAT &&
      tensor.dims.length === 2 &&
      !graphInputs.has(tensor.name) &&
      axis !== undefined &&
      axes.every((a) => a === axis);
    if (!eligible) {
      initializers.push(tensor);
      continue;
    }
    const rows = int64(tensor.dims[0]);
    const cols = int64(tensor.dims[1]);
    const { q, scales } = quantizePerChannel({ values: floatValues(tensor), rows, cols }, axis);
    const qName = fresh(`${tensor.name}_quantized`);
    const scaleName = fresh(`${tensor.name}_scale`);
    const zeroName = fresh(`${tensor.name}_zero_point`);
    initializers.push(
      makeTensor({ name: qName, dataType: DataType.INT8, dims: [rows, cols], rawData: new Uint8Array(q.buffer) }),
      makeTensor({
        name: scaleName,
        dataType: DataType.FLOAT,
        dims: [scales.length],
        rawData: littleEndianFloats(scales),
      }),
      makeTensor({
        name: zeroName,
        dataType: DataType.INT8,
        dims: [scales.length],
        rawData: new Uint8Array(scales.length),
      }),
    );
    dequantizers.push(
      makeNode(
        {
          opType: "DequantizeLinear",
          name: fresh(`${tensor.name}_dequantize`),
          input: [qName, scaleName, zeroName],
          output: [tensor.name],
        },
        { axis },
      ),
    );
    tensors.push({ name: tensor.name, dims: [rows, cols], axis });
  }
  // Checked before the opset: a tree ensemble's real reason is that it has no such weights, whatever its opset.
  if (tensors.length === 0) {
    const trees = graph.node.find((n) => n.opType.startsWith("TreeEnsemble"));
    // FP64 weights: what skl2onnx's to_onnx writes for float64 training data, a torch model in .double().
    const fp64 = graph.initializer.filter(
      (t) =>
        t.dataType === DataType.DOUBLE &&
        t.dims.length === 2 &&
        (consumers.get(t.name) ?? []).some((node) => weightAxis(node, t.name) !== undefined),
    );
    if (fp64.length > 0) {
      throw new QuantizeError(
        `the model's MatMul/Gemm weights are FP64 (${fp64.map((t) => `${t.name} [${t.dims.map(int64).join(", ")}]`).join(", ")}), and int8 quantization starts from FP32 ones. ` +
          "Re-export the model in float32 (skl2onnx: to_onnx(model, X.astype(numpy.float32)); torch: model.float() " +
          "before torch.onnx.export) and import that, or pass an edge variant of your own with --edge",
      );
    }
    throw new QuantizeError(
      trees
        ? `the model has no MatMul or Gemm weights to quantize: it is a tree ensemble (${trees.opType}). Make its edge variant from its first trees with --edge-trees K, or pass a smaller model of its own with --edge`
        : `the model has no FP32 MatMul or Gemm weights to quantize (its nodes: ${[...new Set(graph.node.map((n) => n.opType))].join(", ")}); pass a smaller model of its own with --edge`,
    );
  }
  const opset = defaultOpset(source);
  if (opset < MIN_OPSET) {
    throw new QuantizeError(
      `the model imports opset ${opset}; per-channel DequantizeLinear needs opset ${MIN_OPSET} or newer (re-export it with opset >= ${MIN_OPSET})`,
    );
  }
  // The dequantizers read initializers only, so they can run first: the node list stays topologically sorted.
  const model = {
    ...source,
    graph: { ...graph, initializer: initializers, node: [...dequantizers, ...graph.node] },
  } as ModelProto;
  return { model, tensors };
}
