import {
  attribute,
  DataType,
  EXTERNAL_DATA,
  int64,
  type ModelProto,
  makeNode,
  makeValueInfo,
  type NodeProto,
  type TensorProto,
  type ValueInfoProto,
} from "./proto.ts";

/**
 * What the converters people use write by default, made servable without re-exporting: each step is a small,
 * exact rewrite of the graph, stated in the import's summary and in config.json.
 *
 * - `external-data`: weights in a separate file (torch.onnx.export's `model.onnx.data`) are copied into the
 *   model, so the stored file is whole.
 * - `zipmap`: skl2onnx and onnxmltools end classifiers in a ZipMap (probabilities as a sequence of maps); the
 *   tensor the ZipMap was built from is served instead, and the ZipMap's class labels become the labels.
 * - `input-cast`: an FP64 input (skl2onnx's `to_onnx` on float64 data) becomes FP32 with a Cast to FP64 right
 *   after it; the import measures what the FP32 rounding changes.
 * - `output-cast`: FP64 probabilities are cast to FP32 at the end.
 * - `softmax`: logits or margins (PyTorch classifiers, SVMs) get a Softmax appended, only when asked (`--softmax`).
 */
export type ConversionStep = "external-data" | "zipmap" | "input-cast" | "output-cast" | "softmax";

export interface Conversion {
  step: ConversionStep;
  /** For people: what was done, naming the tensors and files. */
  detail: string;
  /** An `input-cast` measured by the import on its data: the FP32 model against the FP64 one as exported. */
  measured?: { rows: number; labelAgreement: number; maxProbabilityDifference: number };
}

/** Class labels the model carries, and which node they were read from. */
export interface ModelLabels {
  labels: string[];
  /** Integer labels (`classlabels_int64s` / `classlabels_ints`) or names (`classlabels_strings`). */
  kind: "integers" | "names";
  /** E.g. `ZipMap "ZipMap" (classlabels_strings)`. */
  source: string;
}

export interface Converted {
  model: ModelProto;
  conversions: Conversion[];
  labels?: ModelLabels;
}

export interface ConvertOptions {
  /** Append a Softmax to the probabilities output. Default false. */
  softmax?: boolean;
  /** Cast an FP64 input to FP32 (import turns this off once, to measure the FP64 model as exported). Default true. */
  castInput?: boolean;
  /** The bytes of an external data file, by its `location` (relative to the model's directory). */
  readExternal?: (location: string) => Uint8Array;
}

/** The graph cannot be converted; the message names what and what to do. */
export class ConversionError extends Error {}

const ML_DOMAIN = "ai.onnx.ml";
const CLASSIFIERS = new Set(["TreeEnsembleClassifier", "LinearClassifier", "SVMClassifier"]);

function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** Class labels of a ZipMap or classifier node, if it has any. */
function labelsOf(node: NodeProto): ModelLabels | undefined {
  const where = `${node.opType} "${node.name}"`;
  const strings = attribute(node, "classlabels_strings");
  if (strings && strings.strings.length > 0) {
    return { labels: strings.strings.map(decode), kind: "names", source: `${where} (classlabels_strings)` };
  }
  for (const name of ["classlabels_int64s", "classlabels_ints"]) {
    const ints = attribute(node, name);
    if (ints && ints.ints.length > 0) {
      return { labels: ints.ints.map((i) => String(int64(i))), kind: "integers", source: `${where} (${name})` };
    }
  }
  return undefined;
}

/** The class labels the graph carries: a ZipMap's, else its classifier node's. */
export function modelLabels(model: ModelProto): ModelLabels | undefined {
  const nodes = model.graph!.node.filter((n) => n.domain === ML_DOMAIN);
  for (const node of nodes.filter((n) => n.opType === "ZipMap")) {
    const labels = labelsOf(node);
    if (labels) return labels;
  }
  for (const node of nodes.filter((n) => CLASSIFIERS.has(n.opType))) {
    const labels = labelsOf(node);
    if (labels) return labels;
  }
  return undefined;
}

function externalField(tensor: TensorProto, key: string): string | undefined {
  return tensor.externalData.find((e) => e.key === key)?.value;
}

