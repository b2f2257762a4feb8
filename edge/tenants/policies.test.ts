import { describe, expect, it } from "vitest";
import { type PolicyContext, parseTenantPolicies } from "./policies.ts";

const context: PolicyContext = {
  tenants: ["acme", "globex"],
  hasRateLimiter: (name) => name === "TENANT_RATE_LIMITER",
  hasQuotaObject: true,
};

describe("TENANTS", () => {
  it("reads each tenant's location limit and global quota, as JSON text or a wrangler.toml array", () => {
    const raw = [
      { tenant: "acme", rateLimiter: "TENANT_RATE_LIMITER", quota: { requests: 1000, per: "month" } },
      { tenant: "globex", quota: { requests: 50, per: "day" } },
    ];
    const policies = parseTenantPolicies(JSON.stringify(raw), context);
    expect([...policies.keys()]).toEqual(["acme", "globex"]);
    expect(policies.get("acme")).toEqual(raw[0]);
    expect(parseTenantPolicies(raw, context).get("globex")).toEqual(raw[1]);
    expect(parseTenantPolicies(undefined, context).size).toBe(0);
    expect(parseTenantPolicies("", context).size).toBe(0);
  });

  it.each([
    ["{", /^TENANTS: invalid JSON/],
    [{ tenant: "acme" }, "TENANTS: must be a JSON array of tenants"],
    [
      [{ tenant: "initech" }],
      'TENANTS[0].tenant: no API key has tenant "initech" (API_KEYS\' tenants: "acme", "globex")',
    ],
    [[{ tenant: "acme" }, { tenant: "acme" }], 'TENANTS[1].tenant: "acme" is listed twice'],
    [
      [{ tenant: "acme", rateLimiter: "GOLD" }],
      'TENANTS[0].rateLimiter: the Worker has no rate-limiting binding "GOLD"',
    ],
    [[{ tenant: "acme", quota: { requests: 0, per: "day" } }], 'TENANTS: "[0].quota.requests" must be at least 1'],
    [
      [{ tenant: "acme", quota: { requests: 10, per: "week" } }],
      'TENANTS: "[0].quota.per" must be one of "day", "month", got "week"',
    ],
    [[{ tenant: "acme", burst: 3 }], 'TENANTS: unknown field "[0].burst"'],
  ])("refuses %j, naming the field", (raw, message) => {
    expect(() => parseTenantPolicies(typeof raw === "string" ? raw : JSON.stringify(raw), context)).toThrow(message);
  });

  it("refuses a quota without the TENANT_QUOTA binding", () => {
    const raw = JSON.stringify([{ tenant: "acme", quota: { requests: 10, per: "day" } }]);
    expect(() => parseTenantPolicies(raw, { ...context, hasQuotaObject: false })).toThrow(
      "TENANTS[0].quota: the Worker has no TENANT_QUOTA Durable Object binding",
    );
  });
});
