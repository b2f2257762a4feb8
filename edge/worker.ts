import { app } from "./app.ts";
import type { Env } from "./env.ts";
import { runtimeFor } from "./runtime.ts";

/**
 * The edge Worker: `fetch` serves the API (app.ts); `scheduled` (cron in wrangler.toml) probes every
 * region and stores the results where request isolates read them.
 */
export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(
      runtimeFor(env)
        .probe()
        .then(() => undefined),
    );
  },
} satisfies ExportedHandler<Env>;
