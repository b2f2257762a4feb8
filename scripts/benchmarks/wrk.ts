import { spawn, spawnSync } from "node:child_process";

/** One HTTP request a wrk script sends: body bytes (text or binary) and headers. */
export interface WrkRequest {
  method: "POST";
  path: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** A Lua string literal holding exactly these bytes (wrk's Lua strings are byte strings). */
function luaBytes(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    // Always three digits: Lua reads a \0 followed by the character 5 as one escape, \05.
    out +=
      b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, "0")}`;
  }
  return `${out}"`;
}

/**
 * A wrk script that sends `requests` in turn (one per request), and at the end prints one line:
 * `RESULT requests seconds p50 p95 p99 (ms) socket-errors non-2xx`.
 */
export function wrkScript(requests: readonly WrkRequest[]): string {
  const encoder = new TextEncoder();
  const items = requests.map((r) => {
    const headers = Object.entries(r.headers)
      .map(([k, v]) => `[${luaBytes(encoder.encode(k))}] = ${luaBytes(encoder.encode(v))}`)
      .join(", ");
    const body = typeof r.body === "string" ? encoder.encode(r.body) : r.body;
    return `  { ${luaBytes(encoder.encode(r.path))}, { ${headers} }, ${luaBytes(body)} },`;
  });
  return `local requests = {\n${items.join("\n")}\n}
local i = 0
request = function()
  i = i % #requests + 1
  local r = requests[i]
  return wrk.format("POST", r[1], r[2], r[3])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %.6f %.3f %.3f %.3f %d %d\\n", summary.requests, summary.duration / 1e6,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
`;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Socket errors and timeouts. */
  errors: number;
  non2xx: number;
}

/** Whether wrk is installed (Debian: `sudo apt-get install wrk`). */
export function haveWrk(): boolean {
  return !spawnSync("wrk", ["--version"]).error;
}

/** wrk with one thread (so the generator takes as little of the cores as it can), closed loop. */
export function wrk(
  url: string,
  options: { connections: number; seconds: number; script: string },
): Promise<WrkResult> {
  const args = [
    "-t1",
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    "--timeout",
    "5s",
    "-s",
    options.script,
    url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn("wrk", args);
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.on("error", reject);
    // "close", not "exit": a process can exit before its stdout has been read to the end (with four wrk at once,
    // an empty `out` here once failed a run).
    child.on("close", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code !== 0 || !line) return reject(new Error(`wrk exited ${code}: ${out}`));
      const [requests, seconds, p50Ms, p95Ms, p99Ms, errors, non2xx] = line.split(" ").slice(1).map(Number) as number[];
      resolve({
        requests: requests!,
        seconds: seconds!,
        reqPerSec: requests! / seconds!,
        p50Ms: p50Ms!,
        p95Ms: p95Ms!,
        p99Ms: p99Ms!,
        errors: errors!,
        non2xx: non2xx!,
      });
    });
  });
}
