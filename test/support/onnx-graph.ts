/**
 * Just enough of ONNX's protobuf to list a model's initializers and operators, so tests can check what a
 * model file really holds (ModelProto.graph = 7; GraphProto.node = 1, initializer = 5;
 * NodeProto.op_type = 4; TensorProto.dims = 1, data_type = 2, name = 8).
 */
export interface Initializer {
  name: string;
  dataType: number;
  dims: number[];
}

/** TensorProto.DataType values used here. */
export const ONNX_FLOAT = 1;
export const ONNX_INT8 = 3;

type Field = { field: number; wire: number; value: bigint | Uint8Array };

function* fields(buf: Uint8Array): Generator<Field> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    if (wire === 0) yield { field, wire, value: varint() };
    else if (wire === 2) {
      const len = Number(varint());
      yield { field, wire, value: buf.subarray(pos, pos + len) };
      pos += len;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}

function packedVarints(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = bytes[pos++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) break;
      shift += 7;
    }
    out.push(result);
  }
  return out;
}

/** Initializers and operator types of an ONNX model. */
export function readOnnxGraph(model: Uint8Array): { initializers: Initializer[]; ops: string[] } {
  const decoder = new TextDecoder();
  const graph = [...fields(model)].find((f) => f.field === 7 && f.wire === 2);
  if (!graph) throw new Error("no graph in model");
  const initializers: Initializer[] = [];
  const ops: string[] = [];
  for (const f of fields(graph.value as Uint8Array)) {
    if (f.field === 1 && f.wire === 2) {
      for (const n of fields(f.value as Uint8Array)) if (n.field === 4) ops.push(decoder.decode(n.value as Uint8Array));
    }
    if (f.field === 5 && f.wire === 2) {
      const t: Initializer = { name: "", dataType: 0, dims: [] };
      for (const g of fields(f.value as Uint8Array)) {
        if (g.field === 1) t.dims.push(...(g.wire === 2 ? packedVarints(g.value as Uint8Array) : [Number(g.value)]));
        if (g.field === 2) t.dataType = Number(g.value);
        if (g.field === 8) t.name = decoder.decode(g.value as Uint8Array);
      }
      initializers.push(t);
    }
  }
  return { initializers, ops };
}
