/**
 * workerd's garbage collections, read from V8's `--trace-gc-nvp` lines (`MINIFLARE_WORKERD_V8_FLAGS`, which
 * Miniflare hands to workerd; the lines reach `startEdgeWorker`'s `onLog`). A major collection (mark-compact)
 * holds the thread every isolate of that workerd runs on: bench:many-models measured them as the stalls of
 * 50-250 ms that set its p99s. A major collection comes when V8's "global" heap (the old generation, the
 * embedder's C++ objects and external memory: a Request's, a Headers', a stream's) reaches its allocation limit,
 * so how often it comes is set by how much each request leaves there; a scavenge frees only young JavaScript
 * objects. The trace only prints; it changes no collection. Its lines reach Node through workerd's log pipe, up to
 * a few seconds after the pause they describe: a collection's time here is when its line arrived.
 */

/** One collection as its line says. */
export interface WorkerdGc {
  /** V8's address of the isolate that collected (one workerd holds the Worker's and Miniflare's own). */
  isolate: string;
  /** A mark-compact (`mc`, `mmc`), not a scavenge or a minor mark-sweep. */
  major: boolean;
  pauseMs: number;
  /** The global heap (old generation, embedder and external memory) before and after, bytes. */
  heldBeforeBytes: number;
  heldAfterBytes: number;
  /** The global heap's allocation limit the collection ran against, bytes. */
  limitBytes: number;
}

/** A major collection as a run's report shows it: when (ms into the run), its pause, the global heap it left. */
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
    major: fields.gc === "mc" || fields.gc === "mmc",
    pauseMs: number("pause"),
    heldBeforeBytes: number("start_global_consumed_size"),
    heldAfterBytes: number("end_global_consumed_size"),
    limitBytes: number("global_allocation_limit"),
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
  readonly #collections: (WorkerdGc & { atMs: number })[] = [];

  /** A line workerd printed: recorded if it is a collection's; true if it was a trace line at all. */
  read(line: string, atMs = performance.now()): boolean {
    const gc = parseGcLine(line);
    if (gc) this.#collections.push({ ...gc, atMs });
    return gc !== undefined || line.includes("Memory pool:");
  }

  /**
   * Between `fromMs` and `toMs` (a line is printed once its pause ends): the major collections, ms from `fromMs`,
   * and the bytes the isolates left for a major collection (heldGrowthBytes).
   */
  between(fromMs: number, toMs: number): { majors: MajorGc[]; heldGrowthBytes: number } {
    const inside = this.#collections.filter((c) => c.atMs >= fromMs && c.atMs <= toMs);
    const before = new Map<string, WorkerdGc>();
    for (const c of this.#collections) if (c.atMs < fromMs) before.set(c.isolate, c);
    return {
      majors: inside
        .filter((c) => c.major)
        .map((c) => ({
          atMs: Math.round(c.atMs - fromMs),
          pauseMs: c.pauseMs,
          heldBeforeBytes: c.heldBeforeBytes,
          heldAfterBytes: c.heldAfterBytes,
        })),
      heldGrowthBytes: heldGrowthBytes(inside, before),
    };
  }
}
