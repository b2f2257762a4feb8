import { readFileSync } from "node:fs";
import protobuf, { type Long } from "protobufjs";

/**
 * ONNX models as protobuf messages: `onnx-ml.proto` (ONNX 1.22.0, the ML variant, a superset of onnx.proto
 * that also declares the `ai.onnx.ml` types) read by protobufjs at start-up, so every field of the
 * specification survives a decode and re-encode, including those this code never reads.
 */
const root = protobuf.parse(readFileSync(new URL("./onnx-ml.proto", import.meta.url), "utf8")).root;
const ModelType = root.lookupType("onnx.ModelProto");
const TensorType = root.lookupType("onnx.TensorProto");
const NodeType = root.lookupType("onnx.NodeProto");
const AttributeType = root.lookupType("onnx.AttributeProto");
const ValueInfoType = root.lookupType("onnx.ValueInfoProto");

/** An int64 field as protobufjs decodes it: a Long (it depends on long.js), or a number when set by code. */
export type Int64 = number | Long;

/** Its value as a number (every int64 read here, dimensions and opset versions, is far below 2^53). */
export function int64(value: Int64 | null | undefined): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === "number") return value;
  return value.high * 2 ** 32 + (value.low >>> 0);
}

/** `TensorProto.DataType` values this code meets. */
export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT64: 7, STRING: 8, DOUBLE: 11 } as const;

/** `TensorProto.DataLocation.EXTERNAL`: the values are in another file. */
export const EXTERNAL_DATA = 1;

/** The subset of ONNX's messages that the model tool reads or writes (field names as protobufjs gives them). */
export interface TensorProto {
  dims: Int64[];
  dataType: number;
  name: string;
  rawData: Uint8Array;
  floatData: number[];
  dataLocation: number;
  /** Where external values are: `location` (relative to the model's directory), `offset`, `length`. */
  externalData: { key: string; value: string }[];
}

export interface AttributeProto {
  name: string;
  type: number;
  i: Int64;
  f: number;
  s: Uint8Array;
  ints: Int64[];
  floats: number[];
  strings: Uint8Array[];
}

export interface NodeProto {
  input: string[];
  output: string[];
  name: string;
  opType: string;
  domain: string;
  attribute: AttributeProto[];
}

export interface Dimension {
  dimValue?: Int64;
  dimParam?: string;
}

export interface TypeProto {
  tensorType?: { elemType: number; shape?: { dim: Dimension[] } };
  sequenceType?: unknown;
  mapType?: unknown;
}

export interface ValueInfoProto {
  name: string;
  type?: TypeProto;
}

export interface GraphProto {
  node: NodeProto[];
  name: string;
  initializer: TensorProto[];
  input: ValueInfoProto[];
  output: ValueInfoProto[];
}

export interface OperatorSetId {
  domain: string;
  version: Int64;
}

export interface ModelProto {
  irVersion: Int64;
  opsetImport: OperatorSetId[];
  producerName: string;
  graph?: GraphProto;
}

/** Decode a `.onnx` file; throws when the bytes are not a protobuf ModelProto with a graph. */
export function decodeModel(bytes: Uint8Array): ModelProto {
  let model: ModelProto;
  try {
    model = ModelType.decode(bytes) as unknown as ModelProto;
  } catch (err) {
    throw new Error(`not an ONNX model (protobuf: ${(err as Error).message})`);
  }
  if (!model.graph || model.graph.node.length === 0 || int64(model.irVersion) === 0) {
    throw new Error("not an ONNX model (no IR version or no graph with nodes)");
  }
  return model;
}

export function encodeModel(model: ModelProto): Uint8Array {
  return ModelType.encode(model as unknown as protobuf.Message).finish();
}

/** A new TensorProto (only the fields given are set). */
export function makeTensor(fields: Partial<TensorProto>): TensorProto {
  return TensorType.fromObject(fields) as unknown as TensorProto;
}

/** A new NodeProto with integer attributes. */
export function makeNode(
  fields: Omit<Partial<NodeProto>, "attribute">,
  intAttributes: Record<string, number> = {},
): NodeProto {
  const attribute = Object.entries(intAttributes).map(([name, i]) =>
    AttributeType.fromObject({ name, i, type: 2 /* AttributeProto.INT */ }),
  );
  return NodeType.fromObject({ ...fields, attribute }) as unknown as NodeProto;
}

/** The version of the default (`ai.onnx`) operator set the model imports; 0 when it imports none. */
export function defaultOpset(model: ModelProto): number {
  const entry = model.opsetImport.find((o) => o.domain === "" || o.domain === "ai.onnx");
  return entry ? int64(entry.version) : 0;
}

/** An integer attribute of a node, or `fallback` when the node does not set it. */
export function intAttribute(node: NodeProto, name: string, fallback: number): number {
  const attribute = node.attribute.find((a) => a.name === name);
  return attribute ? int64(attribute.i) : fallback;
}

/** A new ModelProto from a plain object in protobufjs's JSON form (camelCase fields); tests build graphs with it. */
export function makeModel(fields: Record<string, unknown>): ModelProto {
  return ModelType.fromObject(fields) as unknown as ModelProto;
}

/** A tensor value info: `elemType` of shape `dims` (a string is a symbolic dimension). */
export function makeValueInfo(name: string, elemType: number, dims: (number | string)[]): ValueInfoProto {
  const dim = dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d }));
  return ValueInfoType.fromObject({
    name,
    type: { tensorType: { elemType, shape: { dim } } },
  }) as unknown as ValueInfoProto;
}

/** A node attribute by name, if set. */
export function attribute(node: NodeProto, name: string): AttributeProto | undefined {
  return node.attribute.find((a) => a.name === name);
}
