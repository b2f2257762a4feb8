import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DEFAULT_STEPS, type RolloutConfigOverrides, rolloutConfig } from "../../protocol/rollout/config.ts";
import { RefusedError, type Subcommand, UsageError } from "../model/cli.ts";
import { type PoolAnswer, PoolClient } from "./client.ts";
import { runController, syncPools } from "./controller.ts";
import { nextState, startState } from "./decide.ts";
import { fleetOf } from "./fleet.ts";
import { type Pool, poolsFromFlag, poolsFromWrangler } from "./pools.ts";
import { evidenceLines, promotionNote, rolloutLine } from "./report.ts";
import { IDENTICAL, simulateMany } from "./simulate.ts";

const WRANGLER_TOML = fileURLToPath(new URL("../../wrangler.toml", import.meta.url));

const POOL_OPTIONS = `Pools (every region's pool gets every change):
  --pools URL,...      these pools (e.g. each pod of a region, or a local stack's)
  --env NAME           the regions of wrangler.toml's [env.NAME] (local: its top level, the local stack);
                       default: every environment's regions, each once
  ADMIN_TOKEN          (environment) the pools' admin token`;

type Values = Record<string, string | boolean | undefined>;
const POOL_FLAGS = { pools: { type: "string" }, env: { type: "string" } } as const;

