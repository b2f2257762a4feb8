/**
 * npm run validate:probe: is the probe's cache-hit p50 what hey measures? `npm start` (or `--url`), one held-out
 * row cached at the edge, then rounds of hey (`-q R -c 1`) and `npm run probe -- --mix hot --hot-rows 1` sending
 * that row at the same rate, in alternating order so that drift on a shared machine hits both. Each round also
 * runs hey against the probe's no-op server (floor.ts), beside the probe's own floor: the two clients alone.
 * Reports per round and the median: hey's p50, the probe's cache-hit p50 and floor, hey's floor, the difference,
 * and whether it is within the tolerance (0.3 ms). Writes bench/probe.json and bench/probe.md. `--help` lists
 * the flags; the defaults take about 3 minutes. Needs hey (Debian package).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import type { FlagTable, FlagValues } from "../../tools/cli/flags.ts";
import { type LocalStack, startLocalStack } from "../../tools/local-stack/npm-start.ts";
import { cacheHitAnswer, startNoopServer } from "../../tools/probe/floor.ts";
import { hotRowsOf } from "../../tools/probe/mix.ts";
import { classifyBody } from "../../tools/probe/open-loop.ts";
import type { ProbeSummary } from "../../tools/probe/summary.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { holdBenchLock } from "../benchmarks/lock.ts";
import { OUT_FLAG } from "../run-flags.ts";
import {
  type Comparison,
  compareRounds,
  type HeyRun,
  heyArgs,
  p50,
  parseHeyCsv,
  type RoundP50s,
} from "./probe-compare.ts";
import { ROOT, type RunInfo, runInfo, runLine } from "./run-info.ts";

const FLAGS = {
  url: { type: "string", placeholder: "URL", help: "an edge to measure instead of starting `npm start`" },
  model: { type: "string", placeholder: "NAME", default: "digits", help: "model whose first hot row is sent" },
  rate: { type: "number", placeholder: "R", default: 30, min: 0.1, help: "requests per second of both" },
  duration: { type: "number", placeholder: "S", default: 8, min: 1, help: "seconds of each run on the stack" },
  "floor-duration": {
    type: "number",
    placeholder: "S",
    default: 5,
    min: 1,
    help: "seconds of each run against the no-op servers",
  },
  rounds: { type: "number", placeholder: "N", default: 6, min: 1, integer: true, help: "rounds" },
  "tolerance-ms": {
    type: "number",
    placeholder: "MS",
    default: 0.3,
    help: "the largest |probe − hey| of the median that passes",
  },
  out: OUT_FLAG,
} as const satisfies FlagTable;

interface Settings {
  model: string;
  rate: number;
  durationS: number;
  floorDurationS: number;
  /** What was measured, in words. */
  stack: string;
}

interface Round extends RoundP50s {
  round: number;
  order: "hey first" | "probe first";
  heyStatuses: Record<string, number>;
  /** The probe's answers by path (cache should be all of them). */
  probePaths: Record<string, number>;
}

