import { readFileSync } from "node:fs";

/** The machine's CPU time so far, all cores together, in clock ticks: the total and what the hypervisor took. */
export interface MachineTicks {
  total: number;
  steal: number;
}

/**
 * The aggregate `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal (guest time is already
 * inside user and nice).
 */
export function parseProcStat(stat: string): MachineTicks | undefined {
  const line = stat.split("\n").find((l) => l.startsWith("cpu "));
  const fields = line?.trim().split(/\s+/).slice(1, 9).map(Number);
  if (!fields || fields.length < 8 || fields.some((f) => !Number.isFinite(f))) return undefined;
  return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7]! };
}

/** Share of the machine's CPU time the hypervisor took between two readings (a VM's neighbours); undefined without both. */
export function stealShare(before: MachineTicks | undefined, after: MachineTicks | undefined): number | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  return (after.steal - before.steal) / (after.total - before.total);
}

/** This machine's ticks (Linux); undefined where /proc/stat cannot be read. */
export function machineTicks(): MachineTicks | undefined {
  try {
    return parseProcStat(readFileSync("/proc/stat", "utf8"));
  } catch {
    return undefined;
  }
}
