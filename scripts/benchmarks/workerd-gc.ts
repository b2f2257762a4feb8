/**
 * workerd's major garbage collections, read from V8's `--trace-gc` lines (`MINIFLARE_WORKERD_V8_FLAGS`, which
 * Miniflare hands to workerd; the lines reach `startEdgeWorker`'s `onLog`). A major collection (Mark-Compact)
 * holds the thread every isolate of that workerd runs on: bench:many-models measured them as the stalls of
 * 50-250 ms that set its p99s. `--trace-gc` only prints; it changes no collection.
 */

/** One major collection: when its line arrived (`performance.now()`), and its pause. */
export interface MajorGc {
  atMs: number;
  pauseMs: number;
}

/**
 * The pause of a `--trace-gc` line's major collection, e.g. `[9950:0x31be7fcaa000]    69887 ms: Mark-Compact
 * 28.9 (53.6) -> 6.5 (48.9) MB, pooled: 4.8 MB, 214.42 / 0.00 ms (average mu = ...` is 214.42; undefined for
 * scavenges and any other line.
 */
export function majorGcPauseMs(line: string): number | undefined {
  const match = /\bMark-Compact\b[^,]*,(?:[^,]*,)*? ([\d.]+) \/ [\d.]+ ms\b/.exec(line);
  return match ? Number(match[1]) : undefined;
}

/** The V8 flags to start workerd with so that its collections are printed, kept with any already set. */
export function withTraceGc(flags: string | undefined): string {
  const set = (flags ?? "").split(" ").filter(Boolean);
  return [...new Set([...set, "--trace-gc"])].join(" ");
}

/** The major collections of one workerd, as its lines arrive. */
export class WorkerdGcLog {
  readonly collections: MajorGc[] = [];

  /** A line workerd printed: recorded if it is a major collection's; true if it was a `--trace-gc` line at all. */
  read(line: string, atMs = performance.now()): boolean {
    const pauseMs = majorGcPauseMs(line);
    if (pauseMs !== undefined) this.collections.push({ atMs, pauseMs });
    return pauseMs !== undefined || /\bms: Scavenge\b/.test(line);
  }

  /** The collections whose lines arrived between `fromMs` and `toMs` (a line is printed once its pause ends). */
  between(fromMs: number, toMs: number): MajorGc[] {
    return this.collections.filter((c) => c.atMs >= fromMs && c.atMs <= toMs);
  }
}
