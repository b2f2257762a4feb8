import { DataType, type Dimension, defaultOpset, int64, type ModelProto, type ValueInfoProto } from "./proto.ts";

/**
 * What edgecascade can serve of a classifier: one FP32 input `[-1, width]`, probabilities `[-1, classes]`; or
 * a batch dimension fixed at export (`[1, width]`), served in runs of that many rows.
 */
export interface OnnxSignature {
  /** `fixedBatch`: the batch dimension the graph was exported with, when it is not dynamic. */
  input: { name: string; width: number; fixedBatch?: number };
  /** `classes` is undefined when the graph leaves the class dimension symbolic; a run tells it. */
  probabilities: { name: string; classes: number | undefined };
  /** The label output tree converters add (`ai.onnx.ml` classifiers: int64 or string labels), if any. */
  label?: { name: string };
  /** Version of the default operator set. */
  opset: number;
  /** Whether weights are stored as 8-bit integers (DequantizeLinear or QLinear* nodes, or int8/uint8 initializers). */
  int8: boolean;
}

/** The graph is not a classifier edgecascade can serve; the message says what to change. */
export class SignatureError extends Error {}

const TYPE_NAMES: Record<number, string> = {
  1: "FP32",
  2: "UINT8",
  3: "INT8",
  6: "INT32",
  7: "INT64",
  8: "STRING",
  9: "BOOL",
  10: "FP16",
  11: "FP64",
};

function describe(value: ValueInfoProto): string {
  const tensor = value.type?.tensorType;
  if (!tensor) {
    if (value.type?.sequenceType) return "a sequence";
    if (value.type?.mapType) return "a map";
    return "of unknown type";
  }
  const dims = tensor.shape ? `[${tensor.shape.dim.map(dimText).join(", ")}]` : "of unknown shape";
  return `${TYPE_NAMES[tensor.elemType] ?? `type ${tensor.elemType}`} ${dims}`;
}

function dimText(d: Dimension): string {
  if (d.dimParam) return d.dimParam;
  const n = int64(d.dimValue);
  return n > 0 ? String(n) : "?";
}

/** A dimension left open: symbolic (`batch`), unset, or -1. */
function isOpen(d: Dimension | undefined): boolean {
  return !!d && (!!d.dimParam || int64(d.dimValue) <= 0);
}

function dims(value: ValueInfoProto): Dimension[] | undefined {
  return value.type?.tensorType?.shape?.dim;
}

/**
 * The serving signature of a decoded model, or a `SignatureError` saying what is wrong: exactly one graph
 * input (initializers listed as inputs by old exporters do not count), FP32 `[-1, N]`; exactly one FP32
 * output of rank 2 (the probabilities), optionally one rank-1 int64 or string output (the labels). Outputs
 * are told apart by type and shape, never by position: tree converters put the labels first.
 */
export function inspectSignature(model: ModelProto): OnnxSignature {
  const graph = model.graph!;
  const initializers = new Set(graph.initializer.map((t) => t.name));
  const inputs = graph.input.filter((i) => !initializers.has(i.name));
  if (inputs.length !== 1) {
    throw new SignatureError(
      `the graph has ${inputs.length} inputs (${inputs.map((i) => i.name).join(", ") || "none"}); ` +
        "edgecascade serves models with exactly one FP32 input [-1, N]",
    );
  }
  const input = inputs[0]!;
  const inputDims = dims(input);
  if (input.type?.tensorType?.elemType !== DataType.FLOAT || inputDims?.length !== 2) {
    throw new SignatureError(`input "${input.name}" is ${describe(input)}; it must be FP32 [-1, N]`);
  }
  // A fixed batch (torch.onnx.export without dynamic_axes, skl2onnx's [1, N]) is served in runs of that size.
  const fixedBatch = isOpen(inputDims[0]) ? undefined : int64(inputDims[0]!.dimValue);
  const width = int64(inputDims[1]!.dimValue);
  if (isOpen(inputDims[1])) {
    throw new SignatureError(`input "${input.name}" is ${describe(input)}: the number of features must be fixed`);
  }

  const probabilities: ValueInfoProto[] = [];
  const labels: ValueInfoProto[] = [];
  for (const output of graph.output) {
    const tensor = output.type?.tensorType;
    const outputDims = dims(output);
    if (!tensor) {
      const zipmap = output.type?.sequenceType
        ? ' (not one a ZipMap makes, which import removes: convert the model with tensor outputs, e.g. skl2onnx options={"zipmap": False})'
        : "";
      throw new SignatureError(`output "${output.name}" is ${describe(output)}${zipmap}; outputs must be tensors`);
    }
    if (tensor.elemType === DataType.FLOAT && outputDims?.length === 2) probabilities.push(output);
    else if ((tensor.elemType === DataType.INT64 || tensor.elemType === DataType.STRING) && outputDims?.length === 1) {
      labels.push(output);
    } else {
      throw new SignatureError(
        `output "${output.name}" is ${describe(output)}; a classifier has probabilities FP32 [-1, C] and at most a label output [-1]`,
      );
    }
  }
  if (probabilities.length !== 1) {
    throw new SignatureError(
      `the graph has ${probabilities.length} FP32 [-1, C] outputs (${probabilities.map((o) => o.name).join(", ") || "none"}); ` +
        "it needs exactly one, the class probabilities",
    );
  }
  if (labels.length > 1) {
    throw new SignatureError(`the graph has ${labels.length} label outputs (${labels.map((o) => o.name).join(", ")})`);
  }
  const probs = probabilities[0]!;
  const classDim = dims(probs)![1];
  const classes = isOpen(classDim) ? undefined : int64(classDim!.dimValue);
  if (classes !== undefined && classes < 2) {
    throw new SignatureError(`output "${probs.name}" is ${describe(probs)}; a classifier needs at least 2 classes`);
  }
  const int8 =
    graph.node.some((n) => n.opType === "DequantizeLinear" || n.opType.startsWith("QLinear")) ||
    graph.initializer.some((t) => t.dataType === DataType.INT8 || t.dataType === DataType.UINT8);
  return {
    input: { name: input.name, width, ...(fixedBatch === undefined ? {} : { fixedBatch }) },
    probabilities: { name: probs.name, classes },
    ...(labels[0] ? { label: { name: labels[0].name } } : {}),
    opset: defaultOpset(model),
    int8,
  };
}