/** Copy every external tensor's bytes into the tensor itself. */
function inlineExternalData(model: ModelProto, read: ConvertOptions["readExternal"]): Conversion | undefined {
  const external = model.graph!.initializer.filter((t) => t.dataLocation === EXTERNAL_DATA);
  if (external.length === 0) return undefined;
  if (!read) throw new ConversionError(`initializer "${external[0]!.name}" keeps its values in an external file`);
  const files = new Map<string, Uint8Array>();
  let bytes = 0;
  const initializer = model.graph!.initializer.map((tensor) => {
    if (tensor.dataLocation !== EXTERNAL_DATA) return tensor;
    const location = externalField(tensor, "location");
    if (!location) throw new ConversionError(`initializer "${tensor.name}" is external but names no file`);
    let file = files.get(location);
    if (!file) {
      file = read(location);
      files.set(location, file);
    }
    const offset = Number(externalField(tensor, "offset") ?? 0);
    const length = Number(externalField(tensor, "length") ?? file.byteLength - offset);
    if (!(offset >= 0 && length >= 0 && offset + length <= file.byteLength)) {
      throw new ConversionError(
        `initializer "${tensor.name}" is at bytes ${offset}..${offset + length} of ${location}, which has ${file.byteLength}; the file does not belong to this model`,
      );
    }
    bytes += length;
    return {
      ...tensor,
      externalData: [],
      dataLocation: 0,
      rawData: file.slice(offset, offset + length),
    } as TensorProto;
  });
  model.graph = { ...model.graph!, initializer };
  return {
    step: "external-data",
    detail: `${external.length} initializers (${bytes} bytes) copied from ${[...files.keys()].join(", ")} into the model file`,
  };
}

/** Replace each ZipMap graph output by the probability tensor it was built from. */
function removeZipMaps(model: ModelProto): Conversion[] {
  const graph = model.graph!;
  const out: Conversion[] = [];
  const output: ValueInfoProto[] = [];
  const drop = new Set<NodeProto>();
  for (const value of graph.output) {
    const zipmap = graph.node.find((n) => n.opType === "ZipMap" && n.output[0] === value.name);
    if (!zipmap) {
      output.push(value);
      continue;
    }
    const labels = labelsOf(zipmap);
    const source = zipmap.input[0]!;
    drop.add(zipmap);
    output.push(makeValueInfo(source, DataType.FLOAT, ["N", labels?.labels.length ?? "C"]));
    out.push({
      step: "zipmap",
      detail: `ZipMap "${zipmap.name}" removed: "${source}" (the probability tensor it was built from) is served instead of "${value.name}"`,
    });
  }
  if (drop.size > 0) model.graph = { ...graph, node: graph.node.filter((n) => !drop.has(n)), output };
  return out;
}

function taken(model: ModelProto): Set<string> {
  const graph = model.graph!;
  return new Set([
    ...graph.initializer.map((t) => t.name),
    ...graph.input.map((i) => i.name),
    ...graph.node.flatMap((n) => [...n.input, ...n.output, n.name]),
  ]);
}

function fresh(names: Set<string>, base: string): string {
  let name = base;
  for (let n = 1; names.has(name); n++) name = `${base}_${n}`;
  names.add(name);
  return name;
}

/** Rename a tensor wherever nodes read it. */
function renameReads(nodes: NodeProto[], from: string, to: string): NodeProto[] {
  return nodes.map((n) => (n.input.includes(from) ? { ...n, input: n.input.map((i) => (i === from ? to : i)) } : n));
}

/** Rename a tensor wherever nodes write or read it (so a new node can produce it under its old name). */
function renameTensor(nodes: NodeProto[], from: string, to: string): NodeProto[] {
  return renameReads(nodes, from, to).map((n) =>
    n.output.includes(from) ? { ...n, output: n.output.map((o) => (o === from ? to : o)) } : n,
  );
}

function elemType(value: ValueInfoProto): number | undefined {
  return value.type?.tensorType?.elemType;
}

function rank(value: ValueInfoProto): number | undefined {
  return value.type?.tensorType?.shape?.dim.length;
}

