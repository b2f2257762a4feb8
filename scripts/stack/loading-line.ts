/** What a pool's `GET /v2` says of its model loading (regional/routes/health.ts). */
export interface PoolLoading {
  policy: "all" | "on-demand";
  memoryBudgetBytes?: number;
  available: number;
  loaded: number;
}

/** What the edge's `GET /status` says of its sessions (edge/inference/session-pool.ts). */
export interface EdgeSessions {
  budgetBytes: number;
  resident: number;
}

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

/** `npm start`'s loading line: how the pools load models and within what, and the edge's session budget. */
export function describeLoading(
  pool: PoolLoading | undefined,
  edge: EdgeSessions | undefined,
  variants: number,
): string {
  const pools = !pool
    ? "pools: unknown"
    : pool.policy === "all"
      ? `pools load all ${pool.available} models at start`
      : `pools load models on demand within ${mib(pool.memoryBudgetBytes ?? 0)} per worker (${pool.loaded} of ${pool.available} loaded)`;
  const sessions = !edge
    ? "edge sessions: unknown"
    : `edge sessions on first use within ${mib(edge.budgetBytes)} per isolate (${edge.resident} of ${variants} resident)`;
  return `${pools}; ${sessions}`;
}

/** The loading line of a running stack, from a pool's `/v2` and the edge's `/status`. */
export async function loadingLine(poolUrl: string, edgeUrl: string, variants: number): Promise<string> {
  const json = (url: string) =>
    fetch(url)
      .then((r) => (r.ok ? r.json() : undefined))
      .catch(() => undefined);
  const [pool, edge] = await Promise.all([json(`${poolUrl}/v2`), json(`${edgeUrl}/status`)]);
  return describeLoading(
    (pool as { modelLoading?: PoolLoading } | undefined)?.modelLoading,
    (edge as { sessions?: EdgeSessions } | undefined)?.sessions,
    variants,
  );
}
