import { readFileSync } from "node:fs";

/**
 * How much of the machine other work took during a measurement: the machine's busy CPU time minus that of the
 * processes being measured (the server, this process and the wrk runs it has waited for), as cores. On a
 * machine shared with other work, a round where this is high is a round whose ratio says little.
 */

/** Busy clock ticks of the whole machine (everything but idle and iowait; steal counts: a VM neighbour's). */
export function parseBusyTicks(procStat: string): number | undefined {
  const line = procStat.split("\n").find((l) => l.startsWith("cpu "));
  const f = line?.trim().split(/\s+/).slice(1, 9).map(Number);
  if (!f || f.length < 8 || f.some((x) => !Number.isFinite(x))) return undefined;
  return f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!;
}

/** A process's clock ticks with those of the children it has waited for: utime stime cutime cstime of /proc/PID/stat. */
export function parseTreeTicks(pidStat: string): number | undefined {
  // After the command's closing parenthesis: state is field 3, utime 14 ... cstime 17 (1-based over the line).
  const f = pidStat
    .slice(pidStat.lastIndexOf(")") + 2)
    .split(" ")
    .slice(11, 15)
    .map(Number);
  if (f.length < 4 || f.some((x) => !Number.isFinite(x))) return undefined;
  return f.reduce((a, b) => a + b, 0);
}

export interface LoadReading {
  machine: number;
  measured: number;
}

/** Cores that other work kept busy between two readings `seconds` apart (ticks of 1/`hz` s), never below 0. */
export function otherCores(before: LoadReading, after: LoadReading, seconds: number, hz = 100): number {
  const ticks = after.machine - before.machine - (after.measured - before.measured);
  return Math.max(0, ticks / hz / seconds);
}

/** The machine's busy ticks and those of `pids` (with their waited-for children); undefined off Linux. */
export function readLoad(pids: readonly number[]): LoadReading | undefined {
  try {
    const machine = parseBusyTicks(readFileSync("/proc/stat", "utf8"));
    let measured = 0;
    for (const pid of pids) {
      const t = parseTreeTicks(readFileSync(`/proc/${pid}/stat`, "utf8"));
      if (t === undefined) return undefined;
      measured += t;
    }
    return machine === undefined ? undefined : { machine, measured };
  } catch {
    return undefined;
  }
}
