/**
 * `npm run validate:rollout [-- --runs 10]`: the false rollback rate of the rollout's sequential tests on
 * real pools. Each run rolls out a candidate byte-identical to the served version (its own version number,
 * checked by the real gates) with the default parameters and a shadow step, through three local pools under
 * regional traffic, and counts whether the controller promoted it or rolled it back, after how many requests.
 * Next to it, the same figures from simulating 10,000 rollouts (npm run rollout -- simulate). Writes
 * bench/rollout.json and bench/rollout.md.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { rolloutConfig } from "../../protocol/rollout/config.ts";
import { processFlags, runSubcommands } from "../../tools/cli/command.ts";
import { MODELS_DIR } from "../../tools/edge-bundle/build-edge.ts";
import { COMMANDS } from "../../tools/model/commands.ts";
import { LoadClient, runClosedLoop } from "../../tools/probe/load.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { PoolClient } from "../../tools/rollout/client.ts";
import { runController } from "../../tools/rollout/controller.ts";
import { startState } from "../../tools/rollout/decide.ts";
import { IDENTICAL, simulateMany } from "../../tools/rollout/simulate.ts";
import { holdBenchLock } from "../benchmarks/lock.ts";
import { OUT_FLAG } from "../run-flags.ts";
import { type RegionalPool, startRegionalPool } from "../stack/regional-pool.ts";
import { ROOT, type RunInfo, runInfo, runLine } from "./run-info.ts";

// --alpha and --beta loosen the tests to see false rollbacks often enough to compare with the simulation.
const { values: args } = processFlags({
  name: "validate:rollout",
  usage: "npm run validate:rollout -- [options]",
  flags: {
    runs: {
      type: "number",
      placeholder: "N",
      default: 10,
      min: 1,
      integer: true,
      help: "rollouts of identical candidates",
    },
    out: OUT_FLAG,
    alpha: { type: "number", placeholder: "X", default: 0.001, max: 1, help: "the sequential tests' alpha" },
    beta: { type: "number", placeholder: "X", default: 0.01, max: 1, help: "the sequential tests' beta" },
  },
});
const { runs } = args;
const TOKEN = "validate-rollout";
const quiet = { log: () => {}, note: () => {} };

/** A scratch repository whose digits has versions 2..runs+1, byte-identical to 1, each with passing gates. */
async function identicalCandidates(dir: string): Promise<void> {
  cpSync(MODELS_DIR, dir, { recursive: true });
  const path = join(dir, "digits", "config.json");
  const config = JSON.parse(readFileSync(path, "utf8"));
  for (let v = 2; v <= runs + 1; v++) {
    cpSync(join(dir, "digits", "1"), join(dir, "digits", String(v)), { recursive: true });
    config.versions[String(v)] = config.versions["1"];
  }
  writeFileSync(path, JSON.stringify(config, null, 2));
  for (let v = 2; v <= runs + 1; v++) {
    const argv = ["check", "--name", "digits", "--version", String(v), "--models", dir, "--samples", "300"];
    if ((await runSubcommands(argv, COMMANDS, quiet, "model")) !== 0) throw new Error(`version ${v} failed its gates`);
  }
}

/** Regional traffic to the pools, 8 requests at a time, new inputs each pass, until `done` settles. */
async function traffic(pools: RegionalPool[], done: Promise<unknown>): Promise<{ sent: number; failed: number }> {
  const rows = probeTarget(MODELS_DIR, "digits").heldout.rows;
  const clients = pools.map((p) => new LoadClient(p.url, { connections: 4 }));
  let stop = false;
  void done.finally(() => {
    stop = true;
  });
  let failed = 0;
  const sent = await runClosedLoop(
    8,
    () => stop,
    async (i) => {
      const inputs = rows[i % rows.length]!.input.map((x, j) => (j === 0 ? x + Math.floor(i / rows.length) * 1e-3 : x));
      const request = {
        path: "/v1/classify",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "digits", inputs }),
      };
      const response = await clients[i % clients.length]!.send(request);
      if (response.status !== 200) failed++;
    },
  );
  await Promise.all(clients.map((c) => c.close()));
  return { sent, failed };
}

interface Run {
  candidate: string;
  outcome: "promoted" | "rolled-back";
  requests: number;
  failed: number;
  seconds: number;
  decisions: string[];
}

