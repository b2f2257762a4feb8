/**
 * The pool's model memory within `--model-memory-mb` per worker, pure: what a loaded version is counted as
 * (which models to evict to make room for one more is protocol/memory-room.ts, both tiers' rule; the I/O around
 * it is regional/demand-loads.ts). onnxruntime-node has no figure of a session's memory, so a version is counted by
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

/**
 * Which models load without a request asking: `all` (every model, at start, kept loaded: no budget applies),
 * `on-demand` (the pinned models at start; every other on its first request, within the memory budget,
 * evicted least recently used), `auto` (`all` when every model's estimate fits the budget, else `on-demand`).
 */
export type LoadPolicy = "auto" | "all" | "on-demand";

/** The policy in force: `auto` resolved by whether every model's estimate (`estimatedBytes`) fits the budget. */
export function resolveLoadPolicy(asked: LoadPolicy, estimatedBytes: number, budgetBytes: number): "all" | "on-demand" {
  if (asked !== "auto") return asked;
  return estimatedBytes <= budgetBytes ? "all" : "on-demand";
}
