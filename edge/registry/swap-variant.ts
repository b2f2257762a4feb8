import type { EdgeVariant } from "../inference/edge-variant.ts";
import type { SessionPool } from "../inference/session-pool.ts";
import type { ServedModel } from "../models/served-model.ts";

/**
 * Serve `next` (an edge variant from the registry, its file checked) in place of `model`'s, within the
 * isolate's sessions (EDGE_SESSION_MEMORY_MB): when the variant it replaces has a session, `next`'s is created
 * first, room made as for any session, so the model is answered at the edge throughout; otherwise `next` takes
 * its place as it is and its session is created on its first use, admitted as any other's (session-pool.ts).
 * Then the replaced variant's session is released. Rejects, replacing nothing, when `next`'s session cannot
 * be created.
 */
export async function swapVariant(model: ServedModel, next: EdgeVariant, pool: SessionPool): Promise<void> {
  const replaced = model.edge;
  if (replaced?.ready) await next.load();
  model.swapEdge(next);
  if (replaced) await pool.retire(replaced);
}
