/**
 * The two-tenant scenario's section of bench/overload.md.
 */

import { DEADLINE_HEADER } from "../../../protocol/headers.ts";
import type { TenantTally } from "../tenant-verdict.ts";
import { DEVICE, EDGE_BUDGET_MS, ISOLATES, type TwoTenantReport, type TwoTenantRun } from "./scenario.ts";

/** Tallies summed (latencies left out). */
function mergeTallies(ts: readonly TenantTally[]): TenantTally {
  const add = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
    return into;
  };
  return {
    sent: ts.reduce((n, t) => n + t.sent, 0),
    statuses: ts.reduce((acc, t) => add(acc, t.statuses), {} as Record<string, number>),
    refusals: ts.reduce((acc, t) => add(acc, t.refusals), {} as Record<string, number>),
    mixedUp: ts.reduce((n, t) => n + t.mixedUp, 0),
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    rowsPerS: Number.NaN,
    sendLagP99Ms: Number.NaN,
  };
}

/** B's requests by how they ended, as shares. */
function bShares(b: TenantTally): string {
  const pct = (n: number | undefined) => `${(((n ?? 0) / Math.max(1, b.sent)) * 100).toFixed(1)}%`;
  return [
    `${pct(b.statuses["200"])} answered`,
    `${pct(b.statuses["429"])} refused 429 (${JSON.stringify(b.refusals)})`,
    `${pct(b.statuses["504"])} 504 (admitted, then past its deadline in the queue)`,
    ...(b.statuses.edge
      ? [`${pct(b.statuses.edge)} answered by its isolate without a call (within a Retry-After)`]
      : []),
  ].join(", ");
}

/** The scenario's section of bench/overload.md. */
export function twoTenantMarkdown(r: TwoTenantReport): string[] {
  const s = r.settings;
  const others = (t: TenantTally) =>
    JSON.stringify(Object.fromEntries(Object.entries(t.statuses).filter(([k]) => k !== "200" && k !== "429")));
  const row = (round: number, phase: string, tenant: string, t: TenantTally & { offeredRps: number }) =>
    `| ${round} | ${phase} | ${tenant} | ${t.offeredRps} | ${t.sent} | ${t.statuses["200"] ?? 0} | ${t.rowsPerS} | ${JSON.stringify(t.refusals)} | ${others(t)} | ${t.p50Ms.toFixed(2)} / ${t.p99Ms.toFixed(2)} | ${t.sendLagP99Ms} | ${t.mixedUp} |`;
  const run = (x: TwoTenantRun): string[] => {
    const v = x.verdict;
    const alone = x.phases.find((p) => !p.b)!;
    const withB = x.phases.find((p) => p.b)!;
    const bAll = mergeTallies(x.phases.flatMap((p) => (p.b ? [p.b] : [])));
    const title =
      x.kind === "device"
        ? `### A pool whose capacity is its accelerator's (\`--simulated-run-ms ${DEVICE.runMs} --max-batch ${DEVICE.maxBatch}\`)`
        : "### The CPU-bound pool of this machine";
    const what =
      x.kind === "device"
        ? [
            `A batch of up to ${DEVICE.maxBatch} rows takes ${DEVICE.runMs} ms whatever its rows, as on an accelerator: the pool's capacity is the`,
            "device's and its CPU has room to refuse what it cannot run, as a GPU pool's does (the `gpu` overlay runs four",
            "workers per GPU). There is no GPU here; the rows still run through onnxruntime after the wait.",
          ]
        : [
            "The same pool without the simulation: on this shared 2-core machine every refusal of B's flood (headers read,",
            "429 written, the body drained) takes some of the one core the pool has, which the admitted work needs too. B's",
            `flood comes as ${ISOLATES} edge isolates forward it: an isolate the pool shed sends none of B's rows for the`,
            "Retry-After (edge/forward/tenant-backoff.ts) and answers them itself, degraded (`edge` below).",
          ];
    return [
      title,
      "",
      ...what,
      `Capacity for B's ${s.bRows}-row requests, closed loop on a pool of its own: **${x.capacity.rowsPerS} rows/s** (${x.capacity.reqPerS} req/s).`,
      `\`--tenants a=guaranteed:${x.reservationRowsPerS},b=best-effort\`: A sends ${alone.a.offeredRps} single rows/s, half its reservation;`,
      `B offers ${withB.b?.offeredRowsPerS} rows/s (${withB.b?.offeredRps} req/s), ${s.flood}x the capacity. ${x.pinned}.`,
      "",
      "| round | phase | tenant | offered req/s | sent | 200 | rows/s answered | 429 by code | other | p50 / p99 ms | generator lag p99 ms | mixed up |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...x.phases.flatMap((p) => [row(p.round, p.phase, "A", p.a), ...(p.b ? [row(p.round, p.phase, "B", p.b)] : [])]),
      "",
      `- **A's p99 beside B's flood: ${v.p99Ratio}x its p99 alone**, the median of the rounds' own ratios (${v.p99Ratios.join(", ")}); A`,
      `  answered ${(v.successWithB * 100).toFixed(2)}% beside it (alone ${(v.successAlone * 100).toFixed(2)}%). Within its SLO (p99 at most 1.5x alone, ≥ 99% answered): **${v.aWithinSlo ? "yes" : "no"}**; p99 within its ${s.sloMs} ms deadline in every round: ${v.p99WithinDeadline ? "yes" : "no"}. The pool's own p99 of A's requests over the run (receipt to answer, its histogram's bucket): ≤ ${x.poolCounts.a?.["pool p99 ≤ ms"] ?? "?"} ms.`,
      `- B, over the rounds: ${bShares(bAll)}${v.bRefusedNotFailed ? "" : "; **and other statuses**"}. Through the edge every one but the 200s is an answer of its own model, degraded, never a 5xx. Lost: ${v.lost}. Mixed up: ${v.mixedUp}.`,
      ...(x.edge
        ? [
            `- Through one edge Worker in front of the pool while B floods it (20 unsure rows per tenant, one at a time, each`,
            `  with \`x-edgecascade-budget-ms: ${EDGE_BUDGET_MS}\`, the flood's forwards that long too: who is shed, not how fast):`,
            `  A ${JSON.stringify(x.edge.a)}; B ${JSON.stringify(x.edge.b)}, degraded because ${JSON.stringify(x.edge.bDegradedReasons)}.`,
          ]
        : []),
      `- The pool's own counts (\`edgecascade_tenant_requests_total\`, \`_rows_total\`): ${Object.entries(x.poolCounts)
        .map(([t, c]) => `${t} ${JSON.stringify(c)}`)
        .join("; ")}.`,
    ];
  };
  return [
    "## Two tenants at a pool: one within its reservation, one flooding",
    "",
    "Every request is a forward as the edge sends it, straight to the pool: `/v1/classify`, signed with its tenant",
    `(\`x-edgecascade-tenant\`), \`${DEADLINE_HEADER}: ${s.sloMs}\`. The flood stands for the forwards of many edge isolates,`,
    "more than one Worker on this machine could send. Open loop; latency counts from when each",
    `request was due; ${s.phaseS} s per phase; B over ${s.connections} connections, A over 64. Every 200 is checked against its request`,
    "(its `id` and each row's class); a request with no answer is lost.",
    "",
    ...r.runs.flatMap((x) => [...run(x), ""]),
  ];
}
