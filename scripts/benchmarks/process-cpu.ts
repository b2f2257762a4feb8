import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** User and kernel CPU seconds a process has used so far, all its threads (Linux /proc; clock ticks of 10 ms). */
export function cpuSeconds(pid: number): { user: number; kernel: number } {
  return statCpu(`/proc/${pid}/stat`);
}

/** The same for a process's main thread alone (for Node, its event loop). */
export function mainThreadCpuSeconds(pid: number): { user: number; kernel: number } {
  return statCpu(`/proc/${pid}/task/${pid}/stat`);
}

function statCpu(path: string): { user: number; kernel: number } {
  const stat = readFileSync(path, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
  return { user: Number(fields[11]) / 100, kernel: Number(fields[12]) / 100 };
}

/**
 * The process listening on `url`'s port on 127.0.0.1 (for workerd, which Miniflare starts without telling
 * its pid), from `ss -ltnp` (iproute2); undefined when it cannot be told.
 */
export function listeningPid(url: string): number | undefined {
  const port = new URL(url).port;
  try {
    const out = execFileSync("ss", ["-Hltnp", `sport = :${port}`], { encoding: "utf8" });
    const pid = /pid=(\d+)/.exec(out)?.[1];
    return pid === undefined ? undefined : Number(pid);
  } catch {
    return undefined;
  }
}

/**
 * CPU time a process's threads have run so far, in ms, from each thread's `/proc/<pid>/task/<tid>/schedstat`
 * (nanoseconds on CPU): precise enough for one request, where `/proc/<pid>/stat` counts 10 ms ticks.
 */
export function cpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e6;
}