/** An FP64 `[-1, N]` input becomes FP32 under the same name, cast to FP64 for the nodes that read it. */
function castInput(model: ModelProto): Conversion | undefined {
  const graph = model.graph!;
  const initializers = new Set(graph.initializer.map((t) => t.name));
  const inputs = graph.input.filter((i) => !initializers.has(i.name));
  const input = inputs.length === 1 ? inputs[0]! : undefined;
  if (!input || elemType(input) !== DataType.DOUBLE || rank(input) !== 2) return undefined;
  const names = taken(model);
  const cast = fresh(names, `${input.name}_fp64`);
  const node = makeNode(
    { opType: "Cast", name: fresh(names, `${input.name}_cast_fp64`), input: [input.name], output: [cast] },
    { to: DataType.DOUBLE },
  );
  const fp32 = { ...input, type: { tensorType: { ...input.type!.tensorType!, elemType: DataType.FLOAT } } };
  model.graph = {
    ...graph,
    input: graph.input.map((i) => (i === input ? fp32 : i)),
    node: [node, ...renameReads(graph.node, input.name, cast)],
  };
  return {
    step: "input-cast",
    detail: `input "${input.name}" was FP64: it takes FP32 now, cast to FP64 by the first node`,
  };
}

/** Append `opType` to the graph output `value`, which keeps its name (the producer's tensor is renamed). */
function appendToOutput(
  model: ModelProto,
  value: ValueInfoProto,
  suffix: string,
  opType: string,
  attributes: Record<string, number>,
): ModelProto {
  const graph = model.graph!;
  const names = taken(model);
  const before = fresh(names, `${value.name}_${suffix}`);
  const node = makeNode(
    { opType, name: fresh(names, `${value.name}_${opType.toLowerCase()}`), input: [before], output: [value.name] },
    attributes,
  );
  const dims = value.type?.tensorType?.shape?.dim ?? [];
  const outputValue = makeValueInfo(
    value.name,
    DataType.FLOAT,
    dims.map((d) => d.dimParam || int64(d.dimValue) || "N"),
  );
  return {
    ...model,
    graph: {
      ...graph,
      node: [...renameTensor(graph.node, value.name, before), node],
      output: graph.output.map((o) => (o === value ? outputValue : o)),
    },
  };
}

/** The rank-2 float output that holds the class scores, if exactly one. */
function scoresOutput(model: ModelProto, types: readonly number[]): ValueInfoProto | undefined {
  const candidates = model.graph!.output.filter((o) => types.includes(elemType(o) ?? -1) && rank(o) === 2);
  return candidates.length === 1 ? candidates[0] : undefined;
}

/**
 * The graph as edgecascade serves it, with the steps that got it there (none: the model is unchanged). The
 * input model is not modified.
 */
export function convertForServing(source: ModelProto, options: ConvertOptions = {}): Converted {
  let model: ModelProto = { ...source, graph: { ...source.graph! } };
  const conversions: Conversion[] = [];
  const labels = modelLabels(model);
  const external = inlineExternalData(model, options.readExternal);
  if (external) conversions.push(external);
  conversions.push(...removeZipMaps(model));
  if (options.castInput !== false) {
    const cast = castInput(model);
    if (cast) conversions.push(cast);
  }
  const fp64 = scoresOutput(model, [DataType.DOUBLE]);
  if (fp64) {
    model = appendToOutput(model, fp64, "fp64", "Cast", { to: DataType.FLOAT });
    conversions.push({ step: "output-cast", detail: `output "${fp64.name}" was FP64: cast to FP32 at the end` });
  }
  if (options.softmax) {
    const scores = scoresOutput(model, [DataType.FLOAT]);
    if (!scores) throw new ConversionError("--softmax: the graph has no single FP32 [-1, C] output to apply it to");
    const producer = model.graph!.node.find((n) => n.output.includes(scores.name));
    if (producer?.opType === "Softmax") {
      throw new ConversionError(
        `--softmax: output "${scores.name}" already comes out of a Softmax ("${producer.name}"); import it without --softmax`,
      );
    }
    model = appendToOutput(model, scores, "logits", "Softmax", { axis: 1 });
    conversions.push({
      step: "softmax",
      detail: `Softmax appended to "${scores.name}" (${producer ? `${producer.opType} output, ` : ""}logits or margins): the served scores are softmax(${scores.name})`,
    });
  }
  return { model, conversions, ...(labels ? { labels } : {}) };
}
