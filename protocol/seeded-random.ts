/**
 * A seeded uniform draw in [0, 1) (mulberry32): the same seed gives the same sequence. Both tiers' reproducible
 * draws use it: the edge's audit under AUDIT_SEED, the probe's request mix, the validation runs' traffic and
 * faults, the model tool's splits and the rollout simulations.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
