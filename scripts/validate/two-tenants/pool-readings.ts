/**
 * The two-tenant scenario's pool: pinned to a core of its own, and its requests per tenant read from its metrics.
 */

import { descendants } from "../../../tools/local-stack/processes.ts";
import { affinity, corePlan, haveTaskset, parseCpuList, pinProcess } from "../../benchmarks/core-pinning.ts";
import type { RegionalPool } from "../../stack/regional-pool.ts";

/** Pin the pool (and its children) to one core and this process to another; undo() puts this process back. */
export function pinCores(pool: RegionalPool, wanted: boolean): { description: string; undo: () => void } {
  const allowed = affinity(process.pid) ?? "";
  const plan = corePlan(wanted, parseCpuList(allowed), haveTaskset());
  if (!plan.pinned) return { description: `unpinned (${plan.why})`, undo: () => {} };
  const ok = [pool.pid, ...descendants(pool.pid)].every((pid) => pinProcess(pid, plan.server));
  if (!ok || !pinProcess(process.pid, plan.generator)) {
    pinProcess(process.pid, allowed);
    return { description: "unpinned (taskset refused)", undo: () => {} };
  }
  return {
    description: `the pool on core ${plan.server}, the generators (A's process, B's flood) on core ${plan.generator}`,
    undo: () => pinProcess(process.pid, allowed),
  };
}

/** The `edgecascade_tenant_requests_total` series of a pool's metrics text, by tenant and outcome. */
export function tenantCounts(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const m of text.matchAll(/^edgecascade_tenant_requests_total\{tenant="([^"]+)",outcome="([^"]+)"\} (\S+)$/gm)) {
    out[m[1]!] ??= {};
    out[m[1]!]![m[2]!] = Number(m[3]);
  }
  for (const m of text.matchAll(/^edgecascade_tenant_rows_total\{tenant="([^"]+)",share="([^"]+)"\} (\S+)$/gm)) {
    out[m[1]!] ??= {};
    out[m[1]!]![`rows ${m[2]}`] = Number(m[3]);
  }
  // The pool's own p99 of each tenant's requests (receipt to answer), the upper bound of its histogram bucket, ms.
  const buckets = new Map<string, [number, number][]>();
  for (const m of text.matchAll(
    /^edgecascade_tenant_request_duration_seconds_bucket\{le="([^"]+)",tenant="([^"]+)"\} (\S+)$/gm,
  )) {
    const list = buckets.get(m[2]!) ?? [];
    list.push([m[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[3])]);
    buckets.set(m[2]!, list);
  }
  for (const [tenant, list] of buckets) {
    const total = list.at(-1)?.[1] ?? 0;
    const le = list.find(([, n]) => n >= 0.99 * total)?.[0];
    if (total > 0 && le !== undefined) {
      out[tenant] ??= {};
      out[tenant]!["pool p99 ≤ ms"] = le * 1000;
    }
  }
  return out;
}