function parse(argv: string[], options: Record<string, { type: "string" | "boolean" }>): Values {
  try {
    return parseArgs({ args: argv, options: { ...POOL_FLAGS, ...options }, strict: true }).values as Values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function poolsOf(values: Values): Promise<Pool[]> {
  if (typeof values.pools === "string") return poolsFromFlag(values.pools);
  const { unstable_readConfig } = await import("wrangler");
  const toml = await readFile(WRANGLER_TOML, "utf8");
  const envs = [...toml.matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map((m) => m[1]!);
  const vars = (env: string | undefined) =>
    unstable_readConfig({ config: WRANGLER_TOML, ...(env ? { env } : {}) }).vars as Record<string, unknown>;
  return poolsFromWrangler(envs, vars, typeof values.env === "string" ? values.env : undefined);
}

function clientOf(): PoolClient {
  const token = process.env.ADMIN_TOKEN;
  if (!token) throw new UsageError("ADMIN_TOKEN must be set to the pools' admin token");
  return new PoolClient(token);
}

function required(values: Values, flag: string): string {
  const value = values[flag];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${flag} is required`);
  return value;
}

/** The pools' answers; refused (nothing changed) when one cannot be read. */
function allAnswered(answers: PoolAnswer[]): asserts answers is Extract<PoolAnswer, { ok: true }>[] {
  const failed = answers.filter((a) => !a.ok);
  if (failed.length > 0) {
    throw new RefusedError(
      `not every pool answered: ${failed.map((f) => `${f.pool.name} (${(f as { error: string }).error})`).join(", ")}`,
    );
  }
}

function numberFlag(values: Values, flag: string): number | undefined {
  const raw = values[flag];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new UsageError(`--${flag} must be a number, got "${raw}"`);
  return n;
}

/** The flags `configOf` reads, shared by `start` and `simulate` (`start` adds `--min-step-seconds`). */
const CONFIG_FLAGS = {
  shadow: { type: "boolean" },
  steps: { type: "string" },
  config: { type: "string" },
  alpha: { type: "string" },
  beta: { type: "string" },
  "min-samples": { type: "string" },
} as const;

async function configOf(values: Values): Promise<ReturnType<typeof rolloutConfig>> {
  let overrides: RolloutConfigOverrides = {};
  if (typeof values.config === "string") {
    const text = await readFile(values.config, "utf8").catch((err: Error) => {
      throw new UsageError(`--config: cannot read ${values.config}: ${err.message}`);
    });
    try {
      overrides = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`--config ${values.config}: invalid JSON: ${(err as Error).message}`);
    }
  }
  const steps =
    typeof values.steps === "string"
      ? values.steps.split(",").map((s) => Number(s.trim()))
      : (overrides.steps ?? DEFAULT_STEPS);
  const flags: RolloutConfigOverrides = {
    steps: values.shadow && steps[0] !== 0 ? [0, ...steps] : steps,
    ...(numberFlag(values, "alpha") !== undefined ? { alpha: numberFlag(values, "alpha") } : {}),
    ...(numberFlag(values, "beta") !== undefined ? { beta: numberFlag(values, "beta") } : {}),
    ...(numberFlag(values, "min-samples") !== undefined ? { minSamples: numberFlag(values, "min-samples") } : {}),
    ...(numberFlag(values, "min-step-seconds") !== undefined
      ? { minStepSeconds: numberFlag(values, "min-step-seconds") }
      : {}),
  };
  try {
    return rolloutConfig({ ...overrides, ...flags });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const start: Subcommand = {
  name: "start",
  summary: "start a rollout of a candidate version in every pool (shadow and/or canary steps)",
  usage: `Usage: npm run rollout -- start --model NAME --candidate V [--shadow] [--steps 1,5,25,100] [options]

Loads version V beside the version every pool serves, as the candidate of a rollout: each pool refuses a
version without a passing release gates record for its file (npm run model -- check). The rollout then
waits for its controller (npm run rollout -- run).

  --model NAME            the model
  --candidate V           the version to roll out (newer than the served one)
  --shadow                begin with a 0% step: the candidate runs on copies only
  --steps P,P,...         percents of requests for the candidate, ending at 100 (default 1,5,25,100)
  --config FILE           JSON of rollout parameters (docs/rollouts.md), under the flags
  --alpha X, --beta X, --min-samples N, --min-step-seconds S   the sequential tests' parameters

${POOL_OPTIONS}`,
  async run(argv, out) {
    const values = parse(argv, {
      model: { type: "string" },
      candidate: { type: "string" },
      ...CONFIG_FLAGS,
      "min-step-seconds": { type: "string" },
    });
    const model = required(values, "model");
    const candidate = required(values, "candidate");
    const config = await configOf(values);
    const pools = await poolsOf(values);
    const client = clientOf();
    const answers = await client.status(pools, model);
    allAnswered(answers);
    const serving = new Set(answers.map((a) => a.status.serving));
    if (serving.size !== 1 || [...serving][0] === null) {
      throw new RefusedError(
        `the pools do not serve one version of ${model}: ${answers.map((a) => `${a.pool.name} ${a.status.serving}`).join(", ")}`,
      );
    }
    const revision = Math.max(0, ...answers.map((a) => a.status.state?.revision ?? 0)) + 1;
    const state = startState({ model, stable: [...serving][0]!, candidate, config, revision, now: new Date() });
    const results = await client.put(pools, state);
    const failed = results.filter((r) => !r.ok);
    if (failed.length > 0) {
      // Those that took it drop the candidate again: a rollout runs in every pool or in none.
      const undo = nextState(
        state,
        { action: "rollback", reason: "the start failed in another pool" },
        revision + 1,
        new Date(),
      );
      await client.put(
        results.filter((r) => r.ok).map((r) => r.pool),
        undo,
      );
      throw new RefusedError(
        `the rollout did not start: ${failed.map((f) => `${f.pool.name}: ${(f as { error: string }).error}`).join("; ")}`,
      );
    }
    out.log(rolloutLine(state));
    out.log(`started in ${pools.map((p) => p.name).join(", ")}; next: npm run rollout -- run --model ${model}`);
    return 0;
  },
};

const status: Subcommand = {
  name: "status",
  summary: "every pool's rollouts (of one model, or of all): state, step, evidence and the tests' verdicts",
  usage: `Usage: npm run rollout -- status [--model NAME] [--json]

  --model NAME   this model only (default: every model the first pool that answers serves, those with a rollout)
  --json         every pool's answer and the summed evidence as JSON

${POOL_OPTIONS}`,
  async run(argv, out) {
    const values = parse(argv, { model: { type: "string" }, json: { type: "boolean" } });
    const pools = await poolsOf(values);
    const client = clientOf();
    let models = typeof values.model === "string" ? [values.model] : undefined;
    for (const pool of pools) models ??= await client.models(pool);
    if (!models) throw new RefusedError("no pool answered its repository index");
    const reports = [];
    for (const model of models) {
      const answers = await client.status(pools, model);
      const fleet = fleetOf(answers);
      if (!fleet.newest && typeof values.model !== "string") continue;
      reports.push({ model, answers, fleet });
    }
    if (values.json) {
      const json = reports.map(({ model, answers, fleet }) => ({
        model,
        state: fleet.newest ?? null,
        evidence: fleet.evidence ?? null,
        pools: answers,
      }));
      out.log(JSON.stringify(typeof values.model === "string" ? json[0] : json, null, 2));
      return 0;
    }
    if (reports.length === 0) out.log(`no rollout of ${models.join(", ")}`);
    for (const { model, answers, fleet } of reports) {
      out.log(fleet.newest ? rolloutLine(fleet.newest) : `${model}: no rollout`);
      for (const a of answers) {
        const workers = a.ok && a.status.workers;
        const line = a.ok
          ? `serves ${a.status.serving}${a.status.candidate ? `, candidate ${a.status.candidate} loaded` : ""}, revision ${a.status.state?.revision ?? "-"}${workers ? `, ${workers.answered} workers${workers.consistent ? "" : " (inconsistent)"}` : ""}`
          : `not reachable: ${a.error}`;
        out.log(`  ${a.pool.name.padEnd(16)} ${line}`);
      }
      if (fleet.newest && fleet.evidence)
        for (const line of evidenceLines(fleet.newest, fleet.evidence)) out.log(`  ${line}`);
    }
    return 0;
  },
};

/** `promote` and `rollback` by hand: the newest state, moved, sent to every pool. */
function byHand(action: "promote" | "rollback"): Subcommand {
  return {
    name: action,
    summary:
      action === "promote"
        ? "promote the running candidate now, in every pool"
        : "roll the running candidate back now, in every pool",
    usage: `Usage: npm run rollout -- ${action} --model NAME [--reason TEXT]\n\n${POOL_OPTIONS}`,
    async run(argv, out) {
      const values = parse(argv, { model: { type: "string" }, reason: { type: "string" } });
      const model = required(values, "model");
      const pools = await poolsOf(values);
      const client = clientOf();
      const fleet = fleetOf(await client.status(pools, model));
      const state = fleet.newest;
      if (state?.phase !== "running") throw new RefusedError(`${model} has no running rollout`);
      const reason =
        typeof values.reason === "string"
          ? values.reason
          : `${action === "promote" ? "promoted" : "rolled back"} by hand`;
      const next = nextState(state, { action, reason }, state.revision + 1, new Date());
      const results = await client.put(pools, next);
      out.log(rolloutLine(next));
      for (const r of results)
        out.log(
          `  ${r.pool.name.padEnd(16)} ${r.ok ? "done" : `FAILED: ${r.error} (npm run rollout -- sync retries)`}`,
        );
      if (action === "promote") out.log(promotionNote(next));
      return results.every((r) => r.ok) ? 0 : 1;
    },
  };
}

const run: Subcommand = {
  name: "run",
  summary:
    "the controller: read every pool, apply the sequential tests, move the steps; exit when promoted or rolled back",
  usage: `Usage: npm run rollout -- run --model NAME [--interval-ms 1000]

Holds no state: every interval it reads each pool's rollout state and the evidence of the current step,
sends the newest state to pools that lag, sums the evidence, applies the sequential tests (errors, latency,
agreement) and moves the rollout: the next step, the promotion after the last, or a rollback at the first
breach. Prints each decision with its evidence. Exits 0 when promoted, 3 when rolled back.

${POOL_OPTIONS}`,
  async run(argv, out) {
    const values = parse(argv, { model: { type: "string" }, "interval-ms": { type: "string" } });
    const model = required(values, "model");
    const intervalMs = numberFlag(values, "interval-ms") ?? 1000;
    if (!(intervalMs >= 10)) throw new UsageError("--interval-ms must be 10 or more");
    const outcome = await runController({
      client: clientOf(),
      pools: await poolsOf(values),
      model,
      intervalMs,
      log: out.log,
    });
    return outcome === "promoted" ? 0 : 3;
  },
};

const sync: Subcommand = {
  name: "sync",
  summary: "send a model's newest rollout state to the pools that lag behind it (restarted or new pods)",
  usage: `Usage: npm run rollout -- sync --model NAME\n\n${POOL_OPTIONS}`,
  async run(argv, out) {
    const values = parse(argv, { model: { type: "string" } });
    const model = required(values, "model");
    const client = clientOf();
    const fleet = fleetOf(await client.status(await poolsOf(values), model));
    if (!fleet.newest) throw new RefusedError(`no pool holds a rollout of ${model}`);
    out.log(rolloutLine(fleet.newest));
    if (fleet.behind.length === 0) out.log("  every pool that answered holds it");
    const failed = await syncPools(client, fleet, out.log);
    return failed.length === 0 && fleet.unreachable.length === 0 ? 0 : 1;
  },
};

const simulate: Subcommand = {
  name: "simulate",
  summary: "simulate whole rollouts (no pools): false rollback rate and requests per decision at given effects",
  usage: `Usage: npm run rollout -- simulate [--runs 1000] [--seed 1] [--requests-per-tick 100] [rollout options]

Runs the controller's decisions on simulated counts for a candidate identical to the stable version, one
that disagrees on 4% of rows, one whose runs are the slowest of every block of shadow pairs, and one
failing 2% of runs.

  --runs N, --seed N, --requests-per-tick N (live requests between two reads of the controller, default 100)
  --shadow-share X (share of requests that get a shadow run, default 1)
  --steps, --shadow, --config, --alpha, --beta, --min-samples   as for start`,
  async run(argv, out) {
    const values = parse(argv, {
      runs: { type: "string" },
      seed: { type: "string" },
      "requests-per-tick": { type: "string" },
      "shadow-share": { type: "string" },
      ...CONFIG_FLAGS,
    });
    const config = await configOf(values);
    const runs = numberFlag(values, "runs") ?? 1000;
    const seed = numberFlag(values, "seed") ?? 1;
    const traffic = {
      requestsPerTick: numberFlag(values, "requests-per-tick") ?? 100,
      shadowShare: numberFlag(values, "shadow-share") ?? 1,
    };
    out.log(
      `steps ${config.steps.join(" -> ")}%, alpha ${config.alpha}, beta ${config.beta}, min samples ${config.minSamples}; ${runs} rollouts each`,
    );
    out.log("candidate                           promoted  rolled back (by test)         mean requests  p95 requests");
    const scenarios = [
      ["identical to the stable version", IDENTICAL],
      ["disagrees on 4% of rows", { ...IDENTICAL, disagreement: 0.04 }],
      ["has every slowest run of its blocks", { ...IDENTICAL, slow: 1 }],
      ["fails 2% of runs", { ...IDENTICAL, errors: { stable: 0, candidate: 0.02 } }],
    ] as const;
    for (const [name, effects] of scenarios) {
      const s = simulateMany(config, effects, traffic, runs, seed);
      const by = Object.entries(s.byTest)
        .map(([t, n]) => `${t} ${n}`)
        .join(", ");
      out.log(
        `${name.padEnd(34)}  ${String(s.promoted).padStart(8)}  ${`${s.rolledBack}${by ? ` (${by})` : ""}`.padEnd(28)}  ${s.meanRequests.toFixed(0).padStart(13)}  ${String(s.p95Requests).padStart(12)}`,
      );
    }
    return 0;
  },
};

/** The subcommands of `npm run rollout`, in the order `--help` lists them. */
export const ROLLOUT_COMMANDS: readonly Subcommand[] = [
  start,
  status,
  run,
  byHand("promote"),
  byHand("rollback"),
  sync,
  simulate,
];
