import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, renameSync } from "node:fs";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { childPids, isRunning } from "../support/processes.ts";
import { cudaLoads, until } from "../support/regional-process.ts";
import {
  addVersion,
  classifyRows,
  copyModels,
  get,
  metric,
  post,
  TOLERANCE,
  worstDifference,
} from "../support/regional-server.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ["regional/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });

const started: RegionalPool[] = [];
async function pool(opts: Parameters<typeof startRegionalPool>[0]): Promise<RegionalPool & { logs: string[] }> {
  const logs: string[] = [];
  const p = await startRegionalPool({ ...opts, onLog: (line) => logs.push(line) });
  started.push(p);
  return Object.assign(p, { logs });
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()));
});

describe("command line", () => {
  it("--help documents every option with its environment variable, and exits 0", () => {
    const res = cli(["--help"]);
    expect(res.status).toBe(0);
    for (const [flag, env] of [
      ["--port", "REGIONAL_PORT"],
      ["--grpc-port", "REGIONAL_GRPC_PORT"],
      ["--region", "REGIONAL_REGION"],
      ["--models", "REGIONAL_MODELS"],
      ["--workers", "REGIONAL_WORKERS"],
      ["--ep", "REGIONAL_EP"],
      ["--max-batch", "REGIONAL_MAX_BATCH"],
      ["--max-queue-delay-us", "REGIONAL_MAX_QUEUE_DELAY_US"],
      ["--max-queue", "REGIONAL_MAX_QUEUE"],
      ["--queue-full-status", "REGIONAL_QUEUE_FULL_STATUS"],
      ["--delay-ms", "REGIONAL_DELAY_MS"],
      ["--shutdown-delay-ms", "REGIONAL_SHUTDOWN_DELAY_MS"],
    ]) {
      expect(res.stdout).toMatch(new RegExp(`${flag} \\S+ +${env} `));
    }
    expect(res.stdout).toContain("REGIONAL_SHARED_SECRET");
    expect(res.stdout).toContain("ADMIN_TOKEN");
  });

  it.each([
    [["--workers", "0"], {}, '--workers (REGIONAL_WORKERS) must be an integer from 1 to 256, got "0"'],
    [
      [],
      { REGIONAL_MAX_BATCH: "lots" },
      '--max-batch (REGIONAL_MAX_BATCH) must be an integer from 1 to 4096, got "lots"',
    ],
    [["--queue-full-status", "500"], {}, "--queue-full-status (REGIONAL_QUEUE_FULL_STATUS) must be 429 or 503"],
    [["--region", "US East"], {}, "--region (REGIONAL_REGION) must be lowercase letters"],
    [["--bogus"], {}, "unknown flag --bogus"],
  ])("%j %j: exits 2 naming the field", (args, env, message) => {
    const res = cli(args, env);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain(message);
  });

  it("options come from the environment; flags win", async () => {
    const p = await pool({
      region: "flag-wins",
      env: { REGIONAL_REGION: "from-env", REGIONAL_DELAY_MS: "25", REGIONAL_EP: "cpu" },
    });
    const meta = await get(`${p.url}/v2`);
    expect(meta.body).toMatchObject({ region: "flag-wins", executionProvider: "cpu" });
    const res = await post(`${p.url}/v1/classify`, classifyRows(0));
    expect(res.body.servedBy).toBe("regional:flag-wins");
    expect(res.headers["server-timing"]).toMatch(/delay;dur=25/);
    const warnings = p.logs.map((l) => JSON.parse(l)).filter((l) => l.level === "warn");
    expect(warnings.filter((l) => l.msg.startsWith("SIMULATION SETTINGS ON (--delay-ms 25)"))).toHaveLength(1);
  });

  it("a missing model repository fails at start, naming the directory", () => {
    const res = cli(["--models", "/nonexistent/models", "--ep", "cpu", "--workers", "1"]);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("model repository /nonexistent/models");
  });
});

