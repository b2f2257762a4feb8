import { app } from "./app.ts";
import type { Env } from "./env.ts";
import { fastClassify } from "./fast-path/classify.ts";
import { takesFastClassify } from "./fast-path/route.ts";
import { runtimeFor } from "./runtime.ts";

/** The tenants' global quotas: a Durable Object class the Worker exports (bound as TENANT_QUOTA in wrangler.toml). */
export { TenantQuota } from "./tenants/quota-object.ts";

/**
 * The edge Worker: `fetch` serves the API, plain POST `/v1/classify` on the fast path (edge/fast-path/) and
 * everything else through the Hono app (app.ts); `scheduled` (cron in wrangler.toml) checks every region's status and
 * stores the results where request isolates read them.
 */
export default {
  fetch(request, env, ctx) {
    const { headers } = request;
    const fast = takesFastClassify({
      method: request.method,
      url: request.url,
      contentLength: headers.get("content-length"),
      transferEncoding: headers.get("transfer-encoding"),
    });
    return fast ? fastClassify(request, env, ctx) : app.fetch(request, env, ctx);
  },
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(
      runtimeFor(env)
        .checkRegions()
        .then(() => undefined),
    );
  },
} satisfies ExportedHandler<Env>;
