/**
 * npm run validate:latency: the global p95 with real network distance. The local stack (pools us, eu, ap and
 * the edge Worker in workerd) with each region behind a delay proxy whose one-way delay is the distance from
 * the simulated client location (scripts/validate/distance.ts). For each location a fresh edge Worker (a new
 * isolate, as in another colo) that knows every region, as the one anycast Worker does, takes open-loop load of
 * Zipf-popular held-out rows (cache hits, rows the edge model is sure of and rows it is not) from that location,
 * with no routing warm-up: no call reaches a region before the run, so the isolate starts from the distance
 * prior alone and learns the rest from its own calls and warm probes. Then the cascade threshold is varied at
 * one location for the trade-off. Writes bench/latency.json, bench/latency.md and bench/latency-tradeoff.svg.
 * `--help` lists the flags; the defaults take about 3 minutes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import type { FlagValues } from "../../tools/cli/flags.ts";
import { startNoopServer } from "../../tools/probe/floor.ts";
import { startHelloWorker } from "../benchmarks/hello.ts";
import { holdBenchLock } from "../benchmarks/lock.ts";
import { tradeoffSvg } from "./chart.ts";
import { CLIENT_LOCATIONS } from "./distance.ts";
import { classifyRequest } from "./edge-answer.ts";
import { busyCores } from "./forward-pieces.ts";
import { FLAGS } from "./latency/flags.ts";
import { markdown, pct } from "./latency/report.ts";
import { type FloorRun, floorRun, type RunResult, runOnce } from "./latency/run.ts";
import { validationModel } from "./model.ts";
import type { ProxyPlacement } from "./proxy-host.ts";
import { ROOT, runInfo } from "./run-info.ts";
import { startValidationStack, stopOnSignals } from "./stack.ts";
import { cascadeOutcome } from "./tradeoff.ts";

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const model = validationModel(values.model);
  const locations = values.locations.map((n) => CLIENT_LOCATIONS.find((l) => l.name === n)!);
  const thresholdItems = values.thresholds;
  const thresholds = thresholdItems.includes("none")
    ? []
    : thresholdItems.map((t) => {
        if (t === "calibrated") return model.threshold;
        const threshold = t.trim() ? Number(t) : Number.NaN;
        if (!(threshold >= 0 && threshold <= 1)) {
          throw new UsageError(
            `--thresholds: ${JSON.stringify(t)} is not a number from 0 to 1, "calibrated" or "none"`,
          );
        }
        return threshold;
      });
  const {
    "tradeoff-location": tradeoffAt,
    rate,
    duration: durationS,
    "tradeoff-duration": tradeoffS,
    "budget-ms": budgetMs,
    "jitter-ms": jitterMs,
    "client-rtt-ms": clientRttMs,
    seed,
    cold,
    "reach-quantile": reachQuantile,
    "busy-cores": busy,
    proxies,
  } = values;
  if (values["decompose-duration"] !== FLAGS["decompose-duration"].default && !values.decompose) {
    throw new UsageError("--decompose-duration is only for --decompose");
  }
  const decomposeS = values.decompose ? values["decompose-duration"] : undefined;
  const traffic = { distinct: values.distinct, zipfS: values["zipf-s"] };
  const floors = values.floors === "true";
  const out = resolve(ROOT, values.out);
  holdBenchLock();

  const info = runInfo(`npm run validate:latency -- ${process.argv.slice(2).join(" ")}`.trim());
  console.error(`starting pools us, eu, ap behind delay proxies...`);
  const stack = await startValidationStack({ jitterMs, proxies: proxies as ProxyPlacement });
  stopOnSignals(stack);
  const spinning = busyCores(busy);
  try {
    const settings = {
      rate,
      durationS,
      budgetMs,
      seed,
      traffic,
      cold,
      jitterMs,
      decomposeS,
      reachQuantile,
      clientRttMs,
    };
    const floorRuns: FloorRun[] = [];
    /** hello-world Worker and no-op Node server at the same rate: the machine's and the client's own tail. */
    const measureFloors = async (when: FloorRun["when"]) => {
      if (!floors) return;
      const body = classifyRequest(model, model.rows[0]!.input).body!;
      const hello = await startHelloWorker({ cacheApi: false });
      const noop = await startNoopServer(body);
      try {
        for (const [what, url] of [
          ["hello-world Worker (workerd, Miniflare)", hello.url],
          ["no-op Node server (its own thread)", noop.url],
        ] as const) {
          console.error(`floor (${when}): ${what}, ${durationS} s at ${rate} req/s...`);
          const run = await floorRun(what, when, url, body, rate, durationS);
          console.error(`  p50 ${run.stats.p50Ms} ms, p95 ${run.stats.p95Ms} ms, p99 ${run.stats.p99Ms} ms`);
          floorRuns.push(run);
        }
      } finally {
        await Promise.all([hello.dispose(), noop.close()]);
      }
    };
    await measureFloors("before");
    const perLocation: RunResult[] = [];
    for (const location of locations) {
      console.error(`${location.name}: ${durationS} s at ${rate} req/s...`);
      const result = await runOnce(stack, model, location, settings);
      const s = result.summary;
      console.error(
        `  regional share ${pct(result.regionalShare)}, p50 ${s.overall.p50Ms} ms, p95 ${s.overall.p95Ms} ms, p99 ${s.overall.p99Ms} ms, edge share ${pct(result.edgeShare)}, target ${s.target.holds ? "holds" : "MISSED"}, errors ${s.errors}`,
      );
      perLocation.push(result);
    }
    await measureFloors("after");
    const tradeoff: (RunResult & { fixture: ReturnType<typeof cascadeOutcome> })[] = [];
    const from = CLIENT_LOCATIONS.find((l) => l.name === tradeoffAt)!;
    for (const threshold of thresholds) {
      console.error(`trade-off: threshold ${threshold} from ${from.name}, ${tradeoffS} s...`);
      const result = await runOnce(stack, model, from, {
        ...settings,
        durationS: tradeoffS,
        threshold,
        cold: false,
        decomposeS: undefined,
      });
      tradeoff.push({ ...result, fixture: cascadeOutcome(model.rows, threshold, model.name, model.edgeModel) });
      console.error(`  p95 ${result.summary.overall.p95Ms} ms, edge share ${pct(result.edgeShare)}`);
    }
    const report = {
      info,
      settings: {
        model: model.name,
        rate,
        durationS,
        tradeoffS,
        budgetMs,
        clientRttMs,
        jitterMs,
        traffic,
        seed,
        cold,
        proxies,
        ...(decomposeS !== undefined ? { decomposeS } : {}),
        ...(reachQuantile !== undefined ? { reachQuantile } : {}),
        ...(busy > 0 ? { busyCores: busy } : {}),
      },
      floors: floorRuns,
      calibrated: model.threshold,
      budgetMs,
      locations: perLocation,
      tradeoff,
    };
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "latency.json"), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(out, "latency.md"), markdown(report));
    if (tradeoff.length > 0) {
      const points = tradeoff.map((r) => ({
        threshold: r.threshold,
        p95Ms: r.summary.overall.p95Ms,
        accuracy: r.fixture.accuracy,
        edgeShare: r.edgeShare,
      }));
      writeFileSync(
        join(out, "latency-tradeoff.svg"),
        `${tradeoffSvg(points, { targetMs: budgetMs, calibrated: model.threshold })}\n`,
      );
    }
    console.error(`wrote ${join(out, "latency.md")}`);
    return perLocation.every((r) => r.summary.errors === 0) ? 0 : 1;
  } finally {
    spinning.stop();
    await stack.stop();
  }
}

runMain(
  defineCommand({
    name: "validate:latency",
    usage: "npm run validate:latency -- [options]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