describe.skipIf(cudaLoads)("execution provider on a host without the CUDA provider", () => {
  it("--ep auto falls back to cpu, says why in the log, and reports cpu in /v2 and metrics", async () => {
    const p = await pool({ region: "auto", extraArgs: ["--ep", "auto"] });
    expect((await get(`${p.url}/v2`)).body.executionProvider).toBe("cpu");
    const text = (await get(`${p.url}/metrics`)).body;
    expect(text).toContain('edgecascade_execution_provider{provider="cpu"} 1');
    const lines = p.logs.map((l) => JSON.parse(l));
    const fallback = lines.find((l) => l.level === "warn");
    expect(fallback.msg).toBe("execution provider: cpu (--ep auto: cuda did not load)");
    expect(fallback.reason).toMatch(/^cuda: the CUDA provider is not installed \(.*libonnxruntime_providers_cuda\.so/);
  });

  it("--ep cuda refuses to start rather than quietly serving from the CPU", () => {
    const res = cli(["--ep", "cuda", "--workers", "1", "--port", "0", "--grpc-port", "off"]);
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/--ep cuda: no execution provider could create a session \(cuda: .+\)/);
  });

  it("with workers, a worker that cannot start stops the pool (exit 1) instead of being restarted in a loop", () => {
    const res = cli(["--ep", "cuda", "--workers", "2", "--port", "0", "--grpc-port", "off"]);
    expect(res.status).toBe(1);
    const lines = res.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.msg === "a worker failed to start; stopping").length).toBeGreaterThanOrEqual(1);
    expect(lines.some((l) => l.msg === "a worker died; starting a replacement")).toBe(false);
  });
});

describe("signals", () => {
  it("SIGTERM: readiness turns false, new connections are refused, every accepted request completes, exit 0", async () => {
    const p = await pool({
      region: "drain",
      extraArgs: ["--ep", "cpu", "--delay-ms", "5000", "--shutdown-delay-ms", "1500"],
    });
    const agent = new Agent({ connections: 10 });
    const inFlight = Array.from({ length: 5 }, (_, i) =>
      request(`${p.url}/v1/classify`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(classifyRows(i)),
        dispatcher: agent,
      }),
    );
    const pending = async () =>
      metric((await get(`${p.url}/metrics`)).body, "edgecascade_inference_pending_requests", { model: "digits" });
    await until("5 requests in flight", async () => (await pending()) === 5);

    process.kill(p.pid, "SIGTERM");
    await until(
      "readiness 503",
      async () => (await get(`${p.url}/v2/health/ready`).catch(() => ({ status: 0 }))).status === 503,
    );
    const refused = () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(p.port, "127.0.0.1");
        socket.on("connect", () => {
          socket.destroy();
          resolve(false);
        });
        socket.on("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
      });
    await until("new connections refused", refused);
    expect(isRunning(p.pid)).toBe(true);

    const answers = await Promise.all(inFlight);
    for (const [i, res] of answers.entries()) {
      expect(res.statusCode).toBe(200);
      const body = (await res.body.json()) as { predictions: { scores: number[] }[] };
      expect(worstDifference(body.predictions, i)).toBeLessThanOrEqual(TOLERANCE);
    }
    expect(await p.exited).toBe(0);
    await agent.close();
  });

  it("SIGHUP reloads every model from disk", async () => {
    const models = copyModels();
    try {
      const p = await pool({ region: "hup", modelsDir: models.dir, extraArgs: ["--ep", "cpu"] });
      expect((await post(`${p.url}/v1/classify`, classifyRows(0))).body.version).toBe("1");
      await addVersion(models.dir, "digits", "2", { makeDefault: true });
      process.kill(p.pid, "SIGHUP");
      await until(
        "version 2 served",
        async () => (await post(`${p.url}/v1/classify`, classifyRows(0))).body.version === "2",
      );
      const res = await post(`${p.url}/v1/classify`, classifyRows(5));
      expect(worstDifference(res.body.predictions, 5)).toBeLessThanOrEqual(TOLERANCE);
      expect(p.logs.some((l) => l.includes('"msg":"SIGHUP: reloading every model from disk"'))).toBe(true);
    } finally {
      models.remove();
    }
  });

  it("SIGHUP reloading the serving version keeps it ready; a failed reload is logged and the pool serves on", async () => {
    const models = copyModels();
    const away = `${models.dir}.away`;
    try {
      const p = await pool({ region: "hup", modelsDir: models.dir, extraArgs: ["--ep", "cpu"] });
      let exited = false;
      void p.exited.then(() => {
        exited = true;
      });
      // The pool's JSON lines (a crash would write its stack to stderr, which onLog also gets).
      const logged = () => p.logs.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
      const ready = async () =>
        metric((await get(`${p.url}/metrics`)).body, "edgecascade_model_ready", { model: "digits", version: "1" });
      const loads = () => logged().filter((l) => l.msg === "model version serving" && l.name === "digits").length;

      process.kill(p.pid, "SIGHUP");
      await until("digits reloaded", () => loads() === 2);
      expect(await ready()).toBe(1);

      // A rollout replacing the directory: for a moment there is none.
      renameSync(models.dir, away);
      process.kill(p.pid, "SIGHUP");
      await until(
        "the reload failure logged, or an exit",
        () => logged().some((l) => l.msg === "SIGHUP: reload failed; the serving versions keep serving") || exited,
      );
      expect(exited, p.logs.slice(-5).join("\n")).toBe(false);
      const failure = logged().find((l) => l.msg === "SIGHUP: reload failed; the serving versions keep serving");
      expect(failure).toMatchObject({
        level: "error",
        reason: expect.stringContaining(`model repository ${models.dir}: ENOENT`),
      });
      const res = await post(`${p.url}/v1/classify`, classifyRows(4));
      expect(res).toMatchObject({ status: 200, body: { version: "1" } });
      expect(worstDifference(res.body.predictions, 4)).toBeLessThanOrEqual(TOLERANCE);
      expect((await get(`${p.url}/v2/health/ready`)).status).toBe(200);
      expect(await ready()).toBe(1);
    } finally {
      if (existsSync(away)) renameSync(away, models.dir);
      models.remove();
    }
  });
});

