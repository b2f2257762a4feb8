import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { REGISTRY_FLAGS, registryFrom } from "../../registry/tool-flags.ts";
import { type Command, defineCommand } from "../cli/command.ts";
import { RefusedError, UsageError } from "../cli/errors.ts";
import { type PoolAnswer, PoolClient } from "./client.ts";
import { CONFIG_FLAGS, configOf } from "./config-flags.ts";
import { runController, syncPools } from "./controller.ts";
import { nextState, startState } from "./decide.ts";
import { type EvidenceSource, poolsEvidence, prometheusSource } from "./evidence-source.ts";
import { fleetOf } from "./fleet.ts";
import { type Pool, poolsFromFlag, poolsFromWrangler } from "./pools.ts";
import { changeInRegistry, runRegistryController, startInRegistry } from "./registry-rollouts.ts";
import { evidenceLines, promotionNote, rolloutLine } from "./report.ts";
import { simulate } from "./simulate-command.ts";

const WRANGLER_TOML = fileURLToPath(new URL("../../wrangler.toml", import.meta.url));

/** Every subcommand's pools: every region's pool gets every change. */
const POOL_FLAGS = {
  pools: {
    type: "string",
    placeholder: "URL,...",
    help: "these pools (e.g. each pod of a region, or a local stack's)",
  },
  env: {
    type: "string",
    placeholder: "NAME",
    defaultText: "every environment's regions, each once",
    help: "the regions of wrangler.toml's [env.NAME] (local: its top level, the local stack)",
  },
} as const;

const POOL_NOTE =
  "ADMIN_TOKEN (environment): the pools' admin token. With --registry the state is written to the registry, which every pod follows, and no pool is called (except to read evidence without --prometheus).";