async function main(): Promise<void> {
  holdBenchLock();
  const flags = args.alpha !== 0.001 || args.beta !== 0.01 ? ` --alpha ${args.alpha} --beta ${args.beta}` : "";
  const info = runInfo(`npm run validate:rollout -- --runs ${runs}${flags}`);
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-validate-rollout-"));
  const pools: RegionalPool[] = [];
  try {
    await identicalCandidates(dir);
    for (const region of ["us", "eu", "ap"]) {
      pools.push(await startRegionalPool({ region, modelsDir: dir, env: { ADMIN_TOKEN: TOKEN } }));
    }
    const client = new PoolClient(TOKEN);
    const targets = pools.map((p) => ({ name: p.region, url: p.url }));
    const config = rolloutConfig({ steps: [0, 1, 5, 25, 100], alpha: args.alpha, beta: args.beta });
    const results: Run[] = [];
    let stable = "1";
    for (let r = 0; r < runs; r++) {
      const candidate = String(r + 2);
      const answers = await client.status(targets, "digits");
      const revision = Math.max(0, ...answers.map((a) => (a.ok ? (a.status.state?.revision ?? 0) : 0))) + 1;
      const state = startState({ model: "digits", stable, candidate, config, revision, now: new Date() });
      for (const a of await client.put(targets, state)) if (!a.ok) throw new Error(`start failed: ${a.error}`);
      const decisions: string[] = [];
      const t0 = performance.now();
      const controller = runController({
        client,
        pools: targets,
        model: "digits",
        intervalMs: 250,
        progressMs: Number.POSITIVE_INFINITY,
        log: (l) => {
          if (/ digits \d+: /.test(l)) decisions.push(l.replace(/^\S+ /, "").split("\n")[0]!);
        },
      });
      const load = await traffic(pools, controller);
      const outcome = await controller;
      results.push({
        candidate,
        outcome,
        requests: load.sent,
        failed: load.failed,
        seconds: (performance.now() - t0) / 1000,
        decisions,
      });
      console.error(
        `run ${r + 1}/${runs}: version ${candidate} ${outcome} after ${load.sent} requests (${load.failed} failed)`,
      );
      // A rolled-back candidate's number stays unused; the next one is over the same stable version.
      if (outcome === "promoted") stable = candidate;
    }
    const simulated = simulateMany(config, IDENTICAL, { requestsPerTick: 100, shadowShare: 1 }, 10_000, 1);
    const report = {
      ...info,
      config,
      real: {
        runs: results.length,
        promoted: results.filter((r) => r.outcome === "promoted").length,
        rolledBack: results.filter((r) => r.outcome === "rolled-back").length,
        meanRequests: Math.round(results.reduce((a, r) => a + r.requests, 0) / results.length),
        failedRequests: results.reduce((a, r) => a + r.failed, 0),
        results,
      },
      simulated,
    };
    const out = resolve(ROOT, args.out);
    mkdirSync(out, { recursive: true });
    const name = flags ? `rollout-alpha-${args.alpha}` : "rollout";
    writeFileSync(join(out, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(out, `${name}.md`), markdown(report));
    console.log(markdown(report));
  } finally {
    await Promise.allSettled(pools.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

function markdown(
  r: RunInfo & {
    config: { alpha: number; beta: number; minSamples: number };
    real: {
      runs: number;
      promoted: number;
      rolledBack: number;
      meanRequests: number;
      failedRequests: number;
      results: Run[];
    };
    simulated: ReturnType<typeof simulateMany>;
  },
): string {
  const lines = [
    "# Rollouts of a candidate identical to the served version",
    "",
    runLine(r),
    `alpha ${r.config.alpha}, beta ${r.config.beta}, ${r.config.minSamples} samples minimum, with a shadow step: 0 -> 1 -> 5 -> 25 -> 100%.`,
    "Real: three local pools, regional traffic (8 requests in flight), the controller reading every 250 ms.",
    "Simulated: the controller's decisions on simulated counts, 100 requests between reads, every request shadowed.",
    "",
    "| | rollouts | promoted | rolled back | false rollback rate | mean requests to promotion |",
    "|---|---:|---:|---:|---:|---:|",
    `| real pools | ${r.real.runs} | ${r.real.promoted} | ${r.real.rolledBack} | ${(r.real.rolledBack / r.real.runs).toFixed(3)} | ${r.real.meanRequests} |`,
    `| simulated | ${r.simulated.runs} | ${r.simulated.promoted} | ${r.simulated.rolledBack} | ${(r.simulated.rolledBack / r.simulated.runs).toFixed(4)} | ${r.simulated.meanRequests.toFixed(0)} |`,
    "",
    `Client requests that failed during the real runs: ${r.real.failedRequests}.`,
    "",
    "| run | candidate | outcome | requests | seconds |",
    "|---:|---:|---|---:|---:|",
    ...r.real.results.map(
      (x, i) => `| ${i + 1} | ${x.candidate} | ${x.outcome} | ${x.requests} | ${x.seconds.toFixed(1)} |`,
    ),
    "",
  ];
  return lines.join("\n");
}

main().catch((err: Error) => {
  console.error(`validate:rollout: ${err.message}`);
  process.exit(1);
});
