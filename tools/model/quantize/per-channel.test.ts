import { describe, expect, it } from "vitest";
import { dequantize, quantizePerChannel, roundHalfEven } from "./per-channel.ts";

describe("roundHalfEven", () => {
  it.each([
    [0.5, 0],
    [1.5, 2],
    [2.5, 2],
    [-0.5, -0],
    [-1.5, -2],
    [-2.5, -2],
    [2.4, 2],
    [2.6, 3],
    [-2.6, -3],
  ])("%d -> %d", (x, expected) => {
    expect(roundHalfEven(x)).toBe(expected);
  });
});

describe("quantizePerChannel", () => {
  // [2, 3]: columns are MatMul's output channels.
  const matrix = { values: Float32Array.from([1, -0.5, 0, 2, 0.25, 0]), rows: 2, cols: 3 };

  it("gives each output column its own symmetric scale (MatMul, axis 1)", () => {
    const { q, scales, axis } = quantizePerChannel(matrix, 1);
    expect(axis).toBe(1);
    // max|w| per column: 2, 0.5, 0 (an all-zero channel keeps scale 1).
    expect(Array.from(scales)).toEqual([Math.fround(2 / 127), Math.fround(0.5 / 127), 1]);
    // 1 / (2/127) = 63.5 rounds to even 64; -0.5 / (0.5/127) = -127; 0.25 / (0.5/127) = 63.5 -> 64.
    expect(Array.from(q)).toEqual([64, -127, 0, 127, 64, 0]);
  });

  it("gives each row its own scale for transposed weights (Gemm transB, axis 0)", () => {
    const { q, scales } = quantizePerChannel(matrix, 0);
    expect(Array.from(scales)).toEqual([Math.fround(1 / 127), Math.fround(2 / 127)]);
    expect(Array.from(q)).toEqual([127, -64, 0, 127, 16, 0]);
  });

  it("keeps every weight within half a step of its channel's scale", () => {
    const values = Float32Array.from({ length: 64 * 10 }, (_, i) => Math.sin(i * 1.7) * (1 + (i % 10)));
    const m = { values, rows: 64, cols: 10 };
    const quantized = quantizePerChannel(m, 1);
    const back = dequantize(quantized, 64, 10);
    for (let i = 0; i < values.length; i++) {
      expect(Math.abs(back[i]! - values[i]!)).toBeLessThanOrEqual(quantized.scales[i % 10]! / 2 + 1e-6);
    }
    expect(Math.max(...Array.from(quantized.q))).toBe(127);
    expect(Math.min(...Array.from(quantized.q))).toBeGreaterThanOrEqual(-127);
  });

  it("refuses non-finite weights and a shape that does not match the values", () => {
    expect(() => quantizePerChannel({ values: Float32Array.from([1, Number.NaN]), rows: 1, cols: 2 }, 1)).toThrow(
      "weight 1 is NaN",
    );
    expect(() => quantizePerChannel({ values: new Float32Array(5), rows: 2, cols: 3 }, 1)).toThrow("[2, 3] needs 6");
  });
});
