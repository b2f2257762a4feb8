import { execFileSync } from "node:child_process";

/**
 * Where a benchmark's processes run. On a small machine the load generator and workerd otherwise take turns on
 * the same cores and each round's ratio swings with the scheduler: workerd (every Worker's process) gets one core
 * and the generator (with a regional pool) the other, so each side's share of the machine is fixed.
 */
export type CorePlan = { pinned: true; server: string; generator: string } | { pinned: false; why: string };

/**
 * The plan, pure: `requested` off, fewer than two cores, or no `taskset` (not Linux, util-linux missing) run
 * unpinned, saying why; otherwise the server on core 0 and the generator on core 1 (one core each whatever the
 * machine has, so runs on bigger machines measure the same thing).
 */
export function corePlan(requested: boolean, cores: number, haveTaskset: boolean): CorePlan {
  if (!requested) return { pinned: false, why: "--pin off" };
  if (cores < 2) return { pinned: false, why: `${cores} core: nothing to separate` };
  if (!haveTaskset) return { pinned: false, why: "taskset (util-linux) not found: unpinned" };
  return { pinned: true, server: "0", generator: "1" };
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

/** Pin every thread of `pid` to `cpus` (a taskset list, e.g. "0"); false when taskset refused. */
export function pinProcess(pid: number, cpus: string): boolean {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
