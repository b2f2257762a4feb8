import { RateLimited } from "../../protocol/errors.ts";
import type { TenantPolicy } from "./policies.ts";
import {
  callAnswered,
  callFailed,
  type LeaseState,
  NO_LEASE,
  type QuotaLeaseOptions,
  startCall,
  takeRequest,
} from "./quota-lease.ts";
import type { LeaseGrant, LeaseRequest } from "./quota-ledger.ts";
import type { QuotaPer } from "./quota-period.ts";

/** What the isolate calls on a tenant's quota object (quota-object.ts's RPC methods). */
export interface QuotaObject {
  lease(request: LeaseRequest): Promise<LeaseGrant>;
  usage(per: QuotaPer): Promise<{ period: string; used: number }>;
}

/** One tenant's quota requests in this isolate, for `/status`. */
export interface QuotaCounts {
  /** Served from a lease. */
  leased: number;
  /** Served before the isolate's first lease of the period arrived (charged with its next call). */
  credit: number;
  /** Served while the quota object could not be reached (charged once it can). */
  unmetered: number;
  /** Refused: the quota is used up. */
  refused: number;
  /** Calls to the quota object, and those that failed. */
  calls: number;
  failedCalls: number;
}

/** While the quota is used up, the isolate asks again this often (given-back requests may free some), ms. */
export const RECHECK_MS = 10_000;
/** After a failed call, requests are served unmetered this long before the next try, ms. */
export const FAIL_OPEN_MS = 5_000;

interface TenantEntry {
  policy: TenantPolicy & { quota: NonNullable<TenantPolicy["quota"]> };
  state: LeaseState;
  asking: Promise<void> | undefined;
  counts: QuotaCounts;
}

/**
 * The isolate's side of the tenants' global quotas: one lease per tenant (quota-lease.ts decides what each request
 * does), calls to the tenant's object with a timeout, renewals in `waitUntil`. Fails open: when the object cannot
 * be reached the tenant is served and the request counted `unmetered` (and said so in `x-edgecascade-quota`), and
 * what was served is charged once a call gets through.
 */
export class TenantQuotas {
  readonly #tenants = new Map<string, TenantEntry>();
  readonly #objects: ((tenant: string) => QuotaObject) | undefined;
  readonly #options: QuotaLeaseOptions;
  readonly #timeoutMs: number;

  constructor(
    policies: ReadonlyMap<string, TenantPolicy>,
    objects: ((tenant: string) => QuotaObject) | undefined,
    options: { slice: number; leaseMs: number; timeoutMs: number },
  ) {
    this.#objects = objects;
    this.#options = { slice: options.slice, leaseMs: options.leaseMs, recheckMs: RECHECK_MS, failOpenMs: FAIL_OPEN_MS };
    this.#timeoutMs = options.timeoutMs;
    for (const policy of policies.values()) {
      if (!policy.quota) continue;
      this.#tenants.set(policy.tenant, {
        policy: policy as TenantEntry["policy"],
        state: NO_LEASE,
        asking: undefined,
        counts: { leased: 0, credit: 0, unmetered: 0, refused: 0, calls: 0, failedCalls: 0 },
      });
    }
  }

  /** Whether the tenant has a global quota. */
  has(tenant: string): boolean {
    return this.#tenants.has(tenant);
  }

  /**
   * Count one request of `tenant` against its quota: `metered`, `unmetered` (failing open), or a 429
   * `quota_exceeded` thrown with Retry-After until the period ends. Renewals go to `defer` (`waitUntil`).
   */
  async take(tenant: string, defer: (work: Promise<void>) => void): Promise<"metered" | "unmetered"> {
    const entry = this.#tenants.get(tenant);
    if (!entry) return "metered";
    for (let attempt = 0; ; attempt++) {
      const { state, verdict } = takeRequest(entry.state, Date.now(), this.#options);
      entry.state = state;
      switch (verdict.kind) {
        case "serve":
          entry.counts.leased++;
          if (verdict.renew) defer(this.#call(entry));
          return "metered";
        case "credit":
          entry.counts.credit++;
          defer(this.#call(entry));
          return "metered";
        case "unmetered":
          entry.counts.unmetered++;
          return "unmetered";
        case "refuse": {
          entry.counts.refused++;
          const { requests, per } = entry.policy.quota;
          throw new RateLimited(
            `tenant "${tenant}" has used its quota of ${requests} requests this ${per}`,
            verdict.retryAfterS,
            "quota_exceeded",
          );
        }
        case "ask":
          // Used up, and time to ask again: this request waits for the answer (a refusal is the alternative).
          // An answer always settles it; should it not, the request is served rather than failed.
          if (attempt > 0) {
            entry.counts.unmetered++;
            return "unmetered";
          }
          await this.#call(entry);
      }
    }
  }

  /** One call to the tenant's object at a time; never rejects (a failure fails open). */
  #call(entry: TenantEntry): Promise<void> {
    entry.asking ??= this.#ask(entry).finally(() => {
      entry.asking = undefined;
    });
    return entry.asking;
  }

  async #ask(entry: TenantEntry): Promise<void> {
    const { tenant, quota } = entry.policy;
    const started = startCall(entry.state);
    entry.state = started.state;
    entry.counts.calls++;
    const request: LeaseRequest = {
      per: quota.per,
      limit: quota.requests,
      slice: this.#options.slice,
      served: started.report.served,
      ...(started.report.returned ? { returned: started.report.returned } : {}),
    };
    try {
      const grant = await this.#withTimeout(this.#object(entry).lease(request));
      const before = entry.state.exhaustedUntil;
      entry.state = callAnswered(entry.state, grant, Date.now(), this.#options);
      if (grant.granted === 0 && before === 0) {
        console.warn(
          `tenant quota used up: tenant "${tenant}" has used ${grant.used} of ${grant.limit} requests in ${grant.period}; refusing until the period ends`,
        );
      }
    } catch (err) {
      entry.counts.failedCalls++;
      entry.state = callFailed(entry.state, started.report, Date.now(), this.#options);
      console.error(
        `tenant quota unreachable: serving tenant "${tenant}" unmetered for ${FAIL_OPEN_MS / 1000} s (fail open): ${(err as Error).message}`,
      );
    }
  }

  /**
   * The tenant's object, a stub made for each call: workerd refuses a stub made while serving one request to
   * another ("Cannot perform I/O on behalf of a different request"), and renewals run in other requests' waitUntil.
   */
  #object(entry: TenantEntry): QuotaObject {
    if (!this.#objects) throw new Error("no TENANT_QUOTA binding");
    return this.#objects(entry.policy.tenant);
  }

  #withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  /**
   * Each tenant's quota as this isolate sees it, for `/status`: its counts and lease, and the period's use
   * across every isolate as the object holds it (`global`; null when it cannot be read).
   */
  async snapshot(tenants: (name: string) => boolean): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const [name, entry] of this.#tenants) {
      if (!tenants(name)) continue;
      const { requests, per } = entry.policy.quota;
      let global: { period: string; used: number } | null = null;
      try {
        global = await this.#withTimeout(this.#object(entry).usage(per));
      } catch {
        global = null;
      }
      out[name] = {
        quota: { requests, per },
        global,
        isolate: { ...entry.counts, leaseLeft: entry.state.left, period: entry.state.period ?? null },
      };
    }
    return out;
  }
}
