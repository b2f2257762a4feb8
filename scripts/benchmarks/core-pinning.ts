import { execFileSync } from "node:child_process";

/**
 * Where a benchmark's processes run. On a small machine the load generator and workerd otherwise take turns on
 * the same cores and each round's ratio swings with the scheduler: workerd (every Worker's process) gets one core
 * and the generator (with a regional pool) another, so each side's share of the machine is fixed.
 */
export type CorePlan = { pinned: true; server: string; generator: string } | { pinned: false; why: string };

/**
 * The plan, pure: `requested` off, fewer than two allowed cores, or no `taskset` (not Linux, util-linux missing)
 * run unpinned, saying why; otherwise the server on the first allowed core and the generator on the second (one
 * core each whatever the machine has, so runs on bigger machines measure the same thing).
 */
export function corePlan(requested: boolean, allowed: readonly number[], haveTaskset: boolean): CorePlan {
  if (!requested) return { pinned: false, why: "--pin off" };
  if (!haveTaskset) return { pinned: false, why: "taskset (util-linux) not found: unpinned" };
  if (allowed.length < 2) return { pinned: false, why: `${allowed.length} core allowed: nothing to separate` };
  return { pinned: true, server: String(allowed[0]), generator: String(allowed[1]) };
}

/** A CPU list as taskset and /proc write it (`0-3,6`) as the core numbers; [] when it is not one. */
export function parseCpuList(list: string): number[] {
  const cores: number[] = [];
  for (const part of list.trim().split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return [];
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let c = from; c <= to; c++) cores.push(c);
  }
  return cores;
}

/** Whether `taskset` can be run here. */
export function haveTaskset(): boolean {
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The CPU list `pid` may run on (`taskset -c -p`: "pid 1's current affinity list: 0,1"); undefined if unknown. */
export function affinity(pid: number): string | undefined {
  try {
    const out = execFileSync("taskset", ["-c", "-p", String(pid)], { encoding: "utf8" });
    return out.slice(out.lastIndexOf(":") + 1).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Pin every thread of `pid` to `cpus` (a taskset list, e.g. "0"); false when taskset refused. */
export function pinProcess(pid: number, cpus: string): boolean {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
