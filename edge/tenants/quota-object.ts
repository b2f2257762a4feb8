import { DurableObject } from "cloudflare:workers";
import { grantLease, type LeaseGrant, type LeaseRequest, type QuotaLedger } from "./quota-ledger.ts";
import { type QuotaPer, quotaPeriod } from "./quota-period.ts";

/**
 * One tenant's global quota (one object per tenant, `idFromName(tenant)`): the ledger of the current period, in
 * the object's storage, and leases of it to isolates (quota-ledger.ts decides). A Durable Object runs one event at
 * a time and its storage calls hold other events back, so two isolates' calls never interleave; the answer leaves
 * only once the ledger is written (the output gate). Exported by the Worker (edge/worker.ts), bound as
 * `TENANT_QUOTA` with its migration in every environment of wrangler.toml.
 */
export class TenantQuota extends DurableObject {
  #ledger: QuotaLedger | undefined;
  #loaded = false;

  async #load(): Promise<QuotaLedger | undefined> {
    if (!this.#loaded) {
      this.#ledger = await this.ctx.storage.get<QuotaLedger>("ledger");
      this.#loaded = true;
    }
    return this.#ledger;
  }

  /** Grant a lease (RPC). */
  async lease(request: LeaseRequest): Promise<LeaseGrant> {
    const { ledger, grant } = grantLease(await this.#load(), request, Date.now());
    this.#ledger = ledger;
    void this.ctx.storage.put("ledger", ledger);
    return grant;
  }

  /** The current period's use, leases counted as used (RPC; `/status`). */
  async usage(per: QuotaPer): Promise<{ period: string; used: number }> {
    const ledger = await this.#load();
    const period = quotaPeriod(per, Date.now()).id;
    return { period, used: ledger?.period === period ? ledger.used : 0 };
  }
}
