/**
 * bench/edge.md: bench:edge's report (scripts/benchmarks/edge.ts) as Markdown.
 */
import type { corePlan } from "../core-pinning.ts";
import type { ForwardOverhead } from "../forward-overhead.ts";
import { median } from "../paired-ratio.ts";
import type { Measurement, Tally } from "./scenarios.ts";

type Report = {
  date: string;
  loadAtStart: number[];
  pinning: ReturnType<typeof corePlan>;
  configuration: string;
  otherConfigurations: Record<string, Report["scenarios"]>;
  machine: Record<string, string | number>;
  settings: Record<string, number>;
  scenarios: Record<
    string,
    Measurement & {
      what: string;
      vsHello?: {
        throughput: number;
        throughputRange: [number, number];
        cpu: number | null;
        cpuRange: [number, number] | null;
        p50: number;
        p99: number;
      };
      tally?: Tally;
      rounds: Measurement[];
    }
  >;
  forward: ForwardOverhead;
  cascade: Record<string, number>;
};

function scenarioRows(scenarios: Report["scenarios"]): string[] {
  return Object.values(scenarios).map((s) => {
    const served = Object.entries(s.tally?.servedBy ?? {})
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    const spread = (f: (m: Measurement) => number, digits: number) => {
      const xs = s.rounds.map(f);
      return `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
    };
    const v = s.vsHello;
    const cpu =
      s.cpuUsPerRequest === null || !v?.cpuRange
        ? "–"
        : `${s.cpuUsPerRequest} | ${v.cpu} (${v.cpuRange[0]}–${v.cpuRange[1]})`;
    const throughput = v ? `${v.throughput} (${v.throughputRange[0]}–${v.throughputRange[1]})` : "";
    return (
      `| ${s.what} | ${s.reqPerSec} (${spread((m) => m.reqPerSec, 0)}) | ${throughput} | ${cpu} | ${s.p50Ms} | ` +
      `${s.p95Ms} | ${s.p99Ms} (${spread((m) => m.p99Ms, 1)}) | ${s.vsHello?.p99} | ${s.tally?.errors ?? 0} | ${served} |`
    );
  });
}

/** The steal share over every closed loop of the run: median and max, in percent. */
function stealSummary(report: Report): string {
  const all = [report.scenarios, ...Object.values(report.otherConfigurations)].flatMap((scenarios) =>
    Object.values(scenarios).flatMap((s) => s.rounds.flatMap((m) => (m.steal == null ? [] : [m.steal]))),
  );
  if (all.length === 0) return "unknown (no /proc/stat)";
  return `median ${(median(all) * 100).toFixed(1)}%, max ${(Math.max(...all) * 100).toFixed(1)}%`;
}

/** bench/edge.md: the report of a run with `model`, whose held-out set has `heldoutRows` rows. */
export function markdown(report: Report, model: string, heldoutRows: number): string {
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const rows = scenarioRows(report.scenarios);
  const otherTables = Object.entries(report.otherConfigurations).map(
    ([name, scenarios]) => `### ${name}

The same Workers' code, the same rounds, in this configuration (the edge Worker with \`LOCAL_CACHE_ONLY=${name.includes("cache API on") ? "false" : "true"}\`).

| scenario | req/s (rounds' range) | req/s vs hello (rounds' ratios: median, range) | workerd CPU µs/request | CPU vs hello (rounds' ratios: median, range) | p50 ms | p95 ms | p99 ms (range) | p99 vs hello | errors | answered by |
|---|---|---|---|---|---|---|---|---|---|---|
${scenarioRows(scenarios).join("\n")}
`,
  );
  const c = report.cascade;
  const fw = report.forward;
  const m = report.machine;
  const st = report.settings;
  return `# Edge Worker benchmark

\`npm run bench:edge\` (runs under \`flock /tmp/edgecascade-bench.lock\`), ${report.date}, git ${m.git}.
Machine: ${m.cpu}, ${m.cores} cores, shared by the load generator, workerd and the regional pool; load average at the
start ${report.loadAtStart.join(" / ")}; the hypervisor's steal during the closed loops ${stealSummary(report)} (on a
VM, other guests' share of the host: CPU per request and req/s move with it).
Node ${m.node}, miniflare ${m.miniflare} (workerd), wrangler ${m.wrangler} (bundle), onnxruntime-web ${m.onnxruntimeWeb}.

The edge Worker is the wrangler bundle run by Miniflare on its own socket (not wrangler's dev proxy). Each
scenario: ${st.warmupS} s warm-up, ${st.durationS} s closed loop with ${st.connections} requests in flight (req/s, workerd CPU), then
${st.latencyDurationS} s open loop at ${st.openLoopRatePerS} req/s (latency, each request timed from when it was due).
${st.rounds} rounds, scenarios interleaved (a round's closed loops back to back, every other round in reverse order, then its open loops); medians, with the rounds' range where it shows how noisy a shared
2-core machine is; against hello, the median of each round's own ratio and the range of those ratios.
Cores: ${report.pinning.pinned ? `workerd (every Worker) pinned to core ${report.pinning.server}, the load generator and the pool to core ${report.pinning.generator} (\`taskset\`, \`--pin\`)` : `not pinned (${report.pinning.why})`}. Single-row requests of model ${model} cycling through its ${heldoutRows} held-out rows.
The edge's SLO budget is raised to ${st.sloBudgetMs} ms here so forwards are measured rather than degraded.

| scenario | req/s (rounds' range) | req/s vs hello (rounds' ratios: median, range) | workerd CPU µs/request | CPU vs hello (rounds' ratios: median, range) | p50 ms | p95 ms | p99 ms (range) | p99 vs hello | errors | answered by |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

This table: **${report.configuration}** (\`--cache-api\`: off, the edge Worker runs with \`LOCAL_CACHE_ONLY=true\`
and Miniflare's \`cacheAPI: false\`, as Cloudflare pays for no simulation; \`--socket\`: through Miniflare's own port,
where its JavaScript entry Worker copies every request and response, or straight into each Worker through
\`unsafeDirectSockets\`, closer to what Cloudflare's runtime runs). Every row was answered once before the rounds, so
the isolate is warm (edge variant loaded) and the cache full.

Targets: cache hit at least 0.87× and the edge answer at least 0.9× hello's throughput. The reference row is a plain
Worker that only parses the JSON body and answers a constant of the same shape: what any Worker answering a classify
request reaches against hello-world, before any work of its own. workerd's CPU per request is the workerd process's
threads' time on a core (/proc schedstat) during the closed loop divided by the requests answered; through the entry
port, most of hello's is Miniflare's entry Worker, which a deployment does not run.

${otherTables.join("\n")}
## Forward overhead

One connection (wrk -c1), ${st.forwardRounds} rounds of 3 s per load, p50 / p95 in ms, medians of the rounds' own
differences. The edge's overhead is cascade "regional" through the edge minus cascade "edge" through the edge
minus the pool answering the same signed call directly (target: at most 0.3 ms at p50 and 0.5 ms at p95).
Its floor is the same difference for the least a Worker can do to forward (scripts/benchmarks/forward-worker.js:
read the body, fetch the pool, return the answer) against the hello-world Worker: workerd's own subrequest.

| | p50 ms | p95 ms |
|---|---:|---:|
| edge forward overhead (regional − edge − pool) | ${fw.overheadP50Ms.toFixed(3)} | ${fw.overheadP95Ms.toFixed(3)} |
| floor: a trivial forwarding Worker (trivial − hello − pool) | ${fw.floorP50Ms.toFixed(3)} | ${fw.floorP95Ms.toFixed(3)} |
| the edge's own part (overhead − floor) | ${(fw.overheadP50Ms - fw.floorP50Ms).toFixed(3)} | ${(fw.overheadP95Ms - fw.floorP95Ms).toFixed(3)} |

| round | regional | edge | pool | trivial forward | hello |
|---|---|---|---|---|---|
${fw.rounds
  .map(
    (r, i) =>
      `| ${i + 1} | ${[r.regional, r.edge, r.pool, r.trivial, r.hello].map((x) => `${x.p50Ms} / ${x.p95Ms}`).join(" | ")} |`,
  )
  .join("\n")}

## Cascade on the held-out set (${c.rows} rows, one request each, through the Worker)

| | |
|---|---|
| answered at the edge | ${pct(c.edgeShare!)} |
| forwarded to the region | ${pct(c.regionalShare!)} |
| other (cache, degraded) | ${pct(c.otherShare!)} |
| cascade accuracy | ${pct(c.cascadeAccuracy!)} |
| full model alone (cascade regional) | ${pct(c.fullModelAccuracy!)} |
| edge model alone (cascade edge) | ${pct(c.edgeModelAccuracy!)} |
| full model, build-time reference | ${pct(c.fullModelAccuracyReference!)} |

Inside a Worker the clock only moves on I/O, so the Worker cannot time its own CPU work; these numbers are
taken from outside, end to end on loopback, and include the load generator sharing the same cores.
`;
}