describe("--workers 2", () => {
  it("is ready only while every worker is: a replacement worker's start-up makes the whole pod not ready", async () => {
    const p = await pool({ region: "both", workers: 2, extraArgs: ["--ep", "cpu"] });
    expect((await get(`${p.url}/v2/health/ready`)).status).toBe(200);
    const [victim] = childPids(p.pid);
    process.kill(victim!, "SIGKILL");
    // A connection the primary handed to the killed worker is never answered: each poll gives up after 1 s.
    const ready = async () => {
      const res = await fetch(`${p.url}/v2/health/ready`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
      return res && { status: res.status, reasons: ((await res.json()) as { reasons?: string[] }).reasons };
    };
    let notReady: Awaited<ReturnType<typeof ready>>;
    // The surviving worker answers for the pod while the replacement starts, not for itself alone...
    await until(
      "not ready",
      async () => {
        notReady = await ready();
        return notReady?.status === 503;
      },
      30_000,
    );
    expect(notReady).toEqual({ status: 503, reasons: ["1 of 2 workers of this pool are ready"] });
    // ...until the replacement is ready too.
    await until("ready again", async () => (await ready())?.status === 200, 30_000);
    expect(childPids(p.pid)).toHaveLength(2);
  });

  it("SIGTERM while the workers start up still ends with exit 0 and no worker left", async () => {
    const primary = spawn(
      process.execPath,
      [
        ...["regional/main.ts", "--workers", "2", "--port", "0", "--grpc-port", "off"],
        ...["--host", "127.0.0.1", "--ep", "cpu", "--region", "x"],
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let workers: number[] = [];
    let out = "";
    primary.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    primary.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      // A worker has begun its start-up (it logs the provider before loading any model): stop the pool now.
      if (workers.length === 0 && out.includes('"msg":"execution provider')) {
        workers = childPids(primary.pid!);
        process.kill(primary.pid!, "SIGTERM");
      }
    });
    const [code] = (await once(primary, "exit")) as [number | null];
    expect(workers.length).toBeGreaterThan(0);
    expect(code, out).toBe(0);
    for (const pid of workers) expect(isRunning(pid)).toBe(false);
  });

  it.each([
    ["SIGTERM to the primary", (pid: number) => process.kill(pid, "SIGTERM")],
    [
      "Ctrl-C (SIGINT to every process of the group)",
      (pid: number) => {
        for (const child of childPids(pid)) process.kill(child, "SIGINT");
        process.kill(pid, "SIGINT");
      },
    ],
  ])("two processes share the port, /metrics sums both, and %s stops all of them with exit 0", async (_, stop) => {
    const p = await pool({ region: "both", workers: 2, extraArgs: ["--ep", "cpu"] });
    const workers = childPids(p.pid);
    expect(workers).toHaveLength(2);

    // Fresh connections, so the primary hands them to both workers in turn.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(`${p.url}/v1/classify`, classifyRows(i), { connection: "close" })),
    );
    answers.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(worstDifference(res.body.predictions, i)).toBeLessThanOrEqual(TOLERANCE);
    });
    const text = (await get(`${p.url}/metrics`, { connection: "close" })).body;
    // Each worker loaded digits once: the sum shows both workers' metrics are in one answer.
    expect(metric(text, "edgecascade_model_loads_total", { model: "digits", outcome: "success" })).toBe(2);
    expect(metric(text, "edgecascade_inference_requests_total", { model: "digits", outcome: "success" })).toBe(20);
    // Triton's statistics are summed the same way (regional/model-stats.ts).
    const stats = (await get(`${p.url}/v2/models/digits/stats`, { connection: "close" })).body;
    expect(stats.model_stats).toHaveLength(1);
    expect(stats.model_stats[0]).toMatchObject({ name: "digits", version: "1", inference_count: 20 });
    expect(stats.model_stats[0].inference_stats.success.count).toBe(20);

    stop(p.pid);
    expect(await p.exited).toBe(0);
    for (const pid of workers) expect(isRunning(pid)).toBe(false);
  });
});
