/**
 * A one-node ONNX model (`y = Identity(x)`, float [1]) written out field by field, so the execution provider
 * can be tried before any model file from the repository is trusted. Field numbers from onnx.proto:
 * ModelProto ir_version = 1, graph = 7, opset_import = 8; GraphProto node = 1, name = 2, input = 11,
 * output = 12; NodeProto input = 1, output = 2, op_type = 4; ValueInfoProto name = 1, type = 2;
 * TypeProto tensor_type = 1; Tensor elem_type = 1, shape = 2; TensorShapeProto dim = 1; dim_value = 1;
 * OperatorSetIdProto version = 2.
 */
const encoder = new TextEncoder();

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

const int = (field: number, n: number): number[] => [...varint(field << 3), ...varint(n)];
const bytes = (field: number, payload: number[] | Uint8Array): number[] => [
  ...varint((field << 3) | 2),
  ...varint(payload.length),
  ...payload,
];
const text = (field: number, s: string): number[] => bytes(field, encoder.encode(s));

/** `name`: float tensor of shape [1]. */
const valueInfo = (name: string): number[] => [
  ...text(1, name),
  ...bytes(2, bytes(1, [...int(1, 1), ...bytes(2, bytes(1, int(1, 1)))])),
];

const graph = [
  ...bytes(1, [...text(1, "x"), ...text(2, "y"), ...text(4, "Identity")]),
  ...text(2, "provider-check"),
  ...bytes(11, valueInfo("x")),
  ...bytes(12, valueInfo("y")),
];

/** ONNX IR version 8, opset 13. */
export const PROVIDER_CHECK_MODEL = Uint8Array.from([...int(1, 8), ...bytes(7, graph), ...bytes(8, int(2, 13))]);
