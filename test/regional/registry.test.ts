import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StepEvidence } from "../../protocol/rollout/evidence.ts";
import { evidenceCounts } from "../../protocol/rollout/evidence-counts.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { freePort } from "../../tools/local-stack/processes.ts";
import { prometheusEvidence } from "../../tools/rollout/prometheus-evidence.ts";
import { heldout } from "../support/heldout.ts";
import { until } from "../support/regional-process.ts";
import { type TestRegistry, tamper, testRegistry } from "../support/registry.ts";

/**
 * A pool following the model registry (regional/registry/): it serves what served.json says from start, takes a
 * rollout written there with no call reaching it, refuses a tampered file (counted; the old version keeps
 * serving), comes back from a restart serving the promoted version, and swaps back on a rollback of it.
 */
let reg: TestRegistry;
let pool: RegionalPool | undefined;
const logs: string[] = [];

const start = (...args: string[]) =>
  startRegionalPool({
    region: "registry",
    env: { MODEL_PUBLIC_KEY: reg.signer.publicKey, ADMIN_TOKEN: "registry-test" },
    extraArgs: ["--registry", reg.registry.url, "--registry-poll-ms", "150", ...args],
    onLog: (line) => logs.push(line),
  });

async function served(model: string): Promise<string[]> {
  const res = await fetch(`${pool!.url}/v2/models/${model}`);
  return ((await res.json()) as { versions: string[] }).versions;
}

interface IndexRow {
  name: string;
  version?: string;
  state: string;
  candidate?: true;
}

async function index(): Promise<IndexRow[]> {
  const res = await fetch(`${pool!.url}/v2/repository/index`, {
    method: "POST",
    headers: { authorization: "Bearer registry-test" },
  });
  return (await res.json()) as IndexRow[];
}

