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
import { seededRandom } from "../protocol/seeded-random.ts";
import { defineCommand, runMain } from "./cli/command.ts";
import { UsageError } from "./cli/errors.ts";
import type { FlagTable, FlagValues } from "./cli/flags.ts";
import { cacheHitAnswer, startNoopServer } from "./probe/floor.ts";
import { probeMix } from "./probe/mix.ts";
import { runOpenLoop, warmUp } from "./probe/open-loop.ts";
import { probeExposition, writeProbeExposition } from "./probe/prometheus.ts";
import { renderReport } from "./probe/report-html.ts";
import { PROBE_PATHS, type ProbeSummary, summarize } from "./probe/summary.ts";
import { probeTarget } from "./probe/target.ts";
import { probeVerdict } from "./probe/verdict.ts";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");

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
    `p95 target ${summary.target.p95Ms} ms: ${summary.target.holds ? "HOLDS" : "MISSED"} (measured ${summary.target.measuredP95Ms === null ? "not reached: under 95% answered" : `${summary.target.measuredP95Ms} ms`})`,
  );
  for (const e of summary.errorSamples) lines.push(`  error: ${e}`);
  return lines.join("\n");
}

const PROBE_FLAGS = {
  url: { type: "string", placeholder: "URL", required: true, help: "edge base URL, e.g. http://localhost:8787" },
  model: {
    type: "string",
    placeholder: "NAME",
    default: "digits",
    help: "model to probe, with its held-out fixture from models/",
  },
  models: {
    type: "string",
    placeholder: "DIR",
    defaultText: "this repository's models/",
    help: "model repository the fixture is read from",
  },
  duration: { type: "number", placeholder: "S", default: 10, min: 0.1, help: "seconds to run" },
  rate: { type: "number", placeholder: "R", default: 50, min: 0.1, help: "requests per second, open loop" },
  json: { type: "boolean", help: "print one JSON object instead of the table" },
  report: { type: "string", placeholder: "FILE", defaultText: "bench/probe-report.html", help: "HTML report path" },
  prometheus: {
    type: "string",
    placeholder: "FILE",
    help: "also write the summary as Prometheus text (node_exporter textfile collector, Pushgateway)",
  },
  "api-key": {
    type: "string",
    placeholder: "KEY",
    help: "API key, if the edge requires one (or EDGECASCADE_API_KEY)",
  },
  location: {
    type: "string",
    placeholder: "LAT,LON",
    help: "send x-edgecascade-location (honoured by local stacks only)",
  },
  seed: {
    type: "number",
    placeholder: "N",
    default: 1,
    help: "request mix seed: which rows, in which order (the fresh rows' changes are\nnew in every run)",
  },
  mix: {
    type: "string",
    placeholder: "MIX",
    choices: ["realistic", "hot"],
    default: "realistic",
    help:
      "realistic: 60% repeats of the hot set, 35% rows the edge model is sure of and 5%\n" +
      "rows it is not, each changed a little to miss the cache; hot: every request repeats a row\n" +
      "of the hot set, cache hits after each row's first send (like-for-like with hey or wrk\n" +
      "sending the same body over and over; with --hot-rows 1, one body)",
  },
  "hot-rows": { type: "number", placeholder: "N", default: 16, min: 1, integer: true, help: "rows in the hot set" },
  "timeout-ms": { type: "number", placeholder: "N", default: 5000, min: 1, help: "per-request timeout" },
  "floor-duration": {
    type: "number",
    placeholder: "S",
    defaultText: "the duration, at most 5; 0: none",
    help:
      "seconds of the floor run: the same requests and schedule against a built-in no-op\n" +
      "server, reported as the probe's own latency",
  },
  warmup: {
    type: "number",
    placeholder: "N",
    default: 2000,
    integer: true,
    help:
      "requests sent one after another to the no-op server before the run, so that V8 has\n" +
      "optimised the client's code the timed requests run (0: none)",
  },
  "target-ms": { type: "number", placeholder: "N", default: 10, help: "p95 target; missed: exit code 1" },
  "max-error-share": {
    type: "number",
    placeholder: "X",
    default: 0.01,
    min: 0,
    max: 1,
    help: "the largest share of requests that may err (0.01: 1%); more: exit code 3, with the\nerrors' likely cause (401: pass --api-key)",
  },
} as const satisfies FlagTable;

const probe = defineCommand({
  name: "probe",
  usage: "npm run probe -- --url URL [options]",
  epilog:
    "Exit codes: 0 the p95 target held and at most --max-error-share of requests erred; 1 the target was\n" +
    "missed; 3 too many requests erred; 2 a mistake in the command line. The cause is printed (stderr).",
  flags: PROBE_FLAGS,
  run: (values) => probeRun(values),
});

async function probeRun(values: FlagValues<typeof PROBE_FLAGS>): Promise<number> {
  let url: string;
  try {
    url = new URL(values.url).toString().replace(/\/$/, "");
  } catch {
    throw new UsageError(`--url must be a URL, got ${JSON.stringify(values.url)}`);
  }
  const { duration: durationS, rate, seed, "timeout-ms": timeoutMs, mix } = values;
  const reportPath = resolve(values.report ?? resolve(root, "bench/probe-report.html"));
  const apiKey = values["api-key"] ?? process.env.EDGECASCADE_API_KEY;
  const headers: Record<string, string> = {};
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  if (values.location) headers["x-edgecascade-location"] = values.location;

  const target = probeTarget(resolve(values.models ?? resolve(root, "models")), values.model);
  const { heldout } = target;
  const mixOptions = {
    hotRows: values["hot-rows"],
    ...(mix === "hot" ? { repeatShare: 1 } : {}),
  };
  // One base per run, for this run's mixes (timed, warm-up and floor): fresh rows the edge has not seen before.
  const offsetBase = randomInt(2 ** 32);
  const newMix = () => probeMix(heldout.rows, target.edge, seededRandom(seed), { ...mixOptions, offsetBase });
  const next = newMix();

  const client = { rows: heldout.rows, model: target.model, edgeModel: target.edge?.model, headers, timeoutMs };
  const floorS = values["floor-duration"] ?? Math.min(durationS, 5);
  const warmupRequests = values.warmup;
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
    targetP95Ms: values["target-ms"],
    floorMs,
  });
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, renderReport(summary, results));
  if (values.prometheus) {
    const registryAgeS = await edgeRegistryAge(url, headers);
    writeProbeExposition(resolve(values.prometheus), probeExposition(summary, Date.now(), { registryAgeS }));
  }
  const verdict = probeVerdict(summary, results, {
    maxErrorShare: values["max-error-share"],
    apiKeySent: apiKey !== undefined && apiKey !== "",
  });
  if (values.json) console.log(JSON.stringify({ ...summary, verdict, report: reportPath }));
  else console.log(`${table(summary)}\nreport: ${reportPath}`);
  for (const cause of verdict.causes) console.error(`probe: ${cause}`);
  return verdict.exitCode;
}

/** The age of the model registry view the edge serves from (`/status`), or null when it follows none or will not say. */
async function edgeRegistryAge(url: string, headers: Record<string, string>): Promise<number | null> {
  try {
    const res = await fetch(`${url}/status`, { headers, signal: AbortSignal.timeout(5000) });
    if (!res.ok) return null;
    const age = ((await res.json()) as { registry?: { viewAgeS?: unknown } | null }).registry?.viewAgeS;
    return typeof age === "number" ? age : null;
  } catch {
    return null;
  }
}

runMain(probe, { errorExit: 2 });