async function poolsOf(values: { pools?: string | undefined; env?: string | undefined }): Promise<Pool[]> {
  if (values.pools !== undefined) return poolsFromFlag(values.pools);
  const { unstable_readConfig } = await import("wrangler");
  const toml = await readFile(WRANGLER_TOML, "utf8");
  const envs = [...toml.matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map((m) => m[1]!);
  const vars = (env: string | undefined) =>
    unstable_readConfig({ config: WRANGLER_TOML, ...(env ? { env } : {}) }).vars as Record<string, unknown>;
  return poolsFromWrangler(envs, vars, values.env);
}

function clientOf(): PoolClient {
  const token = process.env.ADMIN_TOKEN;
  if (!token) throw new UsageError("ADMIN_TOKEN must be set to the pools' admin token");
  return new PoolClient(token);
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

const start = defineCommand({
  name: "start",
  summary: "start a rollout of a candidate version in every pool (shadow and/or canary steps)",
  usage: "npm run rollout -- start --model NAME --candidate V [--shadow] [--steps 1,5,25,100] [options]",
  description: `Loads version V beside the version every pool serves, as the candidate of a rollout: each pool refuses a
version without a passing release gates record for its file (npm run model -- check). The rollout then
waits for its controller (npm run rollout -- run).`,
  epilog: POOL_NOTE,
  flags: {
    model: { type: "string", placeholder: "NAME", required: true, help: "the model" },
    candidate: {
      type: "string",
      placeholder: "V",
      required: true,
      help: "the version to roll out (newer than the served one)",
    },
    ...CONFIG_FLAGS,
    "min-step-seconds": { type: "number", placeholder: "S", help: "the least time a step runs" },
    ...POOL_FLAGS,
    ...REGISTRY_FLAGS,
  },
  async run(values, _args, out) {
    const { model, candidate } = values;
    const config = await configOf(values);
    const registry = registryFrom(values);
    if (registry) {
      try {
        const state = await startInRegistry(registry, model, candidate, config);
        out.log(rolloutLine(state));
        out.log(
          `written to ${registry.where}: every pod loads the candidate by itself; next: npm run rollout -- run --model ${model} --registry ...`,
        );
        return 0;
      } finally {
        registry.close();
      }
    }
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
});

const status = defineCommand({
  name: "status",
  summary: "every pool's rollouts (of one model, or of all): state, step, evidence and the tests' verdicts",
  usage: "npm run rollout -- status [--model NAME] [--json]",
  epilog: POOL_NOTE,
  flags: {
    model: {
      type: "string",
      placeholder: "NAME",
      defaultText: "every model the first pool that answers serves, those with a rollout",
      help: "this model only",
    },
    json: { type: "boolean", help: "every pool's answer and the summed evidence as JSON" },
    ...POOL_FLAGS,
  },
  async run(values, _args, out) {
    const pools = await poolsOf(values);
    const client = clientOf();
    let models = values.model !== undefined ? [values.model] : undefined;
    const unread: string[] = [];
    for (const pool of pools) {
      if (models) break;
      const index = await client.models(pool);
      if (index.ok) models = index.models;
      else unread.push(`${pool.name} (${index.error})`);
    }
    if (!models) throw new RefusedError(`no pool answered its repository index: ${unread.join(", ")}`);
    const reports = [];
    for (const model of models) {
      const answers = await client.status(pools, model);
      const fleet = fleetOf(answers);
      if (!fleet.newest && values.model === undefined) continue;
      reports.push({ model, answers, fleet });
    }
    if (values.json) {
      const json = reports.map(({ model, answers, fleet }) => ({
        model,
        state: fleet.newest ?? null,
        evidence: fleet.evidence ?? null,
        pools: answers,
      }));
      out.log(JSON.stringify(values.model !== undefined ? json[0] : json, null, 2));
      return 0;
    }
    if (reports.length === 0) out.log(`no rollout of ${models.join(", ")}`);
    for (const { model, answers, fleet } of reports) {
      out.log(fleet.newest ? rolloutLine(fleet.newest) : `${model}: no rollout`);
      for (const a of answers) {
        const workers = a.ok && a.status.workers;
        const line = a.ok
          ? `serves ${a.status.serving}${a.status.candidate ? `, candidate ${a.status.candidate} loaded` : ""}, revision ${a.status.state?.revision ?? "-"}${workers ? `, ${workers.answered} workers${workers.consistent ? "" : " (inconsistent)"}` : ""}`
          : `failed: ${a.error}`;
        out.log(`  ${a.pool.name.padEnd(16)} ${line}`);
      }
      if (fleet.newest && fleet.evidence)
        for (const line of evidenceLines(fleet.newest, fleet.evidence)) out.log(`  ${line}`);
    }
    return 0;
  },
});

/** `promote` and `rollback` by hand: the newest state, moved, sent to every pool. */
function byHand(action: "promote" | "rollback"): Command {
  return defineCommand({
    name: action,
    summary:
      action === "promote"
        ? "promote the running candidate now, in every pool"
        : "roll the running candidate back now, in every pool",
    usage: `npm run rollout -- ${action} --model NAME [--reason TEXT]`,
    epilog: POOL_NOTE,
    flags: {
      model: { type: "string", placeholder: "NAME", required: true, help: "the model" },
      reason: {
        type: "string",
        placeholder: "TEXT",
        defaultText: `"${action === "promote" ? "promoted" : "rolled back"} by hand"`,
        help: "recorded with the state",
      },
      ...POOL_FLAGS,
      ...REGISTRY_FLAGS,
    },
    async run(values, _args, out) {
      const { model } = values;
      const registry = registryFrom(values);
      if (registry) {
        try {
          const reason = values.reason ?? `${action === "promote" ? "promoted" : "rolled back"} by hand`;
          const served = await changeInRegistry(registry, model, action, reason);
          out.log(rolloutLine(served.rollout!));
          out.log(
            `${model} serves version ${served.version} (revision ${served.revision} in ${registry.where}): every pod and isolate follows`,
          );
          return 0;
        } finally {
          registry.close();
        }
      }
      const pools = await poolsOf(values);
      const client = clientOf();
      const fleet = fleetOf(await client.status(pools, model));
      const state = fleet.newest;
      if (state?.phase !== "running") throw new RefusedError(`${model} has no running rollout`);
      const reason = values.reason ?? `${action === "promote" ? "promoted" : "rolled back"} by hand`;
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
  });
}

const run = defineCommand({
  name: "run",
  summary:
    "the controller: read every pool, apply the sequential tests, move the steps; exit when promoted or rolled back",
  usage: "npm run rollout -- run --model NAME [--interval-ms 1000]",
  description: `Holds no state: every interval it reads each pool's rollout state and the evidence of the current step,
sends the newest state to pools that lag, sums the evidence, applies the sequential tests (errors, latency,
agreement) and moves the rollout: the next step, the promotion after the last, or a rollback at the first
breach. Prints each decision with its evidence. Exits 0 when promoted, 3 when rolled back.`,
  epilog: POOL_NOTE,
  flags: {
    model: { type: "string", placeholder: "NAME", required: true, help: "the model" },
    "interval-ms": { type: "number", placeholder: "MS", default: 1000, min: 10, help: "time between two reads" },
    prometheus: {
      type: "list",
      placeholder: "URL,...",
      help: "with --registry: read the evidence from these Prometheus servers (one per cluster), not from the pools",
    },
    ...POOL_FLAGS,
    ...REGISTRY_FLAGS,
  },
  async run(values, _args, out) {
    const { model, "interval-ms": intervalMs } = values;
    const registry = registryFrom(values);
    if (registry) {
      const evidence: EvidenceSource =
        values.prometheus.length > 0
          ? prometheusSource(values.prometheus)
          : poolsEvidence(clientOf(), await poolsOf(values));
      try {
        const outcome = await runRegistryController({ registry, model, evidence, intervalMs, log: out.log });
        return outcome === "promoted" ? 0 : 3;
      } finally {
        registry.close();
      }
    }
    const outcome = await runController({
      client: clientOf(),
      pools: await poolsOf(values),
      model,
      intervalMs,
      log: out.log,
    });
    return outcome === "promoted" ? 0 : 3;
  },
});

const sync = defineCommand({
  name: "sync",
  summary: "send a model's newest rollout state to the pools that lag behind it (restarted or new pods)",
  usage: "npm run rollout -- sync --model NAME",
  epilog: POOL_NOTE,
  flags: { model: { type: "string", placeholder: "NAME", required: true, help: "the model" }, ...POOL_FLAGS },
  async run(values, _args, out) {
    const { model } = values;
    const client = clientOf();
    const fleet = fleetOf(await client.status(await poolsOf(values), model));
    if (!fleet.newest) throw new RefusedError(`no pool holds a rollout of ${model}`);
    out.log(rolloutLine(fleet.newest));
    if (fleet.behind.length === 0) out.log("  every pool that answered holds it");
    const failed = await syncPools(client, fleet, out.log);
    return failed.length === 0 && fleet.unreachable.length === 0 ? 0 : 1;
  },
});

/** The subcommands of `npm run rollout`, in the order `--help` lists them. */
export const ROLLOUT_COMMANDS: readonly Command[] = [
  start,
  status,
  run,
  byHand("promote"),
  byHand("rollback"),
  sync,
  simulate,
];
