import type { StoredPoint } from "../analytics/figures.ts";

/**
 * `LOCAL_PLATFORM=memory`: the Analytics Engine dataset in the isolate. Miniflare discards `writeDataPoint`
 * (there is no local Analytics Engine), so `npm start` keeps the points here, the most recent `capacity`
 * of them, and `/status` computes the same figures from them as the SQL does from Cloudflare's
 * (edge/analytics/figures.ts). Every point is kept: its sample interval is 1.
 */
export class MemoryAnalytics implements AnalyticsEngineDataset {
  readonly #points: StoredPoint[] = [];
  readonly #capacity: number;
  #written = 0;

  constructor(capacity = 20_000) {
    this.#capacity = capacity;
  }

  writeDataPoint(point: AnalyticsEngineDataPoint = {}): void {
    this.#written++;
    const index = point.indexes?.[0];
    this.#points.push({
      index: typeof index === "string" ? index : "",
      blobs: (point.blobs ?? []).map((b) => (typeof b === "string" ? b : "")),
      doubles: point.doubles ?? [],
      sampleInterval: 1,
    });
    if (this.#points.length > this.#capacity) this.#points.splice(0, this.#points.length - this.#capacity);
  }

  /** The points kept, oldest first. */
  points(): StoredPoint[] {
    return this.#points;
  }

  /** Points written since the isolate started (more than kept once the capacity is reached). */
  get written(): number {
    return this.#written;
  }
}
