/** Returns a zero-filled Float32Array of `length` elements that no other caller shares. */
export type Float32Allocator = (length: number) => Float32Array;

/** Floats per slab by default: 64 KiB, 256 rows of 64 features. */
export const DEFAULT_SLAB_FLOATS = 16_384;

/**
 * Float32Arrays for request rows, carved in turn out of shared `slabFloats`-element buffers; an array of more
 * than a quarter of a slab gets a buffer of its own.
 *
 * Why: V8 gives every Float32Array of more than 64 bytes its own off-heap buffer, 0.4–0.6 µs to allocate and
 * more to free, and the pool builds one per request (a row of 64 features is 256 bytes); a view of an existing
 * buffer costs ~40 ns. Each region is handed out once and never reused, so two arrays never overlap and every
 * one starts zero-filled, as a fresh buffer does. A slab lives as long as any array cut from it: a row kept
 * (a rollout's shadow copy waiting) keeps its slab's 64 KiB alive.
 */
export function float32Slab(slabFloats = DEFAULT_SLAB_FLOATS): Float32Allocator {
  if (!Number.isInteger(slabFloats) || slabFloats < 4) {
    throw new RangeError(`slabFloats must be an integer of at least 4, got ${slabFloats}`);
  }
  const largest = Math.floor(slabFloats / 4);
  let slab = new ArrayBuffer(0);
  let used = slabFloats;
  return (length) => {
    if (length > largest) return new Float32Array(length);
    if (used + length > slabFloats) {
      slab = new ArrayBuffer(slabFloats * Float32Array.BYTES_PER_ELEMENT);
      used = 0;
    }
    const out = new Float32Array(slab, used * Float32Array.BYTES_PER_ELEMENT, length);
    used += length;
    return out;
  };
}
