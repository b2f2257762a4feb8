import { UsageError } from "../cli/errors.ts";

/** One regional pool the controller talks to. */
export interface Pool {
  /** The region's name in wrangler.toml, or the URL's host for `--pools`. */
  name: string;
  url: string;
}

/** Regions as wrangler.toml's REGIONS lists them (a TOML array of tables, or a JSON string). */
function regionsOf(raw: unknown, source: string): Pool[] {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new UsageError(`${source}: REGIONS is not JSON: ${(err as Error).message}`);
    }
  }
  if (!Array.isArray(value)) return [];
  return value.flatMap((r) => {
    const { name, url } = (r ?? {}) as { name?: unknown; url?: unknown };
    return typeof name === "string" && typeof url === "string" ? [{ name, url: url.replace(/\/+$/, "") }] : [];
  });
}

/**
 * The pools of a rollout, from the regions the edge uses: one environment's REGIONS, or (no `env`) every
 * deployed environment's, each region once. `vars(env)` reads an environment's `[vars]`; `envs` are
 * wrangler.toml's environments. `local` is the top level (the local stack).
 */
export function poolsFromWrangler(
  envs: readonly string[],
  vars: (env: string | undefined) => Record<string, unknown>,
  env: string | undefined,
): Pool[] {
  const chosen = env === undefined ? envs : [env];
  for (const e of chosen) {
    if (e !== "local" && !envs.includes(e)) {
      throw new UsageError(`--env ${e}: wrangler.toml has ${[...envs, "local"].join(", ")}`);
    }
  }
  const byName = new Map<string, Pool>();
  for (const e of chosen) {
    for (const pool of regionsOf(vars(e === "local" ? undefined : e).REGIONS, `wrangler.toml [${e}]`)) {
      const seen = byName.get(pool.name);
      if (seen && seen.url !== pool.url) {
        throw new UsageError(`wrangler.toml lists region "${pool.name}" at ${seen.url} and at ${pool.url}`);
      }
      byName.set(pool.name, pool);
    }
  }
  if (byName.size === 0) throw new UsageError("wrangler.toml lists no regions for this --env; pass --pools URL,...");
  return [...byName.values()];
}

/** `--pools URL,URL`: each pool named by its host and port. */
export function poolsFromFlag(flag: string): Pool[] {
  return flag
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((raw) => {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new UsageError(`--pools: "${raw}" is not a URL`);
      }
      if (!/^https?:$/.test(url.protocol)) throw new UsageError(`--pools: "${raw}" is not http(s)`);
      return { name: url.host, url: raw.replace(/\/+$/, "") };
    });
}
