import { describe, expect, it } from "vitest";
import { drawingToFeatures } from "./features.ts";

/** A width x height canvas with ink where `inked(x, y)`. */
function canvas(width: number, height: number, inked: (x: number, y: number) => boolean): Uint8Array {
  const alpha = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) alpha[y * width + x] = inked(x, y) ? 255 : 0;
  return alpha;
}
const grid = (features: number[]) => Array.from({ length: 8 }, (_, r) => features.slice(r * 8, r * 8 + 8));

describe("drawingToFeatures", () => {
  it("returns null for an empty drawing", () => {
    expect(drawingToFeatures(new Uint8Array(100 * 100), 100, 100)).toBeNull();
  });

  it("fills all 64 blocks with 16 for a solid square, wherever it was drawn", () => {
    const features = drawingToFeatures(
      canvas(200, 200, (x, y) => x >= 50 && x < 130 && y >= 20 && y < 100),
      200,
      200,
    );
    expect(features).toEqual(new Array(64).fill(16));
  });

  it("counts set pixels per 4x4 block: a left half gives 16s on the left, 0s on the right", () => {
    const features = drawingToFeatures(
      canvas(256, 256, (x, y) => (x < 128 && y < 256) || (x === 255 && y === 0)),
      256,
      256,
    )!;
    for (const row of grid(features).slice(1)) expect(row).toEqual([16, 16, 16, 16, 0, 0, 0, 0]);
  });

  it("keeps the aspect ratio and centres a tall stroke, like a handwritten 1", () => {
    // A 20 x 200 vertical bar: scaled to 3.2 x 32 and centred, it covers the middle columns only.
    const features = drawingToFeatures(
      canvas(300, 300, (x, y) => x >= 140 && x < 160 && y >= 50 && y < 250),
      300,
      300,
    )!;
    for (const row of grid(features)) {
      expect(row[0]).toBe(0);
      expect(row[1]).toBe(0);
      expect(row[6]).toBe(0);
      expect(row[7]).toBe(0);
      expect(row[3]! + row[4]!).toBeGreaterThanOrEqual(8);
    }
    expect(features.every((v) => v >= 0 && v <= 16)).toBe(true);
  });
});