async function metric(pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${pool!.url}/metrics`)).text();
  const line = text.split("\n").find((l) => pattern.test(l));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

beforeAll(async () => {
  reg = await testRegistry();
  pool = await start();
}, 60_000);

afterAll(async () => {
  await pool?.stop();
  await reg?.close();
});

describe("a pool following the registry", () => {
  it("serves every published model at its served version, from files it checked", async () => {
    expect(await served("digits")).toEqual(["1"]);
    expect(await served("digits-edge")).toEqual(["1"]);
    expect(await served("breast-cancer")).toEqual(["1"]);
    expect(await metric(/^edgecascade_registry_served_revision\{model="digits"\}/)).toBe(1);
  });

  it("refuses a tampered candidate and counts it; version 1 keeps serving until the file is right", async () => {
    expect((await reg.model("publish", "--name", "digits", "--version", "2")).code).toBe(0);
    const file = join(reg.models.dir, "digits", "2", "model.onnx");
    const good = readFileSync(file);
    const bad = Uint8Array.from(good);
    bad[bad.length - 9]! ^= 0x01;
    await tamper(reg.registry, `${reg.registry.prefix}/digits/2/model.onnx`, bad);
    const started = await reg.rollout("start", "--model", "digits", "--candidate", "2", "--steps", "50,100");
    expect(started.code, started.lines.join("\n")).toBe(0);
    await until(
      "the refusal is counted",
      async () => (await metric(/^edgecascade_registry_refusals_total\{model="digits",reason="checksum"\}/)) >= 1,
    );
    expect(logs.some((l) => l.includes("registry object refused") && l.includes("checksum mismatch"))).toBe(true);
    expect(await served("digits")).toEqual(["1"]);
    expect((await index()).filter((e) => e.name === "digits" && e.candidate)).toEqual([]);
    // The publisher puts the right file back: the pool takes the rollout on at its next poll.
    await tamper(reg.registry, `${reg.registry.prefix}/digits/2/model.onnx`, good);
    await until("the candidate loads", async () =>
      (await index()).some((e) => e.name === "digits" && e.version === "2" && e.candidate),
    );
  });

  it("exports the step's evidence that Prometheus scrapes and the controller's query sums, equal to its own", async () => {
    // A real Prometheus scraping the pool every second, as each cluster's scrapes its pods (deploy/prometheus/cluster.yml).
    const dir = mkdtempSync(join(tmpdir(), "edgecascade-prometheus-"));
    const port = await freePort();
    writeFileSync(
      join(dir, "prometheus.yml"),
      `global: { scrape_interval: 1s }\nscrape_configs:\n  - job_name: pool\n    static_configs: [{ targets: ["${new URL(pool!.url).host}"] }]\n`,
    );
    const prometheus: ChildProcess = spawn(
      "prometheus",
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: "ignore" },
    );
    try {
      for (const row of heldout.rows.slice(0, 60)) {
        const res = await fetch(`${pool!.url}/v1/classify`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "digits", inputs: row.input }),
        });
        expect(res.status).toBe(200);
      }
      const admin = async () => {
        const res = await fetch(`${pool!.url}/v2/repository/models/digits/rollout`, {
          headers: { authorization: "Bearer registry-test" },
        });
        return (await res.json()) as { state: RolloutState; evidence: StepEvidence };
      };
      const { state } = await admin();
      expect(state).toMatchObject({ phase: "running", candidate: "2", step: 0 });
      let scraped: StepEvidence | undefined;
      let own: StepEvidence | undefined;
      await until(
        "Prometheus holds the pool's evidence",
        async () => {
          own = (await admin()).evidence;
          scraped = await prometheusEvidence(`http://127.0.0.1:${port}`, state).catch(() => undefined);
          return (
            scraped !== undefined && JSON.stringify(evidenceCounts(scraped)) === JSON.stringify(evidenceCounts(own))
          );
        },
        30_000,
      );
      expect(own!.live.stable + own!.live.candidate).toBe(60);
      expect(scraped!.live.candidate).toBeGreaterThan(0);
    } finally {
      prometheus.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);

  it("swaps in the promoted version, keeps it across a restart, and swaps back on its rollback", async () => {
    expect((await reg.rollout("promote", "--model", "digits")).code).toBe(0);
    await until("version 2 serves", async () => (await served("digits"))[0] === "2");
    // The edge variant calibrated against it follows, in the same pass.
    await until("digits-edge 2 serves", async () => (await served("digits-edge"))[0] === "2");
    await pool!.stop();
    // Back with its models loaded on demand: the follower loads nothing; a model's first request loads the
    // version the registry serves (the follower wrote it into the config the load reads).
    pool = await start("--load-policy", "on-demand");
    const rows = async (name: string) => (await index()).filter((e) => e.name === name).map((e) => e.state);
    expect(await rows("digits")).toEqual(["UNAVAILABLE"]);
    expect(await served("digits")).toEqual(["2"]);
    const answer = await fetch(`${pool!.url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "digits", inputs: heldout.rows[0]!.input }),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ model: "digits", version: "2" });
    const back = await reg.rollout("rollback", "--model", "digits", "--reason", "worse in production");
    expect(back.code, back.lines.join("\n")).toBe(0);
    // digits is loaded now: the follower swaps version 1 in (within the budget, unpinned); digits-edge is not,
    // and is left to its first request.
    await until("version 1 serves again", async () => (await served("digits"))[0] === "1");
    const ready = (await index()).filter((e) => e.name === "digits" && e.state === "READY");
    expect(ready.map((e) => e.version)).toEqual(["1"]);
    await until("digits-edge 1 serves again", async () => (await served("digits-edge"))[0] === "1");
    expect(await rows("digits-edge")).toEqual(["UNAVAILABLE"]);
    // Since the restart: one load on demand (the request), and the rollback's loads by the registry, of the
    // resident model alone. digits-edge, not loaded, was left to its first request. (A second registry pass once
    // loaded digits' version 1 again, on Node 22 in CI, not reproduced since; why is an open item: one registry load
    // or more, every one of digits, none of digits-edge.)
    const loads = (model: string) =>
      metric(new RegExp(`^edgecascade_model_loads_total\\{(?=[^}]*model="${model}")(?=[^}]*outcome="success")`));
    expect(await loads("digits-edge")).toBe(0);
    expect(await metric(/^edgecascade_model_load_duration_seconds_count\{trigger="demand"\}/)).toBe(1);
    const registryLoads = await metric(/^edgecascade_model_load_duration_seconds_count\{trigger="registry"\}/);
    expect(registryLoads).toBeGreaterThanOrEqual(1);
    expect(await loads("digits")).toBe(1 + registryLoads);
  });
});
