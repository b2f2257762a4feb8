import type { GcPauses } from "../validate/gc-pauses.ts";
import { type RunInfo, runLine } from "../validate/run-info.ts";
import type { BundleSize } from "./bundle-figures.ts";
import type { CorePlan } from "./core-pinning.ts";
import type { RunFigures } from "./many-models-traffic.ts";
import type { MemorySample } from "./stack-memory.ts";
import type { MajorGc } from "./workerd-gc.ts";

/** What `/status/regions` says of the isolate's calls to each region (edge/forward/region-book.ts). */
export interface IsolateRegions {
  regions?: { counters: Record<string, number> }[];
}

/** The generator's GC pauses during one run: counted, and the long ones with when they began (s into the run). */
export interface RunGc extends GcPauses {
  long: { atS: number; ms: number }[];
}

/**
 * A run's workerd collections (workerd-gc.ts): its major collections (`atMs` since the run started), and the bytes
 * each request left its isolates' global heaps for one, on average.
 */
export interface RunWorkerdGc {
  majors: MajorGc[];
  heldBytesPerRequest: number;
}

/** One run's figures with the generator's GC pauses and its workerd's collections. */
export type RoundFigures = RunFigures & { generatorGc?: RunGc; workerdGc?: RunWorkerdGc };

/** What bench:many-models measured (many-models.ts), as it writes bench/many-models.json. */
export interface ManyModelsResults extends RunInfo {
  options: {
    models: number;
    rate: number;
    duration: number;
    rounds: number;
    "lead-in"?: number;
    hot: number;
    "zipf-s": number;
    "pool-memory-mb": number;
    "edge-replacements"?: number;
    cold: number;
  };
  /** Where the processes ran: workerd on one core, the pools and the generator on another (core-pinning.ts). */
  pinning?: CorePlan;
  bundles: { samples: BundleSize; many: BundleSize };
  startup: { samplesMs: number[]; manyMs: number[]; limitMs: number };
  ready: { samples: { pool: number; edge: number }; many: { pool: number; edge: number } };
  memoryAtReady: { many: MemorySample; samplesPoolRssBytes: number };
  cold: Record<"regional" | "edgeAuto" | "edgeOnly", { ms: number; status: number; servedBy: string }[]>;
  rounds: { samples: RoundFigures; many: RoundFigures }[];
  hotP99Ratio: { perRound: number[]; median: number };
  /** Every round's hot requests together, per stack, and the ratio of their p99s: the target's figure. */
  hotPooled?: {
    many: { requests: number; p50Ms: number; p99Ms: number };
    samples: { requests: number; p50Ms: number; p99Ms: number };
    p99Ratio: number;
  };
  memory: MemorySample[];
  /** Each Worker's `/status/regions` `isolate` view after the rounds. */
  edgeRegions?: Record<"samples" | "many", IsolateRegions | undefined>;
  placement: {
    flags: string;
    workers: number;
    models: number;
    loaded: number;
    failed: number;
    rssAtReadyBytes: number;
    rssAfterBytes: number;
  }[];
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const kib = (bytes: number) => Math.round(bytes / 1024).toLocaleString("en-US");
const max = (xs: number[]) => Math.max(...xs);

/** bench/many-models.md: the figures, each table saying what it compares. */
const reasons = (by: Record<string, number> | undefined) =>
  Object.entries(by ?? {})
    .map(([reason, n]) => `${reason} ${n}`)
    .join(", ") || "none";

/** Failed requests by run and status, when there were any: ` (round 1, the 2-model run: 593 × 429)`. */
function failures(rounds: ManyModelsResults["rounds"]): string {
  const parts = rounds.flatMap((x, i) =>
    (["many", "samples"] as const).flatMap((stack) => {
      const by = Object.entries(x[stack].failedBy ?? {});
      if (by.length === 0) return [];
      const run = stack === "many" ? "the 1000-model run" : "the 2-model run";
      return [`round ${i + 1}, ${run}: ${by.map(([status, n]) => `${n} × ${status}`).join(", ")}`];
    }),
  );
  return parts.length === 0 ? "" : ` (${parts.join("; ")})`;
}

/** A Worker's counts of its calls to the region: why rows were or were not answered by it. */
function regionCalls(view: IsolateRegions | undefined): string {
  const c = view?.regions?.[0]?.counters;
  if (!c) return "not read";
  return (
    `${c.admitted} sent, ${c.answered} answered, ${c.modelUnavailable} answered 503 \`model_not_ready\`, ` +
    `${c.timedOut} cut off by the deadline, ${c.tooFar} not sent as too far`
  );
}

/** A run's generator GC pauses: `212 (3 full), longest 41 ms; 41 @12.37, 12 @20.10`. */
const gcLine = (gc: RunGc | undefined) =>
  gc
    ? `${gc.count} (${gc.major} full), longest ${Math.round(gc.maxMs)} ms` +
      (gc.long.length ? `; ${gc.long.map((p) => `${Math.round(p.ms)} @${p.atS.toFixed(2)}`).join(", ")}` : "")
    : "not measured";

/**
 * A run's workerd major collections: `2: 57 @3.21 (64→31), 124 @18.90 (125→97)` (ms of pause @ s into the run,
 * the global heap before and after in MiB), or `0`.
 */
export const majorGcLine = (gc: RunWorkerdGc | undefined) =>
  gc === undefined
    ? "not measured"
    : gc.majors.length === 0
      ? "0"
      : `${gc.majors.length}: ${gc.majors
          .map(
            (c) =>
              `${Math.round(c.pauseMs)} @${(c.atMs / 1000).toFixed(2)} (${Math.round(c.heldBeforeBytes / 2 ** 20)}→${Math.round(c.heldAfterBytes / 2 ** 20)})`,
          )
          .join(", ")}`;

/**
 * The runs' major collections together: how many in how many requests, their pauses, what each took back on
 * average, and the bytes a request left for one (the median of the runs').
 */
export function majorGcSummary(runs: { requests: number; workerdGc?: RunWorkerdGc }[], label: string): string {
  const measured = runs.filter((r) => r.workerdGc !== undefined);
  if (measured.length === 0) return `${label}: not measured.`;
  const requests = measured.reduce((sum, r) => sum + r.requests, 0).toLocaleString("en-US");
  const majors = measured.flatMap((r) => r.workerdGc!.majors);
  const perRequest = measured.map((r) => r.workerdGc!.heldBytesPerRequest).sort((a, b) => a - b);
  const left = `each request left ${perRequest[Math.floor((perRequest.length - 1) / 2)]} B for one (median of the runs)`;
  if (majors.length === 0) return `${label}: no major collection in ${requests} requests; ${left}.`;
  const pauses = majors.map((c) => c.pauseMs).sort((a, b) => a - b);
  const takenBack = majors.reduce((sum, c) => sum + c.heldBeforeBytes - c.heldAfterBytes, 0) / majors.length;
  return (
    `${label}: ${majors.length} major collections in ${requests} requests, pauses ${Math.round(pauses[0]!)}–` +
    `${Math.round(pauses.at(-1)!)} ms, each taking back ${mb(takenBack)} MiB on average; ${left}.`
  );
}

/** The hot requests that set a p99: `81 edge @3.24`, in the order they were answered. */
const tailLine = (tail: RunFigures["hot"]["tail"] | undefined) =>
  (tail ?? []).map((t) => `${Math.round(t.ms)} ${t.servedBy.replace("regional:", "")} @${t.atS.toFixed(2)}`).join(", ");

export function manyModelsMarkdown(r: ManyModelsResults): string {
  const { models, rate, duration, rounds, hot } = r.options;
  const many = r.memory;
  const first = many[0];
  const last = many.at(-1);
  const lines = [
    `# ${models} models on demand, both tiers`,
    "",
    runLine(r),
    "",
    `${models} models (copies of the samples under distinct names, each with its edge variant: ${2 * models} models in the`,
    "pool's repository) through the local stack (one regional pool, `--workers 1` as `npm start` runs them, and the",
    "Worker in workerd, on a socket of its own: requests do not pass Miniflare's entry Worker, which production has not),",
    "against the same stack serving the 2 samples, in interleaved rounds of open-loop traffic at",
    `${rate} req/s for ${duration} s each (${rounds} rounds${r.options["lead-in"] ? `, each run after ${r.options["lead-in"]} s of the same traffic not measured` : ""}): each request asks for a model by Zipf popularity (s = ${r.options["zipf-s"]})`,
    "and sends a held-out row of its sample; the response cache is off (`CACHE_ENTRIES=0`), so every request takes",
    `the model path. The hot models are the ${hot} most popular. \`--load-policy auto\` (on-demand here),`,
    `\`--model-memory-mb ${r.options["pool-memory-mb"]}\` (room at the pool for the models the edge forwards), and the`,
    (r.options["edge-replacements"] === undefined
      ? "defaults `EDGE_SESSION_MEMORY_MB=32`, `SLO_BUDGET_MS=10`. "
      : `\`EDGE_SESSION_REPLACEMENTS_PER_SECOND=${r.options["edge-replacements"]}\`, and the defaults \`EDGE_SESSION_MEMORY_MB=32\`, \`SLO_BUDGET_MS=10\`. `) +
      (r.pinning === undefined
        ? "Unpinned."
        : r.pinning.pinned
          ? `Both Workers' workerd on core ${r.pinning.server}, the pools and the load generator on core ${r.pinning.generator} ` +
            "(a region's pool runs on other machines than the edge in production; here its on-demand loads would take turns with the Worker's thread)."
          : `Unpinned: ${r.pinning.why}.`),
    "",
    "## Hot models against the 2-model run",
    "",
    "| round | hot p50 (ms) | hot p99 (ms) | 2 models p50 | 2 models p99 | p99 ratio | edge share | 2 models edge share | failed |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...r.rounds.map(
      (x, i) =>
        `| ${i + 1} | ${x.many.hot.p50Ms} | ${x.many.hot.p99Ms} | ${x.samples.hot.p50Ms} | ${x.samples.hot.p99Ms} | ` +
        `${r.hotP99Ratio.perRound[i]} | ${(x.many.edgeShare * 100).toFixed(1)}% | ${(x.samples.edgeShare * 100).toFixed(1)}% | ` +
        `${x.many.failed + x.samples.failed} |`,
    ),
    "",
    ...(r.hotPooled
      ? [
          `The hot requests of all ${rounds} rounds together: ${r.hotPooled.many.requests} of the ${models}-model runs, p50 ` +
            `${r.hotPooled.many.p50Ms} ms, p99 ${r.hotPooled.many.p99Ms} ms; ${r.hotPooled.samples.requests} of the 2-model runs, ` +
            `p50 ${r.hotPooled.samples.p50Ms} ms, p99 ${r.hotPooled.samples.p99Ms} ms. **p99 ratio ${r.hotPooled.p99Ratio}** ` +
            "(target ≤ 1.10). A round's own p99 rests on a few dozen requests, which one major collection of workerd's (below) " +
            "can set alone; the rounds' ratios and their median are shown for that reason, not as the figure.",
          "",
        ]
      : []),
    `Median of the rounds' p99 ratios (hot models of ${models} / the 2-model run): **${r.hotP99Ratio.median}**. ` +
      `Requests: ${r.rounds.reduce((n, x) => n + x.many.requests + x.samples.requests, 0)}, failed: ` +
      `**${r.rounds.reduce((n, x) => n + x.many.failed + x.samples.failed, 0)}**${failures(r.rounds)}. All requests of the ${models}-model runs ` +
      `(cold models included): p50 ${r.rounds.map((x) => x.many.all.p50Ms).join(" / ")} ms, p99 ` +
      `${r.rounds.map((x) => x.many.all.p99Ms).join(" / ")} ms; models asked for per run: ${r.rounds.map((x) => x.many.models).join(" / ")}; ` +
      `forwarded ${r.rounds.map((x) => x.many.forwarded).join(" / ")}, degraded ${r.rounds.map((x) => x.many.degraded).join(" / ")} ` +
      `(by reason: ${r.rounds.map((x) => reasons(x.many.degradedBy)).join(" / ")}); the 2-model runs: forwarded ` +
      `${r.rounds.map((x) => x.samples.forwarded).join(" / ")}, degraded ${r.rounds.map((x) => x.samples.degraded).join(" / ")} ` +
      `(${r.rounds.map((x) => reasons(x.samples.degradedBy)).join(" / ")}).`,
    "",
    `Each Worker's calls to the region over the whole run (\`/status/regions\`; warm-up included): ${regionCalls(r.edgeRegions?.many)} ` +
      `(the 2-model Worker: ${regionCalls(r.edgeRegions?.samples)}).`,
    "",
    `The hot requests at or above each p99, in the order they were answered (ms, who answered, s into the run); several`,
    "within a few ms of each other waited for one stall, of the isolate's thread or of the machine:",
    "",
    "| round | the 1000-model run | the 2-model run |",
    "|---:|---|---|",
    ...r.rounds.map((x, i) => `| ${i + 1} | ${tailLine(x.many.hot.tail)} | ${tailLine(x.samples.hot.tail)} |`),
    "",
    "workerd's major garbage collections during each run (V8's `--trace-gc-nvp`, workerd-gc.ts): each holds the one",
    "thread every isolate of that workerd runs on, so every request in flight waits for it (ms of pause @ s into the run",
    "at its end, by the line's own clock: workerd's log pipe delivers a line up to a few s late; and V8's global",
    "heap before and after, MiB: the old generation, the embedder's C++ objects (a Request's, a Headers', a stream's) and",
    "external memory, on which V8 sets the limit that starts one). Beside them, the bytes each request of the run left",
    "there for a major collection to take back (what the isolates' global heaps grew by between collections):",
    "",
    "| round | the 1000-model run | B a request | the 2-model run | B a request |",
    "|---:|---|---:|---|---:|",
    ...r.rounds.map(
      (x, i) =>
        `| ${i + 1} | ${majorGcLine(x.many.workerdGc)} | ${x.many.workerdGc?.heldBytesPerRequest ?? "—"} | ` +
        `${majorGcLine(x.samples.workerdGc)} | ${x.samples.workerdGc?.heldBytesPerRequest ?? "—"} |`,
    ),
    "",
    `${majorGcSummary(
      r.rounds.map((x) => x.many),
      "The 1000-model runs",
    )} ${majorGcSummary(
      r.rounds.map((x) => x.samples),
      "The 2-model runs",
    )}`,
    "",
    "The generator's own GC pauses in each run (a pause holds its sends and its reading of answers): count, full",
    "collections, longest, and those of 10 ms or more (ms @ s into the run):",
    "",
    "| round | the 1000-model run | the 2-model run |",
    "|---:|---|---|",
    ...r.rounds.map((x, i) => `| ${i + 1} | ${gcLine(x.many.generatorGc)} | ${gcLine(x.samples.generatorGc)} |`),
    "",
    "## A cold model's first request",
    "",
    "Models no traffic had asked for, one request each, before the rounds:",
    "",
    "| tier | request | ms | status | answered by |",
    "|---|---|---:|---:|---|",
    ...r.cold.regional.map(
      (c) =>
        `| pool | \`/v1/classify\` straight to the pool, signed, no deadline: load on demand, then the run | ${c.ms} | ${c.status} | ${c.servedBy} |`,
    ),
    ...r.cold.edgeAuto.map(
      (c) =>
        `| edge | \`/v1/classify\`, auto: forwarded (the pool's copy cold too); when no region answers within the deadline, the session is waited for | ${c.ms} | ${c.status} | ${c.servedBy} |`,
    ),
    ...r.cold.edgeOnly.map(
      (c) => `| edge | \`cascade: "edge"\`: waits for the session | ${c.ms} | ${c.status} | ${c.servedBy} |`,
    ),
    "",
    "## Memory over time against the budgets",
    "",
    `Sampled every second during the ${models}-model rounds (${many.length} samples). The budgets count each tier's own`,
    "estimate of its models (docs/regional.md, docs/edge.md); the process figures are what the system holds. Read",
    "from what is cheap to read while traffic is measured: the pool's `GET /v2` (`modelLoading`), the edge's",
    "`/status/sessions`, the isolate's heap through the inspector, /proc (`scripts/benchmarks/stack-memory.ts`).",
    "",
    "| | at ready | first sample | last sample | highest | budget |",
    "|---|---:|---:|---:|---:|---:|",
    `| pool: models counted (MB) | ${mb(r.memoryAtReady.many.pool.residentBytes)} | ${mb(first?.pool.residentBytes ?? 0)} | ${mb(last?.pool.residentBytes ?? 0)} | ${mb(max(many.map((s) => s.pool.residentBytes)))} | ${mb(r.memoryAtReady.many.pool.budgetBytes)} |`,
    `| pool: models loaded | ${r.memoryAtReady.many.pool.loaded} | ${first?.pool.loaded ?? 0} | ${last?.pool.loaded ?? 0} | ${max(many.map((s) => s.pool.loaded))} | |`,
    `| pool: process RSS (MB) | ${mb(r.memoryAtReady.many.pool.rssBytes)} | ${mb(first?.pool.rssBytes ?? 0)} | ${mb(last?.pool.rssBytes ?? 0)} | ${mb(max(many.map((s) => s.pool.rssBytes)))} | |`,
    `| edge: sessions counted (MB) | ${mb(r.memoryAtReady.many.edge.residentBytes)} | ${mb(first?.edge.residentBytes ?? 0)} | ${mb(last?.edge.residentBytes ?? 0)} | ${mb(max(many.map((s) => s.edge.residentBytes)))} | ${mb(r.memoryAtReady.many.edge.budgetBytes)} |`,
    `| edge: sessions resident | ${r.memoryAtReady.many.edge.resident} | ${first?.edge.resident ?? 0} | ${last?.edge.resident ?? 0} | ${max(many.map((s) => s.edge.resident))} | |`,
    `| edge: wasm heap (MB) | ${mb(r.memoryAtReady.many.edge.wasmHeapBytes)} | ${mb(first?.edge.wasmHeapBytes ?? 0)} | ${mb(last?.edge.wasmHeapBytes ?? 0)} | ${mb(max(many.map((s) => s.edge.wasmHeapBytes)))} | |`,
    `| edge: JS heap in use (MB) | ${mb(r.memoryAtReady.many.edge.jsHeapBytes)} | ${mb(first?.edge.jsHeapBytes ?? 0)} | ${mb(last?.edge.jsHeapBytes ?? 0)} | ${mb(max(many.map((s) => s.edge.jsHeapBytes)))} | |`,
    `| workerd RSS (MB; every Miniflare worker) | ${mb(r.memoryAtReady.many.edge.rssBytes)} | ${mb(first?.edge.rssBytes ?? 0)} | ${mb(last?.edge.rssBytes ?? 0)} | ${mb(max(many.map((s) => s.edge.rssBytes)))} | |`,
    "",
    `Evictions during the rounds: pool ${(last?.pool.evictions ?? 0) - (first?.pool.evictions ?? 0)}, edge ` +
      `${(last?.edge.evictions ?? 0) - (first?.edge.evictions ?? 0)}; edge sessions created ` +
      `${(last?.edge.created ?? 0) - (first?.edge.created ?? 0)}, of them on a request's path (no region answered a model ` +
      `without one) ${(last?.edge.onRequestPath ?? 0) - (first?.edge.onRequestPath ?? 0)}, and past the budget not ` +
      `created (\`EDGE_SESSION_REPLACEMENTS_PER_SECOND\`) ${(last?.edge.deferred ?? 0) - (first?.edge.deferred ?? 0)}. ` +
      "Samples above budget: pool " +
      // Budget 0: --load-policy all (auto, when every model fits), no budget to be above.
      `**${many.filter((s) => s.pool.budgetBytes > 0 && s.pool.residentBytes > s.pool.budgetBytes).length}**, edge ` +
      `**${many.filter((s) => s.edge.residentBytes > s.edge.budgetBytes).length}**. The 2-sample pool's RSS at ready: ` +
      `${mb(r.memoryAtReady.samplesPoolRssBytes)} MB.`,
    "",
    "Over time (every tenth sample):",
    "",
    "| s | pool counted MB | pool loaded | pool RSS MB | edge counted MB | edge resident | wasm heap MB | JS heap MB |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...many
      .filter((_, i) => i % 10 === 0)
      .map(
        (s) =>
          `| ${Math.round(s.atS)} | ${mb(s.pool.residentBytes)} | ${s.pool.loaded} | ${mb(s.pool.rssBytes)} | ` +
          `${mb(s.edge.residentBytes)} | ${s.edge.resident} | ${mb(s.edge.wasmHeapBytes)} | ${mb(s.edge.jsHeapBytes)} |`,
      ),
    "",
    "## Start-up and the Worker bundle",
    "",
    `| | 2 samples | ${models} models |`,
    "|---|---:|---:|",
    `| pool ready (s) | ${r.ready.samples.pool} | ${r.ready.many.pool} |`,
    `| Worker started in Miniflare (s) | ${r.ready.samples.edge} | ${r.ready.many.edge} |`,
    `| \`wrangler check startup\`, active CPU (ms; limit ${r.startup.limitMs}) | ${r.startup.samplesMs.join(", ")} | ${r.startup.manyMs.join(", ")} |`,
    `| bundle: modules | ${r.bundles.samples.files} | ${r.bundles.many.files} |`,
    `| bundle: edge variants (\`.onnx\` modules) | ${r.bundles.samples.edgeVariants} | ${r.bundles.many.edgeVariants} |`,
    `| bundle: raw KiB (limit 65,536) | ${kib(r.bundles.samples.rawBytes)} | ${kib(r.bundles.many.rawBytes)} |`,
    `| bundle: gzip KiB | ${kib(r.bundles.samples.gzipBytes)} | ${kib(r.bundles.many.gzipBytes)} |`,
    `| worker.js KiB (code, configs, demo rows) | ${kib(r.bundles.samples.workerJsBytes)} | ${kib(r.bundles.many.workerJsBytes)} |`,
    "",
  ];
  if (r.placement.length > 0) {
    const [hashed, everyWorker] = r.placement;
    lines.push(
      "## A pod of two workers: models placed by hashing",
      "",
      `${r.placement[0]!.models} models (and their edge variants, not asked for), each asked 4 times on new connections (the`,
      "primary hands connections to the workers in turn), `--workers 2`:",
      "",
      "| flags | models loaded (summed over workers) | workers' RSS at ready (MB) | after (MB) | failed |",
      "|---|---:|---:|---:|---:|",
      ...r.placement.map(
        (p) => `| \`${p.flags}\` | ${p.loaded} | ${mb(p.rssAtReadyBytes)} | ${mb(p.rssAfterBytes)} | ${p.failed} |`,
      ),
      "",
      hashed && everyWorker
        ? `Placed by hashing, the pod holds each model once: ${mb(everyWorker.rssAfterBytes - hashed.rssAfterBytes)} MB less ` +
            `than every worker loading what its own requests ask for (${(100 * (1 - hashed.rssAfterBytes / everyWorker.rssAfterBytes)).toFixed(0)}% of the pod's RSS).`
        : "",
      "",
    );
  }
  return `${lines.join("\n")}\n`;
}
