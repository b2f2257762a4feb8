/**
 * Weighted fair queueing over rows, as start-time fair queueing (Goyal, Vin and Cheng, SIGCOMM 1996): every
 * best-effort call is tagged when it joins a model version's queue with a start tag, `max(virtual time, the
 * finish tag of its tenant's previous call)`, and a finish tag, `start + rows / weight`; calls are served in the
 * order of their start tags, and the virtual time is the start tag of the latest call served. A tenant that
 * sends more rows than its share runs ahead in tags and waits; one that was idle starts at the virtual time,
 * with no credit saved up. Calls within a reservation are not tagged: they go first, in arrival order, and do
 * not use up their tenant's best-effort share. Pure: the batcher keeps the numbers.
 */

/** A queued call as the fair order reads it. */
export interface FairCall {
  /** Runs within its tenant's reservation. */
  reserved?: boolean;
  /** Start tag of a best-effort call; untagged calls (a pool without tenants) keep arrival order. */
  startTag?: number;
}

/** The tags of a best-effort call of `rows` rows from a tenant of `weight` whose previous call finished at `lastFinish`. */
export function fairTags(
  virtualTime: number,
  lastFinish: number,
  rows: number,
  weight: number,
): { start: number; finish: number } {
  const start = Math.max(virtualTime, lastFinish);
  return { start, finish: start + rows / weight };
}

/** Whether `a` is served before `b`: reserved calls first, then by start tag; ties keep arrival order. */
function before(a: FairCall, b: FairCall): boolean {
  if (a.reserved !== b.reserved) return a.reserved === true;
  if (a.reserved) return false;
  return (a.startTag ?? 0) < (b.startTag ?? 0);
}

/**
 * `live` (indexes into `queue`, in arrival order) in the order the calls are served. Returned as given when it
 * is already in that order: a pool without tenants, one tenant, or no call ahead of its turn, pays one pass.
 */
export function fairOrder(queue: readonly FairCall[], live: readonly number[]): readonly number[] {
  let ordered = true;
  for (let k = 1; k < live.length && ordered; k++) ordered = !before(queue[live[k]!]!, queue[live[k - 1]!]!);
  if (ordered) return live;
  // Array.prototype.sort is stable: equal keys keep arrival order.
  return [...live].sort((i, j) => (before(queue[i]!, queue[j]!) ? -1 : before(queue[j]!, queue[i]!) ? 1 : 0));
}

/** The virtual time once `run` has been taken from `queue`: the latest start tag among its best-effort calls. */
export function virtualTimeAfter(virtualTime: number, queue: readonly FairCall[], run: readonly number[]): number {
  let v = virtualTime;
  for (const i of run) {
    const call = queue[i]!;
    if (!call.reserved && call.startTag !== undefined && call.startTag > v) v = call.startTag;
  }
  return v;
}
