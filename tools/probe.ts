/**
 * npm run probe -- --url URL [--model NAME] [--duration S] [--rate R] [--mix realistic|hot] [--json] [--report FILE]
 *   [--prometheus FILE]
 *
 * Synthetic latency probes against any edge URL: a realistic mix (cache repeats, rows the edge model is
 * sure of, rows it is not), open-loop at a fixed rate; prints p50/p95/p99 per path and overall, the error
 * rate, and whether the 10 ms p95 target holds; writes an HTML report with a histogram and CDF. Before the run
 * it warms its client up on a no-op server of its own, and after it measures its floor there (the same requests
 * on the same schedule).
 */
import { randomInt } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cacheHitAnswer, startNoopServer } from "./probe/floor.ts";
import { probeMix, seededRandom } from "./probe/mix.ts";
import { runOpenLoop, warmUp } from "./probe/open-loop.ts";
import { probeExposition, writeProbeExposition } from "./probe/prometheus.ts";
import { renderReport } from "./probe/report-html.ts";
import { PROBE_PATHS, type ProbeSummary, summarize } from "./probe/summary.ts";
import { probeTarget } from "./probe/target.ts";

const HELP = `Usage: npm run probe -- --url URL [options]

  --url URL          edge base URL (required), e.g. http://localhost:8787
  --model NAME       model to probe, with its held-out fixture from models/ (default digits)
  --models DIR       model repository the fixture is read from (default: this repository's models/)
  --duration S       seconds to run (default 10)
  --rate R           requests per second, open loop (default 50)
  --json             print one JSON object instead of the table
  --report FILE      HTML report path (default bench/probe-report.html)
  --prometheus FILE  also write the summary as Prometheus text (node_exporter textfile collector, Pushgateway)
  --api-key KEY      API key, if the edge requires one (or EDGECASCADE_API_KEY)
  --location LAT,LON send x-edgecascade-location (honoured by local stacks only)
  --seed N           request mix seed: which rows, in which order (default 1; the fresh rows' changes are
                     new in every run)
  --mix MIX          realistic (default): 60% repeats of the hot set, 35% rows the edge model is sure of and 5%
                     rows it is not, each changed a little to miss the cache; hot: every request repeats a row
                     of the hot set, cache hits after each row's first send (like-for-like with hey or wrk
                     sending the same body over and over; with --hot-rows 1, one body)
  --hot-rows N       rows in the hot set (default 16)
  --timeout-ms N     per-request timeout (default 5000)
  --floor-duration S seconds of the floor run: the same requests and schedule against a built-in no-op
                     server, reported as the probe's own latency (default: the duration, at most 5; 0: none)
  --warmup N         requests sent one after another to the no-op server before the run, so that V8 has
                     optimised the client's code the timed requests run (default 2000; 0: none)
  --target-ms N      p95 target (default 10)
  --help             this text`;

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");

function number(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min)
    throw new Error(`--${name} must be a number >= ${min}, got ${JSON.stringify(value)}`);
  return n;
}

