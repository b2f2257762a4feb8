/**
 * npm run validate:faults: faults under load. The local stack with network distance (the client in Frankfurt:
 * eu 1 ms away, us 2 ms, ap 60 ms, so one region besides the nearest is in reach of the 10 ms budget), open-loop
 * load with half the requests forwarded, and one fault at a time on the nearest region: kill it, slow it down,
 * make it fail every call, partition it, restart it, hot-swap the model version on every pool. For each: failed
 * client requests (target 0), latency before, during and after, and the time until routing recovered.
 * Writes bench/faults.json and bench/faults.md. `--help` lists the flags; the defaults take about 3 minutes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import { UsageError } from "../../tools/cli/errors.ts";
import type { FlagTable, FlagValues } from "../../tools/cli/flags.ts";
import { holdBenchLock } from "../benchmarks/lock.ts";
import { MODEL_FLAG, OUT_FLAG } from "../run-flags.ts";
import {
  type FaultResult,
  faultScenarios,
  faultTopology,
  type PhaseStats,
  runFaultScenario,
} from "./fault-scenarios.ts";
import { validationModel } from "./model.ts";
import { ROOT, type RunInfo, runInfo, runLine } from "./run-info.ts";
import { repositoryWithNewVersion } from "./scratch-models.ts";
import { startValidationStack, stopOnSignals } from "./stack.ts";

const FLAGS = {
  model: MODEL_FLAG,
  scenarios: {
    type: "list",
    placeholder: "LIST",
    defaultText: "all, in that order",
    help: "kill,slow,errors,partition,restart,hot-swap",
  },
  rate: { type: "number", placeholder: "R", default: 100, min: 1, help: "requests per second, open loop" },
  baseline: { type: "number", placeholder: "S", default: 5, min: 0.5, help: "seconds of load before each fault" },
  fault: { type: "number", placeholder: "S", default: 10, min: 0.5, help: "seconds each fault lasts" },
  recover: { type: "number", placeholder: "S", default: 30, min: 1, help: "longest wait for recovery after a fault" },
  "budget-ms": {
    type: "number",
    placeholder: "MS",
    default: 10,
    min: 1,
    help: "the edge's SLO_BUDGET_MS (the topology scales with it)",
  },
  "cooldown-ms": {
    type: "number",
    placeholder: "MS",
    default: 5000,
    min: 1,
    help: "the edge's BREAKER_COOLDOWN_MS (deployed default 30000)",
  },
  "cron-ms": {
    type: "number",
    placeholder: "MS",
    default: 5000,
    min: 100,
    help: "how often the region probe runs (Cloudflare's cron: 60000)",
  },
  out: OUT_FLAG,
} as const satisfies FlagTable;

const ms = (v: number | undefined | null) => (v === undefined || v === null ? "–" : String(Math.round(v)));
const lat = (p: PhaseStats) =>
  p.requests === 0
    ? "–"
    : `${p.latency.p50Ms.toFixed(1)} / ${p.latency.p95Ms.toFixed(1)} / ${p.latency.p99Ms.toFixed(1)}`;
const by = (p: PhaseStats) =>
  Object.entries(p.answeredBy)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");

function markdown(info: RunInfo, settings: Record<string, unknown>, results: FaultResult[]): string {
  return `${[
    "# Faults under load",
    "",
    runLine(info),
    "",
    "The local stack with each region behind a delay proxy: the client in Frankfurt, eu 1 ms away (nearest), us",
    "2 ms (in reach of the budget), ap 6x the budget (beyond it). Open-loop load, half of it rows the edge model is",
    "unsure of (forwarded), the rest cache repeats and confident rows. Each fault hits the nearest region (eu) on a",
    "fresh edge Worker. A failed request is anything but a 200 (regional or degraded answers are both 200).",
    `Recovery: from the end of the fault until eu's breaker is closed and eu answers again. Settings: ${JSON.stringify(settings)}.`,
    "",
    "| fault | what | requests | failed | p50 / p95 / p99 ms before | during | after | recovery ms |",
    "|---|---|---|---|---|---|---|---|",
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.description} | ${r.requests} | ${r.failed === 0 ? "**0**" : `**${r.failed}**`} | ${lat(r.before)} | ${lat(r.during)} | ${lat(r.after)} | ${r.recoveryMs === null ? "not recovered" : ms(r.recoveryMs)} |`,
    ),
    "",
    "## Who answered, per phase",
    "",
    "| fault | before | during | after |",
    "|---|---|---|---|",
    ...results.map((r) => `| ${r.name} | ${by(r.before)} | ${by(r.during)} | ${by(r.after)} |`),
    "",
    "## The nearest region's breaker (ms into the run; the fault began at the first time, ended at the second)",
    "",
    "| fault | fault began / ended | breaker states |",
    "|---|---|---|",
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.injectedAtMs} / ${ms(r.healedAtMs)} | ${r.breaker.map((b) => `${b.state} @${b.atMs}`).join(" → ")} |`,
    ),
    ...results
      .filter((r) => r.newVersionAfterMs !== undefined)
      .flatMap((r) => [
        "",
        `Hot swap: the first answer of the new version came ${ms(r.newVersionAfterMs)} ms after the swap began, the last of`,
        `the old one ${ms(r.oldVersionUntilMs)} ms after (pools swap one after another; the edge's served version only moves forward).`,
      ]),
    ...results
      .filter((r) => r.failures.length > 0)
      .flatMap((r) => ["", `Failures in ${r.name}: ${r.failures.map((f) => `\`${f}\``).join("; ")}`]),
  ].join("\n")}\n`;
}

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const model = validationModel(values.model);
  const topology = faultTopology(values["budget-ms"]);
  const all = faultScenarios({ model: model.name, version: "2", topology });
  const known = all.map((s) => s.name);
  const names = values.scenarios.length > 0 ? values.scenarios : known;
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0)
    throw new UsageError(`--scenarios: unknown ${unknown.join(", ")}; one or more of ${known.join(", ")}`);
  const timing = {
    rate: values.rate,
    baselineS: values.baseline,
    faultS: values.fault,
    recoverS: values.recover,
    cronMs: values["cron-ms"],
  };
  const cooldownMs = values["cooldown-ms"];
  const out = resolve(ROOT, values.out);
  holdBenchLock();

  const info = runInfo(`npm run validate:faults -- ${process.argv.slice(2).join(" ")}`.trim());
  const repository = await repositoryWithNewVersion(model.name, "2");
  console.error("starting pools us, eu, ap behind delay proxies...");
  const stack = await startValidationStack({ delays: topology.delaysMs, modelsDir: repository.dir });
  stopOnSignals(stack);
  const results: FaultResult[] = [];
  try {
    for (const [index, scenario] of all.filter((s) => names.includes(s.name)).entries()) {
      const edge = await stack.startEdge({
        SLO_BUDGET_MS: String(topology.budgetMs),
        BREAKER_COOLDOWN_MS: String(cooldownMs),
        REGION_STATUS_MEMO_MS: "0",
      });
      try {
        const warm = await edge.dispatchFetch(`${edge.url}/v2/health/ready`);
        if (warm.status !== 200) throw new Error(`edge not ready: ${warm.status}`);
        await edge.scheduled();
        console.error(`${scenario.name}: ${scenario.description}...`);
        const result = await runFaultScenario(stack, edge, model, scenario, topology, { ...timing, seed: index + 1 });
        console.error(
          `  ${result.requests} requests, ${result.failed} failed, p95 during ${result.during.latency.p95Ms} ms, recovery ${result.recoveryMs ?? "none"} ms`,
        );
        results.push(result);
      } finally {
        await edge.dispose();
      }
    }
  } finally {
    await stack.stop();
    repository.remove();
  }
  const settings = { model: model.name, ...timing, cooldownMs, topology };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "faults.json"), `${JSON.stringify({ info, settings, results }, null, 2)}\n`);
  writeFileSync(join(out, "faults.md"), markdown(info, settings, results));
  console.error(`wrote ${join(out, "faults.md")}`);
  return results.every((r) => r.failed === 0 && r.recoveryMs !== null) ? 0 : 1;
}

runMain(
  defineCommand({
    name: "validate:faults",
    usage: "npm run validate:faults -- [options]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
