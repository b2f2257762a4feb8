import { type ModelConfig, parseModelConfig } from "../../protocol/model-config.ts";
import { type EdgeServedView, edgeServedModel } from "../../protocol/registry/edge-view.ts";
import { CONFIG_FILE, registryKey, SERVED_FILE } from "../../protocol/registry/layout.ts";
import { parseServedState } from "../../protocol/registry/served-state.ts";

/** A logical model the Worker serves and the name of its edge variant, if it has one. */
export interface FollowedModel {
  name: string;
  edge?: string;
}

async function json(bucket: Pick<R2Bucket, "get">, key: string): Promise<unknown | undefined> {
  const object = await bucket.get(key);
  if (!object) return undefined;
  return JSON.parse(await object.text());
}

/**
 * Read the registry through the Worker's R2 binding (the cron, edge/worker.ts): each model's served.json and its
 * edge variant's config.json, as the view every isolate reads from KV. A model the registry does not hold is
 * left out (its isolates keep the bundle's); one whose objects do not parse is listed in `errors`. `reachable`
 * is false when no object could be read at all: the cron then keeps the view KV holds.
 */
export async function readServedView(
  bucket: Pick<R2Bucket, "get">,
  prefix: string,
  models: readonly FollowedModel[],
  now: number,
): Promise<{ view: EdgeServedView; reachable: boolean }> {
  const view: EdgeServedView = { at: now, models: {} };
  const errors: Record<string, string> = {};
  let reached = 0;
  await Promise.all(
    models.map(async ({ name, edge }) => {
      try {
        const raw = await json(bucket, registryKey(prefix, name, SERVED_FILE));
        reached++;
        if (raw === undefined) return;
        const served = parseServedState(raw);
        if (!served.ok) throw new Error(`${name}/${SERVED_FILE}: ${served.message}`);
        let edgeConfig: ModelConfig | undefined;
        if (edge) {
          const rawEdge = await json(bucket, registryKey(prefix, edge, CONFIG_FILE));
          if (rawEdge !== undefined) edgeConfig = parseModelConfig(rawEdge, `${edge}/${CONFIG_FILE}`);
        }
        view.models[name] = edgeServedModel(served.value, edgeConfig);
      } catch (err) {
        errors[name] = (err as Error).message;
      }
    }),
  );
  if (Object.keys(errors).length > 0) view.errors = errors;
  return { view, reachable: reached > 0 };
}
