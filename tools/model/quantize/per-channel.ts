/** A 2-D float32 weight matrix, row-major. */
export interface WeightMatrix {
  values: Float32Array;
  rows: number;
  cols: number;
}

/** Weight-only int8 of one matrix: `values ≈ q * scale[channel]`, zero point 0. */
export interface QuantizedMatrix {
  q: Int8Array;
  /** One scale per output channel. */
  scales: Float32Array;
  /** Which axis the channels run along: 1 for MatMul's `[K, N]` weights, 0 for Gemm's transposed `[N, K]`. */
  axis: 0 | 1;
}

/** Round half to even, as ONNX's QuantizeLinear does (so that this agrees with any ONNX quantizer). */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * Symmetric int8 per output channel: for each channel, `scale = max|w| / 127` (1 for an all-zero channel, so
 * that dequantizing gives zeros), `q = round(w / scale)` clamped to [-127, 127]. -128 is never used, which
 * keeps the range symmetric: `-q` always exists.
 */
export function quantizePerChannel(matrix: WeightMatrix, axis: 0 | 1): QuantizedMatrix {
  const { values, rows, cols } = matrix;
  if (values.length !== rows * cols) {
    throw new Error(`weight matrix has ${values.length} values; [${rows}, ${cols}] needs ${rows * cols}`);
  }
  const channels = axis === 1 ? cols : rows;
  const channelOf = axis === 1 ? (i: number) => i % cols : (i: number) => Math.floor(i / cols);
  const maxAbs = new Float32Array(channels);
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]!);
    if (!Number.isFinite(a)) throw new Error(`weight ${i} is ${values[i]}; only finite weights can be quantized`);
    const c = channelOf(i);
    if (a > maxAbs[c]!) maxAbs[c] = a;
  }
  const scales = new Float32Array(channels);
  for (let c = 0; c < channels; c++) scales[c] = maxAbs[c]! > 0 ? maxAbs[c]! / 127 : 1;
  const q = new Int8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    q[i] = Math.max(-127, Math.min(127, roundHalfEven(values[i]! / scales[channelOf(i)]!)));
  }
  return { q, scales, axis };
}

/** `q * scale` back to float32, for measuring what quantization cost. */
export function dequantize(quantized: QuantizedMatrix, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < out.length; i++) {
    const c = quantized.axis === 1 ? i % cols : Math.floor(i / cols);
    out[i] = quantized.q[i]! * quantized.scales[c]!;
  }
  return out;
}
