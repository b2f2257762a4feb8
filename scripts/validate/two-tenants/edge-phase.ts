/**
 * The two-tenant scenario's last phase: each tenant's unsure rows through one edge Worker while B floods the pool.
 */

import type { HeldoutRow } from "../../../protocol/heldout.ts";
import { openLoop } from "../../../tools/probe/load.ts";
import { startEdgeWorker } from "../../stack/edge-worker.ts";
import type { RegionalPool } from "../../stack/regional-pool.ts";
import { SECRET, stream } from "./forwards.ts";
import { EDGE_BUDGET_MS, type TwoTenantOptions, type TwoTenantRun } from "./scenario.ts";

/** While B floods the pool, one Worker in front of it sends each tenant's unsure rows, one at a time. */
export async function throughTheEdge(
  pool: RegionalPool,
  options: TwoTenantOptions,
  unsure: readonly HeldoutRow[],
  bRate: number,
): Promise<NonNullable<TwoTenantRun["edge"]>> {
  const { model, phaseS, connections, bRows } = options;
  const edge = await startEdgeWorker({
    vars: {
      REGIONS: JSON.stringify([{ name: "pool", url: pool.url, latitude: 39.04, longitude: -77.49 }]),
      API_KEYS: JSON.stringify([
        { key: "key-a", tenant: "a" },
        { key: "key-b", tenant: "b" },
      ]),
      REGIONAL_SHARED_SECRET: SECRET,
      HEDGE_BUDGET_RATIO: "0",
      HEDGE_BUDGET_BURST: "0",
    },
    rateLimit: false,
  });
  const counts: NonNullable<TwoTenantRun["edge"]> = { a: {}, b: {}, bDegradedReasons: {} };
  try {
    const ready = await edge.dispatchFetch(`${edge.url}/v2/health/ready`);
    if (ready.status !== 200) throw new Error(`edge variants did not load: ${ready.status}`);
    // The flood's forwards carry the deadline the edge's do: admission weighs each request against its own.
    const b = stream("b", model, unsure, bRows, EDGE_BUDGET_MS);
    const flooding = openLoop({
      origin: pool.url,
      rate: bRate,
      durationS: Math.min(phaseS, 5),
      connections,
      timeoutMs: 30_000,
      ...b,
    });
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < 20; i++) {
      for (const [tenant, key] of [
        ["a", "key-a"],
        ["b", "key-b"],
      ] as const) {
        const res = await edge.dispatchFetch(`${edge.url}/v1/classify`, {
          method: "POST",
          // A budget the loaded machine's forwards fit in: this is about who is shed, not about time.
          headers: {
            "content-type": "application/json",
            "x-api-key": key,
            "x-edgecascade-budget-ms": String(EDGE_BUDGET_MS),
          },
          // Two unsure rows no request of this run sent together before: a repeat would be a cache hit, never a forward.
          body: JSON.stringify({
            model: model.name,
            inputs: [i, i + (tenant === "a" ? 1 : 6) + Math.floor(i / unsure.length)].map(
              (r) => unsure[r % unsure.length]!.input,
            ),
          }),
        });
        const body = (await res.json()) as { servedBy?: string };
        const what =
          res.status === 200 ? (body.servedBy ?? "?").replace(/^regional:.*/, "regional") : `HTTP ${res.status}`;
        counts[tenant][what] = (counts[tenant][what] ?? 0) + 1;
        const reason = res.headers.get("x-edgecascade-degraded");
        if (tenant === "b" && reason) counts.bDegradedReasons[reason] = (counts.bDegradedReasons[reason] ?? 0) + 1;
      }
    }
    await flooding;
    console.error(
      `  through the edge during the flood: A ${JSON.stringify(counts.a)}, B ${JSON.stringify(counts.b)} ${JSON.stringify(counts.bDegradedReasons)}`,
    );
  } finally {
    await edge.dispose();
  }
  return counts;
}
