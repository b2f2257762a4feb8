/**
 * The pool's model memory within `--model-memory-mb` per worker, pure: what a loaded version is counted as,
 * and which models to evict, least recently used first, to make room for one more (the I/O around it is
 * regional/demand-loads.ts). onnxruntime-node has no figure of a session's memory, so a version is counted by
 * an estimate from its file size, measured on the sample models (docs/regional.md, *Load policies and the
 * memory budget*): a session's fixed cost plus a multiple of the file, conservative for every kind measured
 * (an MLP holds about its weights once more, a tree ensemble about five times its file).
 */

/** What every session costs beyond its weights, in bytes (measured: 220-230 KiB for a 3-5 KB model). */
export const SESSION_BASE_BYTES = 256 * 1024;
/** Bytes of session per byte of model file (measured: 1.1 for the digits MLP, 5.0 for the breast-cancer forest). */
export const SESSION_BYTES_PER_FILE_BYTE = 5;

/** The memory a loaded version is counted as, from its file's size. */
export function versionBytes(fileBytes: number): number {
  return SESSION_BASE_BYTES + SESSION_BYTES_PER_FILE_BYTE * fileBytes;
}

/** A model whose serving version may be evicted. */
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
 * When evicting every candidate would still not make room (what is left is pinned, in a rollout or loading),
 * no room, with why; a model bigger than the whole budget never fits.
 */
export function makeRoom(
  needBytes: number,
  usedBytes: number,
  budgetBytes: number,
  candidates: readonly EvictionCandidate[],
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
      `it needs ${mb(needBytes)} and ${mb(held)} of the ${mb(budgetBytes)} budget is held by models that ` +
      "cannot be evicted now (pinned, in a rollout, loading or finishing their requests)",
  };
}
