import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

export interface RegionalPoolOptions {
  region: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default: the repository's `models/`. */
  modelsDir?: string;
  /** Default 1: local stacks run several pools on few cores. */
  workers?: number;
  /** Added to this process's environment (e.g. REGIONAL_SHARED_SECRET, ADMIN_TOKEN, REGIONAL_DELAY_MS). */
  env?: Record<string, string>;
  /** More CLI flags, e.g. `["--delay-ms", "20"]`. The pool serves no gRPC unless they hold `--grpc-port`. */
  extraArgs?: string[];
  /** Milliseconds to wait for the pool to be ready. Default 60000. */
  readyTimeoutMs?: number;
  /** Receives each line the pool logs (JSON). Default: kept only for error messages. */
  onLog?: (line: string) => void;
  /** Benchmarks: another entry point taking the same flags (scripts/benchmarks/regional-baselines.ts). */
  script?: string;
  /** Working directory of the process. Default: this repository's root. */
  cwd?: string;
}

export interface RegionalPool {
  url: string;
  port: number;
  region: string;
  pid: number;
  /** Resolves with the exit code once the process has exited (null when a signal ended it). */
  exited: Promise<number | null>;
  /** SIGTERM, then wait for the pool to drain and exit (SIGKILL after 30 s). */
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("../../regional/main.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
  return child.exitCode;
}

/**
 * Start one regional pool as a child process (`node regional/main.ts`, the same as
 * `npm run regional`), on 127.0.0.1, and resolve once it logs `ready` (every worker's models loaded and warmed
 * up) and `GET /v2/health/ready` answers 200.
 */
export async function startRegionalPool(opts: RegionalPoolOptions): Promise<RegionalPool> {
  const { region, port = 0, modelsDir, workers = 1, env = {}, extraArgs = [], readyTimeoutMs = 60_000 } = opts;
  const args = [opts.script ?? MAIN, "--region", region, "--port", String(port), "--host", "127.0.0.1"];
  // Off unless asked for: several pools on one machine would all want the default gRPC port.
  args.push("--workers", String(workers), "--grpc-port", "off");
  if (modelsDir) args.push("--models", modelsDir);
  args.push(...extraArgs);
  const child = spawn(process.execPath, args, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });

  const tail: string[] = [];
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    opts.onLog?.(line);
  };
  let readyPort: number | undefined;
  let buffered = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      keep(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === "ready" && typeof entry.port === "number") readyPort = entry.port;
      } catch {
        // Not one of the pool's JSON lines (onnxruntime writes its own): kept for errors only.
      }
      nl = buffered.indexOf("\n");
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    for (const line of chunk.split("\n")) if (line.trim()) keep(line);
  });

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited(child);
    clearTimeout(killer);
  };
  const fail = async (why: string): Promise<never> => {
    await stop();
    throw new Error(`regional pool ${region}: ${why}\n${tail.join("\n")}`);
  };

  const deadline = Date.now() + readyTimeoutMs;
  while (readyPort === undefined) {
    if (child.exitCode !== null || child.signalCode !== null) {
      return fail(`exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    }
    if (Date.now() > deadline) return fail(`not ready after ${readyTimeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = `http://127.0.0.1:${readyPort}`;
  const res = await fetch(`${url}/v2/health/ready`).catch((err: Error) => err);
  if (res instanceof Error || res.status !== 200) {
    return fail(`logged ready but ${url}/v2/health/ready answered ${res instanceof Error ? res.message : res.status}`);
  }
  return { url, port: readyPort, region, pid: child.pid!, exited: exited(child), stop };
}
