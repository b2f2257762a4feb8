import { readdirSync, readFileSync } from "node:fs";
import { probeProvider } from "../../regional/session.ts";

/** Pids whose parent is `pid` (Linux /proc). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid; field 2, the command, is in parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether this host can create CUDA sessions (then the CPU-fallback tests do not apply). */
export const cudaLoads: boolean = await probeProvider("cuda").then(
  () => true,
  () => false,
);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `check` every 20 ms until it returns true; fails after `timeoutMs` with `what`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