function table(summary: ProbeSummary): string {
  const lines = [`path         count    p50 ms    p95 ms    p99 ms    max ms`];
  const row = (name: string, s: ProbeSummary["overall"]) =>
    `${name.padEnd(10)} ${String(s.count).padStart(7)} ${s.p50Ms.toFixed(2).padStart(9)} ${s.p95Ms.toFixed(2).padStart(9)} ${s.p99Ms.toFixed(2).padStart(9)} ${s.maxMs.toFixed(2).padStart(9)}`;
  for (const p of PROBE_PATHS) if (summary.paths[p]) lines.push(row(p, summary.paths[p]!));
  lines.push(row("overall", summary.overall));
  if (summary.floor) lines.push(`${row("floor", summary.floor)}   (the probe itself: same requests, no-op server)`);
  const regions = Object.entries(summary.regions)
    .map(([r, n]) => `${r}=${n}`)
    .join(" ");
  lines.push(
    `sent ${summary.sent}, answered ${summary.completed}, errors ${summary.errors} (${(summary.errorRate * 100).toFixed(2)}%), label mismatches ${summary.mismatches}${regions ? `, regions ${regions}` : ""}`,
  );
  lines.push(
    `p95 target ${summary.target.p95Ms} ms: ${summary.target.holds ? "HOLDS" : "MISSED"} (measured ${summary.target.measuredP95Ms ?? "inf"} ms)`,
  );
  for (const e of summary.errorSamples) lines.push(`  error: ${e}`);
  return lines.join("\n");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      model: { type: "string" },
      models: { type: "string" },
      duration: { type: "string" },
      rate: { type: "string" },
      json: { type: "boolean", default: false },
      report: { type: "string" },
      prometheus: { type: "string" },
      "api-key": { type: "string" },
      location: { type: "string" },
      seed: { type: "string" },
      mix: { type: "string" },
      "hot-rows": { type: "string" },
      "timeout-ms": { type: "string" },
      "target-ms": { type: "string" },
      "floor-duration": { type: "string" },
      warmup: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.url) throw new Error("--url is required (see --help)");
  const url = new URL(values.url).toString().replace(/\/$/, "");
  const durationS = number("duration", values.duration, 10, 0.1);
  const rate = number("rate", values.rate, 50, 0.1);
  const reportPath = resolve(values.report ?? resolve(root, "bench/probe-report.html"));
  const apiKey = values["api-key"] ?? process.env.EDGECASCADE_API_KEY;
  const headers: Record<string, string> = {};
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  if (values.location) headers["x-edgecascade-location"] = values.location;

  const target = probeTarget(resolve(values.models ?? resolve(root, "models")), values.model ?? "digits");
  const { heldout } = target;
  const seed = number("seed", values.seed, 1, 0);
  const timeoutMs = number("timeout-ms", values["timeout-ms"], 5000, 1);
  const mix = values.mix ?? "realistic";
  if (mix !== "realistic" && mix !== "hot")
    throw new Error(`--mix must be realistic or hot, got ${JSON.stringify(mix)}`);
  const mixOptions = {
    hotRows: Math.round(number("hot-rows", values["hot-rows"], 16, 1)),
    ...(mix === "hot" ? { repeatShare: 1 } : {}),
  };
  // One base per run, for this run's mixes (timed, warm-up and floor): fresh rows the edge has not seen before.
  const offsetBase = randomInt(2 ** 32);
  const newMix = () => probeMix(heldout.rows, target.edge, seededRandom(seed), { ...mixOptions, offsetBase });
  const next = newMix();

  const client = { rows: heldout.rows, model: target.model, edgeModel: target.edge?.model, headers, timeoutMs };
  const floorS = number("floor-duration", values["floor-duration"], Math.min(durationS, 5), 0);
  const warmupRequests = Math.round(number("warmup", values.warmup, 2000, 0));
  /**
   * A no-op server answering like a cache hit: the warm-up goes there, not to the target, and the floor run, the
   * same requests (same mix and seed) on the same schedule, measures what the probe adds to every latency.
   */
  const measure = async () => {
    const noop = floorS > 0 || warmupRequests > 0 ? await startNoopServer(cacheHitAnswer(target)) : undefined;
    try {
      if (noop && warmupRequests > 0) {
        await warmUp({ ...client, url: noop.url, next: newMix(), requests: warmupRequests });
      }
      const startedAt = new Date().toISOString();
      if (!values.json) {
        const how = target.edge ? `edge variant ${target.edge.model}` : "no edge variant: every fresh row is forwarded";
        console.error(`probing ${url} (model ${target.model}, ${how}) for ${durationS} s at ${rate} req/s...`);
      }
      const { results, sent } = await runOpenLoop({
        ...client,
        url,
        rate,
        durationS,
        next,
        onProgress: values.json ? undefined : (done, total) => console.error(`  ${done}/${total} sent`),
      });
      const floor =
        noop && floorS > 0
          ? await runOpenLoop({ ...client, url: noop.url, rate, durationS: floorS, next: newMix() })
          : undefined;
      return { startedAt, results, sent, floorMs: floor?.results.map((r) => r.latencyMs) };
    } finally {
      await noop?.close();
    }
  };
  const { startedAt, results, sent, floorMs } = await measure();
  const summary = summarize(results, {
    url,
    startedAt,
    durationS,
    rateRps: rate,
    sent,
    targetP95Ms: number("target-ms", values["target-ms"], 10, 0),
    floorMs,
  });
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, renderReport(summary, results));
  if (values.prometheus) writeProbeExposition(resolve(values.prometheus), probeExposition(summary, Date.now()));
  if (values.json) console.log(JSON.stringify({ ...summary, report: reportPath }));
  else console.log(`${table(summary)}\nreport: ${reportPath}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`probe: ${err.message}`);
    process.exit(2);
  },
);
