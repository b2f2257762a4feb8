/**
 * Which worker of a pod owns a model loaded on demand (`--model-placement hashed`): rendezvous hashing of the
 * model's name over the pod's worker slots, pure. Every worker computes the same owner from the name and the
 * number of workers alone, with no table to share or keep in step, and a worker replacing a dead one takes its
 * slot, so its models' owner does not move.
 */

/** A 32-bit hash of `text`: FNV-1a, then murmur3's finaliser, so that names differing in one character spread. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The slot (0 to `workers` - 1) whose score for `model` is highest. */
export function ownerSlot(model: string, workers: number): number {
  let best = 0;
  let bestScore = -1;
  for (let slot = 0; slot < workers; slot++) {
    const score = hash32(`${slot}\u0000${model}`);
    if (score > bestScore) {
      best = slot;
      bestScore = score;
    }
  }
  return best;
}
