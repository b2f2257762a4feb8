/**
 * bench/latency.md: every run of validate:latency, its floors and the trade-off, as Markdown.
 */
import { type RunInfo, runLine } from "../run-info.ts";
import type { cascadeOutcome } from "../tradeoff.ts";
import type { FloorRun, RunResult } from "./run.ts";

const ms = (v: number | undefined) => (v === undefined ? "–" : v.toFixed(2));
export const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

export function markdown(report: {
  info: RunInfo;
  settings: Record<string, unknown> & { proxies: string };
  locations: RunResult[];
  tradeoff: (RunResult & { fixture: ReturnType<typeof cascadeOutcome> })[];
  calibrated: number;
  budgetMs: number;
  floors: FloorRun[];
}): string {
  const { locations, tradeoff, budgetMs } = report;
  const lines = [
    "# Global p95 with network distance",
    "",
    runLine(report.info),
    "",
    "The local stack with each region behind a user-space delay proxy (`scripts/validate/delay-proxy.ts`): the",
    "one-way delay from the client's location to each region is `1 ms + great-circle km / 150` (light in fibre",
    "with real routes' detours), applied to every byte each way. A fresh edge Worker per location (a new isolate,",
    "as in another colo) that knows every region, as the one anycast Worker does; its edge model loaded (not with",
    "`--cold`) and the cron's readiness report in KV, and no routing warm-up: no call has reached a region, so the",
    "isolate starts from the distance prior (edge/regions/prior.ts, the same distance model as the proxies) and learns the rest from its",
    "own calls and warm probes. Then open-loop load of Zipf-popular held-out rows from that location.",
    "The clients reach their Worker over loopback; each Worker is told their round trip as Cloudflare tells it,",
    "`request.cf.clientTcpRtt` (`clientRttMs` below), and its regions' deadline is the budget less that round trip",
    "(docs/edge.md, *Deadline*), so that an answer cut off there still reaches the client within the budget.",
    `Latency counts from when each request was due; failures count as never answered. Settings: ${JSON.stringify(report.settings)}.`,
    "",
    "Everything (load generator, proxies, three pools, workerd) shares this machine's cores, so the tails are",
    "this machine's as much as the design's; see bench/README.md. The proxies release data on a precise timer",
    `(precise-timer.ts) and run ${report.settings.proxies === "apart" ? "in their own process, apart from the load generator" : "in the load generator's process (`--proxies in-process`)"}.`,
    "",
    "## Per client location",
    "",
    `| location | one-way ms (us / eu / ap) | requests | regional share | p95 ms | p99 ms | edge share | cache | p50 ms | p95 ≤ ${budgetMs} ms | errors | label mismatches | measured accuracy |`,
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...locations.map(
      (r) =>
        `| ${r.location} | ${r.delaysMs.us} / ${r.delaysMs.eu} / ${r.delaysMs.ap} | ${r.summary.sent} | ${pct(r.regionalShare)} | ${ms(r.summary.overall.p95Ms)} | ${ms(r.summary.overall.p99Ms)} | ${pct(r.edgeShare)} | ${pct(r.cacheShare)} | ${ms(r.summary.overall.p50Ms)} | ${r.summary.target.holds ? "**holds**" : "missed"} (${r.summary.target.measuredP95Ms ?? "inf"}) | ${r.summary.errors} | ${r.summary.mismatches} | ${pct(r.accuracy)} |`,
    ),
    "",
    "The load generator's own lateness in sending (its timers on this shared machine), part of every latency above:",
    "",
    "| location | send lag p50 ms | p99 ms | max ms |",
    "|---|---|---|---|",
    ...locations.map((r) => `| ${r.location} | ${r.sendLagMs.p50} | ${r.sendLagMs.p99} | ${r.sendLagMs.max} |`),
    "",
    ...(report.floors.length > 0
      ? [
          "## Floors in the same run",
          "",
          "The same rate and duration against servers with nothing behind them, before and after the locations: what",
          "this machine, loopback and the client cost alone. The edge's tail above this is the edge's; the rest is the",
          "machine's.",
          "",
          "| floor | when | p50 ms | p95 ms | p99 ms | max ms | send lag p99 ms |",
          "|---|---|---|---|---|---|---|",
          ...report.floors.map(
            (f) =>
              `| ${f.what} | ${f.when} | ${ms(f.stats.p50Ms)} | ${ms(f.stats.p95Ms)} | ${ms(f.stats.p99Ms)} | ${ms(f.stats.maxMs)} | ${f.sendLagMs.p99} |`,
          ),
          "",
        ]
      : []),
    ...(locations.some((r) => r.firstRequests)
      ? [
          "## First requests of a fresh isolate (`--cold`)",
          "",
          "Each location's fresh Worker took these, one after another, as soon as it was up (no warm-up, no probe",
          "report); workerd's CPU from its threads' schedstat, to the answer and until 300 ms after it (the session",
          "created in waitUntil). The run's warm figures per path are in the next table.",
          "",
          "| location | first request | served by | latency ms | CPU to answer ms | CPU incl. waitUntil ms |",
          "|---|---|---|---|---|---|",
          ...locations.flatMap((r) =>
            (r.firstRequests ?? []).map(
              (f) =>
                `| ${r.location} | ${f.kind} | ${f.servedBy} | ${f.latencyMs} | ${f.cpuToAnswerMs} | ${f.cpuTotalMs} |`,
            ),
          ),
          "",
        ]
      : []),
    "## Per path",
    "",
    "| location | path | count | p50 ms | p95 ms | p99 ms | max ms |",
    "|---|---|---|---|---|---|---|",
    ...locations.flatMap((r) =>
      Object.entries(r.summary.paths).map(
        ([path, s]) =>
          `| ${r.location} | ${path}${
            path === "regional"
              ? ` (${Object.entries(r.summary.regions)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(", ")})`
              : ""
          }${
            path === "degraded"
              ? ` (${Object.entries(r.degradedReasons)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(", ")})`
              : ""
          } | ${s.count} | ${ms(s.p50Ms)} | ${ms(s.p95Ms)} | ${ms(s.p99Ms)} | ${ms(s.maxMs)} |`,
      ),
    ),
    "",
    "## What sets the p99",
    "",
    `Requests slower than the ${budgetMs} ms budget, by the path that answered them (at 1% or more of a location's`,
    "requests they set its p99); forwards split into the region call as the edge timed it (Server-Timing, whole",
    "ms: workerd's clock moves on I/O) and the rest (the client's hop to the edge and back, the edge's own work,",
    "the send lag); the load generator's GC pauses during the run (the delay proxies' too with `--proxies in-process`);",
    "and how late each proxy released data against its due time (per release, both directions), the part of a",
    "forward's region call that is the simulation's, not the distance's.",
    "",
    `| location | p99 ms | over ${budgetMs} ms: cache / edge / regional / degraded | region call p50 / p99 ms | rest of a forward p50 / p99 ms | generator GC: pauses, longest, total ms; over ${budgetMs} ms during one | proxy lateness p50 / p99 / max ms (releases) |`,
    "|---|---|---|---|---|---|---|",
    ...locations.map((r) => {
      const o = r.tail.overByPath;
      const f = r.tail.forwards;
      const split = f
        ? `${ms(f.regionCall.p50Ms)} / ${ms(f.regionCall.p99Ms)} | ${ms(f.rest.p50Ms)} / ${ms(f.rest.p99Ms)}`
        : "– | –";
      const g = r.generatorGc;
      const late =
        Object.entries(r.proxyLateMs)
          .map(([name, l]) => `${name}: ${ms(l.p50Ms)} / ${ms(l.p99Ms)} / ${ms(l.maxMs)} (${l.count})`)
          .join("; ") || "–";
      return `| ${r.location} | ${ms(r.summary.overall.p99Ms)} | ${r.tail.over} of ${r.summary.sent}: ${o.cache ?? 0} / ${o.edge ?? 0} / ${o.regional ?? 0} / ${o.degraded ?? 0} | ${split} | ${g.count} (${g.major} full), ${g.maxMs}, ${g.totalMs}; ${g.overBudgetInPause} | ${late} |`;
    }),
    "",
    ...(locations.some((r) => r.pieces)
      ? [
          "## The forward path piece by piece (`--decompose`)",
          "",
          "Just before each location's run, at the same rate: its nearest region's pool answering a signed classify",
          "call directly, then through its delay proxy, and a no-op server directly and through a delay proxy of the",
          "same delay and jitter (the proxy alone). `above 2 × delay`: latency minus the delay the proxy is meant to",
          "add both ways, the part of a forward that is neither distance nor the edge; `proxy lateness`: how late the",
          "proxy released data against its due time, per release.",
          "",
          "| location | region | piece | one-way ms | p50 ms | p95 ms | p99 ms | above 2 × delay p50 / p99 ms | send lag p99 ms | proxy lateness p50 / p99 ms |",
          "|---|---|---|---|---|---|---|---|---|---|",
          ...locations.flatMap((r) =>
            (r.pieces ?? []).map(
              (q) =>
                `| ${r.location} | ${q.region} | ${q.what} | ${q.delayMs} | ${ms(q.stats.p50Ms)} | ${ms(q.stats.p95Ms)} | ${ms(q.stats.p99Ms)} | ${ms(q.overDelay.p50Ms)} / ${ms(q.overDelay.p99Ms)} | ${q.sendLagP99Ms} | ${q.proxyLateMs ? `${ms(q.proxyLateMs.p50Ms)} / ${ms(q.proxyLateMs.p99Ms)}` : "–"} |`,
            ),
          ),
          "",
        ]
      : []),
    "## Regions as the edge saw them at the end of each run",
    "",
    "Budget-aware routing (docs/edge.md): a region expected to answer later than what is left of the budget is",
    "not tried (`too far`), and being far is never charged to its breaker. The expected answer time is the",
    "isolate's own evidence (its calls and warm probes; `cut-off`: calls cut off by the deadline); calls sent",
    "include the warm probes' classify calls.",
    "",
    "| location | region | breaker | expected answer ms | calls sent | skipped as too far | timed out | failed | warm probes |",
    "|---|---|---|---|---|---|---|---|---|",
    ...locations.flatMap((r) =>
      r.regions.map(
        (g) =>
          `| ${r.location} | ${g.name} | ${g.breaker} | ${g.expectedAnswerMs ?? "unknown"} | ${g.admitted} | ${g.tooFar} | ${g.timedOut} | ${g.failed} | ${g.warmProbes} |`,
      ),
    ),
  ];
  if (tradeoff.length > 0) {
    lines.push(
      "",
      `## Trade-off: cascade threshold (from ${tradeoff[0]!.location})`,
      "",
      `Each threshold set with \`CASCADE_THRESHOLDS\`; the calibrated one is ${report.calibrated}. Accuracy and edge`,
      "share on the held-out rows are exact (both models' outputs on every row); the measured columns come from",
      "the run (Zipf traffic, so popular rows weigh more).",
      "",
      "![p95 and accuracy by threshold](latency-tradeoff.svg)",
      "",
      "| threshold | held-out accuracy | held-out edge share | measured edge share | measured accuracy | p50 ms | p95 ms | p99 ms | p95 target |",
      "|---|---|---|---|---|---|---|---|---|",
      ...tradeoff.map(
        (r) =>
          `| ${r.threshold}${r.threshold === report.calibrated ? " (calibrated)" : ""} | ${pct(r.fixture.accuracy)} | ${pct(r.fixture.edgeShare)} | ${pct(r.edgeShare)} | ${pct(r.accuracy)} | ${ms(r.summary.overall.p50Ms)} | ${ms(r.summary.overall.p95Ms)} | ${ms(r.summary.overall.p99Ms)} | ${r.summary.target.holds ? "holds" : "missed"} |`,
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}
