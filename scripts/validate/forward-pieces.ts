import { type ChildProcess, spawn } from "node:child_process";
import { signatureHeaders } from "../../protocol/signing.ts";
import { startNoopServer } from "../../tools/probe/floor.ts";
import { openLoop } from "../../tools/probe/load.ts";
import { type LatencyStats, latencyStats } from "../../tools/probe/summary.ts";
import type { ProxyHandle } from "./proxy-host.ts";
import type { RegionName, ValidationStack } from "./stack.ts";

/** One piece of the forward path, loaded open-loop at the run's rate (validate:latency `--decompose`). */
export interface PieceRun {
  what: string;
  region: RegionName;
  /** The proxy's one-way delay on this piece (0 without a proxy), ms. */
  delayMs: number;
  stats: LatencyStats;
  /** Latency minus the two one-way delays the piece was meant to add: what the machine and the code add. */
  overDelay: LatencyStats;
  sendLagP99Ms: number;
  /** The proxy's release lateness during the piece (DelayProxy.releaseLateness); absent without a proxy. */
  proxyLateMs?: LatencyStats;
}

/**
 * The forward path of `location` piece by piece, at `rate` for `durationS` each: its nearest region's pool
 * answering a signed `/v1/classify` of `body` directly; the same pool through its delay proxy (at the delay
 * the stack has set); a no-op server directly; and a no-op server through a new delay proxy with the same
 * delay and jitter (the proxy alone). What the edge adds on top is in the run's own split (tail-split.ts).
 */
export async function forwardPieces(
  stack: ValidationStack,
  options: { delaysMs: Record<RegionName, number>; jitterMs: number; body: string; rate: number; durationS: number },
): Promise<PieceRun[]> {
  const { delaysMs, jitterMs, body, rate, durationS } = options;
  const region = (Object.keys(delaysMs) as RegionName[]).reduce((a, b) => (delaysMs[b] < delaysMs[a] ? b : a));
  const delayMs = delaysMs[region];
  const noop = await startNoopServer(body);
  const noopProxy = await stack.startProxy({
    target: { host: "127.0.0.1", port: Number(new URL(noop.url).port) },
    delayMs,
    jitterMs,
  });
  const pieces: [string, string, number, boolean, ProxyHandle | undefined][] = [
    ["pool directly", stack.pools[region].url, 0, true, undefined],
    ["pool through its delay proxy", stack.proxies[region].url, delayMs, true, stack.proxies[region]],
    ["no-op server directly", noop.url, 0, false, undefined],
    ["no-op server through a delay proxy (the proxy alone)", noopProxy.url, delayMs, false, noopProxy],
  ];
  const out: PieceRun[] = [];
  try {
    for (const [what, origin, delay, signed, proxy] of pieces) {
      // Signed once per piece: a signature holds for 30 s either way (protocol/signing.ts).
      const headers = {
        "content-type": "application/json",
        ...(signed ? await signatureHeaders(stack.secret, { method: "POST", path: "/v1/classify", body }) : {}),
      };
      const latencies: number[] = [];
      await proxy?.releaseLateness();
      const { summary } = await openLoop({
        origin,
        rate,
        durationS,
        next: () => ({ path: "/v1/classify", headers, body }),
        onResponse: (response) => {
          if (response.status === 200) latencies.push(response.latencyMs);
        },
      });
      if (latencies.length === 0) throw new Error(`--decompose: ${what} answered nothing with 200`);
      out.push({
        what,
        region,
        delayMs: delay,
        stats: summary.latency,
        overDelay: latencyStats(latencies.map((ms) => ms - 2 * delay)),
        sendLagP99Ms: summary.sendLagMs.p99,
        ...(proxy ? { proxyLateMs: await proxy.releaseLateness() } : {}),
      });
    }
  } finally {
    await noopProxy.close();
    await noop.close();
  }
  return out;
}

/** `n` processes spinning on the CPU until `stop()`: the machine with busy cores (`--busy-cores`). */
export function busyCores(n: number): { stop(): void } {
  const children: ChildProcess[] = [];
  for (let i = 0; i < n; i++) {
    children.push(spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
  }
  return {
    stop() {
      for (const child of children) child.kill("SIGKILL");
    },
  };
}
