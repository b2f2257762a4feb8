/**
 * A drawing as the dataset's 64 features, made the way UCI made them from NIST forms: the ink's bounding
 * box is scaled (aspect ratio kept) into a 32x32 bitmap and centred, then each 4x4 block's count of set
 * pixels (0-16) is one feature, row-major.
 *
 * `alpha` is one ink value (0-255) per canvas pixel, row-major. Returns null for an empty drawing.
 * Self-contained — no imports, no outer names — because the demo page embeds this function's source.
 */
export function drawingToFeatures(alpha: ArrayLike<number>, width: number, height: number): number[] | null {
  const INK = 32;
  let minX = width;
  let minY = height;
  let maxX = -1;
  let maxY = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (alpha[y * width + x]! > INK) {
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
    }
  }
  if (maxX < 0) return null;
  const boxW = maxX - minX + 1;
  const boxH = maxY - minY + 1;
  const scale = 32 / Math.max(boxW, boxH);
  const offX = (32 - boxW * scale) / 2;
  const offY = (32 - boxH * scale) / 2;
  // Ink coverage of each 32x32 cell; a cell is set when at least a quarter of it is ink.
  const ink = new Float64Array(32 * 32);
  const area = new Float64Array(32 * 32);
  for (let y = minY; y <= maxY; y++) {
    const ty = Math.min(31, Math.floor(offY + (y - minY + 0.5) * scale));
    for (let x = minX; x <= maxX; x++) {
      const tx = Math.min(31, Math.floor(offX + (x - minX + 0.5) * scale));
      area[ty * 32 + tx]! += 1;
      if (alpha[y * width + x]! > INK) ink[ty * 32 + tx]! += 1;
    }
  }
  const features = new Array<number>(64).fill(0);
  for (let ty = 0; ty < 32; ty++) {
    for (let tx = 0; tx < 32; tx++) {
      const a = area[ty * 32 + tx]!;
      if (a > 0 && ink[ty * 32 + tx]! / a >= 0.25) features[(ty >> 2) * 8 + (tx >> 2)]! += 1;
    }
  }
  return features;
}
