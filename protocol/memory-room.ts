/**
 * Room within a memory budget, least recently used first: the one eviction rule of both tiers (the pools'
 * models within `--model-memory-mb`, regional/memory-budget.ts; the edge's sessions within
 * `EDGE_SESSION_MEMORY_MB`, edge/inference/session-pool.ts). Pure: what is counted, and how, is each tier's.
 */

/** Something resident that may be evicted (a pool's model, an edge session). */
export interface EvictionCandidate {
  name: string;
  /** What evicting it frees. */
  bytes: number;
  /** When a request last used it (any monotonic clock); the smallest goes first. */
  lastUsed: number;
}

/** Room for a load: the models to evict first, or why there cannot be room. */
export type Room = { fits: true; evict: string[] } | { fits: false; reason: string };

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/**
 * Room for `needBytes` more within `budgetBytes`, given `usedBytes` counted now (every loaded, loading and
 * retiring version): none to evict when it fits, else the least recently used `candidates` until it does.
 * When evicting every candidate would still not make room (what is left is pinned, in a rollout, loading or in use),
 * no room, with why; a model bigger than the whole budget never fits.
 */
export function makeRoom(
  needBytes: number,
  usedBytes: number,
  budgetBytes: number,
  candidates: readonly EvictionCandidate[],
  heldBy = "pinned, in a rollout, loading or finishing their requests",
): Room {
  if (needBytes > budgetBytes) {
    return { fits: false, reason: `it needs ${mb(needBytes)}, more than the whole budget of ${mb(budgetBytes)}` };
  }
  let over = usedBytes + needBytes - budgetBytes;
  if (over <= 0) return { fits: true, evict: [] };
  const evict: string[] = [];
  for (const c of [...candidates].sort((a, b) => a.lastUsed - b.lastUsed || a.name.localeCompare(b.name))) {
    evict.push(c.name);
    over -= c.bytes;
    if (over <= 0) return { fits: true, evict };
  }
  const held = usedBytes - candidates.reduce((sum, c) => sum + c.bytes, 0);
  return {
    fits: false,
    reason:
      `it needs ${mb(needBytes)} and ${mb(held)} of the ${mb(budgetBytes)} budget is held by what cannot be ` +
      `evicted now (${heldBy})`,
  };
}
