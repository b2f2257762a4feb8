// A stand-in for a TENANT_QUOTA Durable Object that cannot be reached (scripts/stack/edge-worker.ts,
// `quotaObject: "failing"`): every call throws, as a call to an unreachable or overloaded object does. The edge
// must fail open (edge/tenants/tenant-quotas.ts). Local tests only.
import { DurableObject } from "cloudflare:workers";

export class TenantQuota extends DurableObject {
  async lease() {
    throw new Error("Durable Object is overloaded (stand-in: scripts/stack/failing-quota-worker.js)");
  }

  async usage() {
    throw new Error("Durable Object is overloaded (stand-in: scripts/stack/failing-quota-worker.js)");
  }
}

export default {
  fetch: () => new Response("failing-quota stand-in", { status: 503 }),
};
