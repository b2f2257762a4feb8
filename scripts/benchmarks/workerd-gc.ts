/**
 * workerd's garbage collections, read from V8's `--trace-gc-nvp` lines (`MINIFLARE_WORKERD_V8_FLAGS`, which
 * Miniflare hands to workerd; the lines reach `startEdgeWorker`'s `onLog`). A major collection (mark-compact)
 * holds the thread every isolate of that workerd runs on: bench:many-models measured them as the stalls of
 * 50-250 ms that set its p99s. A major collection comes when V8's "global" heap (the old generation, the
 * embedder's C++ objects and external memory: a Request's, a Headers', a stream's) reaches its allocation limit,
 * so how often it comes is set by how much each request leaves there; a scavenge frees only young JavaScript
 * objects. The trace only prints; it changes no collection. Its lines reach Node through workerd's log pipe, up to
 * a few seconds after the pause they describe, so a collection's time is taken from the line itself (ms since its
 * isolate started), put on Node's clock by the isolate's least delayed line.
 */

/** One collection as its line says. */
export interface WorkerdGc {
  /** V8's address of the isolate that collected (one workerd holds the Worker's and Miniflare's own). */
  isolate: string;
  /** When the line was printed, at the end of the pause: ms since the isolate started. */
  isolateMs: number;
  /** A mark-compact (`mc`, `mmc`), not a scavenge or a minor mark-sweep. */
  major: boolean;
  pauseMs: number;
  /** The global heap (old generation, embedder and external memory) before and after, bytes. */
  heldBeforeBytes: number;
  heldAfterBytes: number;
}

/** A major collection in a run's report: when its pause ended (ms into the run), the pause, the heap around it. */
export interface MajorGc {
  atMs: number;
  pauseMs: number;
  heldBeforeBytes: number;
  heldAfterBytes: number;
}

/**
 * The collection of a `--trace-gc-nvp` line, e.g. `[9707:0x730b7fcaa000:0]  198 ms: GC: {"pause":1.129,...,
 * "gc":"s",...}`; undefined for any other line.
 */
export function parseGcLine(line: string): WorkerdGc | undefined {
  const at = line.indexOf("GC: {");
  if (at < 0) return undefined;
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(line.slice(at + "GC: ".length)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const number = (name: string) => (typeof fields[name] === "number" ? (fields[name] as number) : Number.NaN);
  const gc: WorkerdGc = {
    isolate: /^\[\d+:(0x[0-9a-f]+)/.exec(line.trimStart())?.[1] ?? "",
    isolateMs: Number(/^\[[^\]]*\]\s+([\d.]+) ms: GC/.exec(line.trimStart())?.[1] ?? Number.NaN),
    major: fields.gc === "mc" || fields.gc === "mmc",
    pauseMs: number("pause"),
    heldBeforeBytes: number("start_global_consumed_size"),
    heldAfterBytes: number("end_global_consumed_size"),
  };
  return Object.values(gc).some((v) => typeof v === "number" && Number.isNaN(v)) ? undefined : gc;
}

/** The V8 flags to start workerd with so that its collections are printed, kept with any already set. */
export function withTraceGc(flags: string | undefined): string {
  const set = (flags ?? "").split(" ").filter(Boolean);
  return [...new Set([...set, "--trace-gc-nvp"])].join(" ");
}

/**
 * What the isolates left on their global heaps between collections: from each collection's end to the next one's
 * start (the embedder's objects, external memory, what was allocated straight into the old generation) and what
 * each scavenge promoted. Only a major collection takes it back. `before` is each isolate's last collection before
 * the window, if any (its end is where the first growth counts from).
 */
export function heldGrowthBytes(collections: readonly WorkerdGc[], before: ReadonlyMap<string, WorkerdGc> = new Map()) {
  const last = new Map(before);
  let bytes = 0;
  for (const gc of collections) {
    const previous = last.get(gc.isolate);
    if (previous) bytes += gc.heldBeforeBytes - previous.heldAfterBytes;
    if (!gc.major) bytes += gc.heldAfterBytes - gc.heldBeforeBytes;
    last.set(gc.isolate, gc);
  }
  return bytes;
}

/** The collections of one workerd, as its lines arrive. */
export class WorkerdGcLog {
  readonly #collections: WorkerdGc[] = [];
  /** Per isolate, the least of (arrival on Node's clock − the line's own time): how far its clock is from Node's. */
  readonly #offsets = new Map<string, number>();

  /** A line workerd printed, arrived at `atMs` (`performance.now()`): true if it was a trace line at all. */
  read(line: string, atMs = performance.now()): boolean {
    const gc = parseGcLine(line);
    if (gc) {
      this.#collections.push(gc);
      this.#offsets.set(
        gc.isolate,
        Math.min(this.#offsets.get(gc.isolate) ?? Number.POSITIVE_INFINITY, atMs - gc.isolateMs),
      );
    }
    return gc !== undefined || line.includes("Memory pool:");
  }

  /** When `gc`'s pause ended, on Node's clock. */
  #endedAt(gc: WorkerdGc): number {
    return gc.isolateMs + this.#offsets.get(gc.isolate)!;
  }

  /**
   * The collections whose pause ended between `fromMs` and `toMs`: the major ones (ms from `fromMs` to the end of
   * each pause), and the bytes the isolates left for a major collection (heldGrowthBytes).
   */
  between(fromMs: number, toMs: number): { majors: MajorGc[]; heldGrowthBytes: number } {
    const inside = this.#collections.filter((c) => this.#endedAt(c) >= fromMs && this.#endedAt(c) <= toMs);
    const before = new Map<string, WorkerdGc>();
    for (const c of this.#collections) if (this.#endedAt(c) < fromMs) before.set(c.isolate, c);
    return {
      majors: inside
        .filter((c) => c.major)
        .map((c) => ({
          atMs: Math.round(this.#endedAt(c) - fromMs),
          pauseMs: c.pauseMs,
          heldBeforeBytes: c.heldBeforeBytes,
          heldAfterBytes: c.heldAfterBytes,
        })),
      heldGrowthBytes: heldGrowthBytes(inside, before),
    };
  }
}
