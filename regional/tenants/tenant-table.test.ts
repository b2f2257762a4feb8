import { describe, expect, it } from "vitest";
import { ServingError } from "../../protocol/errors.ts";
import { DIRECT_FLOW, flowOf, OTHER_FLOW, parseTenantSpecs, reservedRowsPerS, tenantTable } from "./tenant-table.ts";

describe("--tenants", () => {
  it("reads guaranteed reservations and best-effort weights", () => {
    expect(parseTenantSpecs("acme=guaranteed:2000, globex=best-effort:2,initech=best-effort")).toEqual([
      { name: "acme", class: "guaranteed", reservedRowsPerS: 2000, weight: 1 },
      { name: "globex", class: "best-effort", reservedRowsPerS: 0, weight: 2 },
      { name: "initech", class: "best-effort", reservedRowsPerS: 0, weight: 1 },
    ]);
    expect(parseTenantSpecs("")).toEqual([]);
  });

  it.each([
    ["acme", "must be NAME=guaranteed:ROWS_PER_S or NAME=best-effort[:WEIGHT]"],
    ["acme=gold:5", "must be NAME=guaranteed"],
    ["acme=guaranteed", "needs its reserved rows per second"],
    ["acme=guaranteed:0", "needs its reserved rows per second"],
    ["acme=best-effort:0", "a best-effort weight is a whole number from 1"],
    ["acme=best-effort:1.5", "a best-effort weight is a whole number from 1"],
    ["acme=best-effort,acme=guaranteed:5", 'tenant "acme" is declared twice'],
  ])("refuses %s, naming the entry", (raw, message) => {
    expect(() => parseTenantSpecs(raw)).toThrow(message);
  });
});

describe("the tenants' flows", () => {
  const table = tenantTable(parseTenantSpecs("acme=guaranteed:100,direct=guaranteed:50,globex=best-effort:3"));

  it("puts direct and other first, declared or not, then the declared tenants", () => {
    expect(table.flows.map((f) => f.name)).toEqual(["direct", "other", "acme", "globex"]);
    expect(table.flows[DIRECT_FLOW]).toMatchObject({ class: "guaranteed", reservedRowsPerS: 50 });
    expect(table.flows[OTHER_FLOW]).toMatchObject({ class: "best-effort", weight: 1 });
    expect(table.hasReservations).toBe(true);
    expect(reservedRowsPerS(table)).toBe(150);
    expect(tenantTable([]).hasReservations).toBe(false);
  });

  it("maps the tenant header: none is direct, a declared tenant its own flow, any other name other", () => {
    expect(flowOf(table, undefined)).toBe(DIRECT_FLOW);
    expect(flowOf(table, "acme")).toBe(2);
    expect(flowOf(table, "globex")).toBe(3);
    expect(flowOf(table, "key:6ab9f1eb8f7d3388")).toBe(OTHER_FLOW);
    expect(flowOf(table, "other")).toBe(OTHER_FLOW);
  });

  it.each(["", "a b", "x".repeat(81), "direct", "acme\nx"])("answers a malformed tenant %j with a 400", (header) => {
    let error: unknown;
    try {
      flowOf(table, header);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ServingError);
    expect((error as ServingError).status).toBe(400);
  });
});