/** Run a command to its end; its stdout, or an error with its stderr. */
function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolvePromise(out);
      else reject(new Error(`${command} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

async function hey(url: string, rate: number, durationS: number, body: string): Promise<HeyRun> {
  const result = parseHeyCsv(await run("hey", heyArgs({ url, rate, durationS, body })));
  if (result.latencyMs.length === 0)
    throw new Error(`hey against ${url}: no 200s (${JSON.stringify(result.statuses)})`);
  return result;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((s, n) => s + n, 0);

function markdown(info: RunInfo, settings: Settings, rounds: Round[], c: Comparison): string {
  const ms = (v: number) => v.toFixed(2);
  const signed = (v: number) => `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(2)}`;
  const hey = heyArgs({ url: "URL", rate: settings.rate, durationS: settings.durationS, body: "BODY" }).join(" ");
  return `${[
    "# The probe against hey",
    "",
    runLine(info),
    "",
    `One held-out row of \`${settings.model}\`, cached at the edge of ${settings.stack}, sent at ${settings.rate} req/s for`,
    `${settings.durationS} s by hey (\`hey ${hey}\`) and by the probe (\`npm run probe -- --mix hot --hot-rows 1\`),`,
    `in alternating order; then by both for ${settings.floorDurationS} s to a no-op server (floor.ts): the probe's own`,
    "floor run, and hey against another such server. p50 in ms (hey writes 0.1 ms steps).",
    "",
    `| round | order | hey | probe (cache hits) | probe − hey | within ${c.toleranceMs} ms | probe floor | hey floor | floor difference | hey's 200s, probe's cache hits |`,
    "|---|---|---:|---:|---:|---|---:|---:|---:|---|",
    ...c.rounds.map((r, i) => {
      const { order, heyStatuses, probePaths } = rounds[i]!;
      const answers = `${heyStatuses["200"] ?? 0}/${sum(heyStatuses)}, ${probePaths.cache ?? 0}/${sum(probePaths)}`;
      return `| ${i + 1} | ${order} | ${ms(r.heyMs)} | ${ms(r.probeMs)} | ${signed(r.differenceMs)} | ${r.within ? "yes" : "no"} | ${ms(r.probeFloorMs)} | ${ms(r.heyFloorMs)} | ${signed(r.floorDifferenceMs)} | ${answers} |`;
    }),
    `| median | | ${ms(c.median.heyMs)} | ${ms(c.median.probeMs)} | ${signed(c.median.differenceMs)} | ${c.holds ? "**yes**" : "**no**"} | ${ms(c.median.probeFloorMs)} | ${ms(c.median.heyFloorMs)} | ${signed(c.median.floorDifferenceMs)} | |`,
    "",
    `${c.roundsWithin} of ${c.rounds.length} rounds within ${c.toleranceMs} ms; the median of the rounds' own differences,`,
    `${signed(c.median.differenceMs)} ms, is ${c.holds ? "within" : "**not** within"} ${c.toleranceMs} ms.`,
  ].join("\n")}\n`;
}

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const model = values.model;
  const {
    rate,
    duration: durationS,
    "floor-duration": floorDurationS,
    rounds: roundCount,
    "tolerance-ms": toleranceMs,
  } = values;
  const out = resolve(ROOT, values.out);
  if (spawnSync("hey", ["-h"]).error) throw new Error("needs hey (Debian: sudo apt-get install hey)");
  holdBenchLock();
  const info = runInfo(`npm run validate:probe -- ${process.argv.slice(2).join(" ")}`.trim());

  const target = probeTarget(join(ROOT, "models"), model);
  const row = hotRowsOf(target.heldout.rows, target.edge, { hotRows: 1 })[0]!;
  const body = classifyBody(model, target.heldout.rows[row]!.input);
  const scratch = mkdtempSync(join(tmpdir(), "validate-probe-"));
  let stack: LocalStack | undefined;
  const stop = async () => {
    await stack?.stop();
    rmSync(scratch, { recursive: true, force: true });
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => void stop().finally(() => process.exit(130)));
  const noop = await startNoopServer(cacheHitAnswer(target));
  const rounds: Round[] = [];
  try {
    if (!values.url) {
      console.error("starting npm start (pools us, eu, ap and the edge Worker)...");
      stack = await startLocalStack({ WRANGLER_SEND_METRICS: "false" });
    }
    const url = (values.url ?? stack!.edgeUrl).replace(/\/$/, "");
    // Cache the row, and check that it is a cache hit from then on.
    const post = () =>
      fetch(`${url}/v1/classify`, { method: "POST", headers: { "content-type": "application/json" }, body });
    await (await post()).text();
    const check = await post();
    await check.text();
    if (check.headers.get("x-served-by") !== "cache") {
      throw new Error(
        `the row is not a cache hit on its second send (x-served-by ${check.headers.get("x-served-by")})`,
      );
    }
    const probe = async () => {
      const args = ["tools/probe.ts", "--url", url, "--model", model, "--mix", "hot", "--hot-rows", "1"];
      args.push("--rate", String(rate), "--duration", String(durationS), "--floor-duration", String(floorDurationS));
      // Its p50 is compared with hey's, not its p95 with a target: a missed target must not end the run (exit 1).
      args.push("--json", "--report", join(scratch, "probe.html"), "--target-ms", "1e9");
      return JSON.parse(await run(process.execPath, args)) as ProbeSummary;
    };
    for (let i = 1; i <= roundCount; i++) {
      const heyFirst = i % 2 === 1;
      console.error(`round ${i}/${roundCount} (${heyFirst ? "hey first" : "probe first"})...`);
      const runHey = () => hey(url, rate, durationS, body);
      let onStack: HeyRun;
      let summary: ProbeSummary;
      if (heyFirst) {
        onStack = await runHey();
        summary = await probe();
      } else {
        summary = await probe();
        onStack = await runHey();
      }
      const cache = summary.paths.cache;
      if (!cache || !summary.floor) throw new Error(`the probe's round ${i} had no cache hits or no floor`);
      const heyFloor = await hey(noop.url, rate, floorDurationS, body);
      rounds.push({
        round: i,
        order: heyFirst ? "hey first" : "probe first",
        heyMs: p50(onStack.latencyMs),
        probeMs: cache.p50Ms,
        probeFloorMs: summary.floor.p50Ms,
        heyFloorMs: p50(heyFloor.latencyMs),
        heyStatuses: onStack.statuses,
        probePaths: Object.fromEntries(Object.entries(summary.paths).map(([p, s]) => [p, s.count])),
      });
      const r = rounds.at(-1)!;
      console.error(
        `  hey ${r.heyMs} ms, probe ${r.probeMs} ms (floor ${r.probeFloorMs} ms, hey's ${r.heyFloorMs} ms)`,
      );
    }
  } finally {
    await noop.close();
    await stop();
  }
  const comparison = compareRounds(rounds, toleranceMs);
  const settings: Settings = {
    model,
    rate,
    durationS,
    floorDurationS,
    stack: values.url ?? "`npm start` (free ports; wrangler.toml's bindings: the Cache API, the rate limiter)",
  };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "probe.json"), `${JSON.stringify({ info, settings, rounds, comparison }, null, 2)}\n`);
  writeFileSync(join(out, "probe.md"), markdown(info, settings, rounds, comparison));
  const m = comparison.median;
  console.error(
    `median: hey ${m.heyMs} ms, probe ${m.probeMs} ms, difference ${m.differenceMs} ms (${comparison.holds ? "within" : "NOT within"} ${toleranceMs} ms); floors: probe ${m.probeFloorMs} ms, hey ${m.heyFloorMs} ms`,
  );
  console.error(`wrote ${join(out, "probe.md")}`);
  return comparison.holds ? 0 : 1;
}

runMain(
  defineCommand({
    name: "validate:probe",
    usage: "npm run validate:probe -- [options]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
