import { BadRequest } from "../../protocol/errors.ts";
import { TENANT_HEADER } from "../../protocol/headers.ts";
import { TENANT_NAME } from "../../protocol/signing.ts";

/**
 * `guaranteed`: a share of the pool's capacity is reserved for the tenant, in rows per second; what it sends
 * beyond that competes as best-effort. `best-effort`: shares what reservations leave, by weight, and is refused
 * first under overload.
 */
export type TenantClass = "guaranteed" | "best-effort";

/** One tenant as the pool's configuration declares it (`--tenants`). */
export interface TenantSpec {
  /** The edge's tenant name, or `direct` / `other` for those classes. */
  name: string;
  class: TenantClass;
  /** Rows per second reserved (guaranteed); 0 for best-effort. */
  reservedRowsPerS: number;
  /** Weight in the best-effort share (a guaranteed tenant's excess too). Default 1. */
  weight: number;
}

/** Calls without a tenant: gRPC, direct API callers, the edge's own warm probes. */
export const DIRECT = "direct";
/** Edge tenants the pool's configuration does not name. */
export const OTHER = "other";
/** Flow indexes of the two classes every pool has. */
export const DIRECT_FLOW = 0;
export const OTHER_FLOW = 1;

/**
 * The pool's tenants as flows: index 0 `direct`, 1 `other`, then the configured tenants in order. Everything
 * per tenant (queues, reservations, metric labels) is an array indexed by flow, so the label set is bounded by
 * the configuration.
 */
export interface TenantTable {
  readonly flows: readonly TenantSpec[];
  readonly byName: ReadonlyMap<string, number>;
  /** Whether any flow is guaranteed: without one, admission and batching are what they were without tenants. */
  readonly hasReservations: boolean;
}

const ENTRY = /^([\w.:-]{1,80})=(guaranteed|best-effort)(?::(\d+(?:\.\d+)?))?$/;

/**
 * `--tenants`: comma-separated `NAME=guaranteed:ROWS_PER_S` or `NAME=best-effort[:WEIGHT]`, e.g.
 * `acme=guaranteed:2000,globex=best-effort:2`. `direct` and `other` may be declared too (default: best-effort,
 * weight 1). Throws an Error naming the entry (the option table says which flag).
 */
export function parseTenantSpecs(raw: string): TenantSpec[] {
  const specs: TenantSpec[] = [];
  for (const part of raw.split(",").map((p) => p.trim())) {
    if (part === "") continue;
    const match = ENTRY.exec(part);
    if (!match) {
      throw new Error(
        `"${part}" must be NAME=guaranteed:ROWS_PER_S or NAME=best-effort[:WEIGHT] (e.g. acme=guaranteed:2000)`,
      );
    }
    const [, name, kind, number] = match as unknown as [string, string, TenantClass, string | undefined];
    if (specs.some((s) => s.name === name)) throw new Error(`tenant "${name}" is declared twice`);
    const value = number === undefined ? undefined : Number(number);
    if (kind === "guaranteed") {
      if (value === undefined || value <= 0) {
        throw new Error(`"${part}": a guaranteed tenant needs its reserved rows per second, above 0`);
      }
      specs.push({ name, class: kind, reservedRowsPerS: value, weight: 1 });
    } else {
      if (value !== undefined && (value < 1 || !Number.isInteger(value))) {
        throw new Error(`"${part}": a best-effort weight is a whole number from 1`);
      }
      specs.push({ name, class: kind, reservedRowsPerS: 0, weight: value ?? 1 });
    }
  }
  return specs;
}

/** The flows of a configuration: `direct`, `other`, then the declared tenants (a declaration of either replaces it). */
export function tenantTable(specs: readonly TenantSpec[]): TenantTable {
  const fallback = (name: string): TenantSpec =>
    specs.find((s) => s.name === name) ?? { name, class: "best-effort", reservedRowsPerS: 0, weight: 1 };
  const flows = [fallback(DIRECT), fallback(OTHER), ...specs.filter((s) => s.name !== DIRECT && s.name !== OTHER)];
  return {
    flows,
    byName: new Map(flows.map((f, i) => [f.name, i])),
    hasReservations: flows.some((f) => f.class === "guaranteed"),
  };
}

/**
 * The flow of a call from its `x-edgecascade-tenant` header: none is `direct`, a declared tenant its own, any
 * other well-formed name `other`. A malformed one is a 400 naming the header.
 */
export function flowOf(table: TenantTable, header: string | undefined): number {
  if (header === undefined) return DIRECT_FLOW;
  const flow = table.byName.get(header);
  if (flow !== undefined && flow !== DIRECT_FLOW) return flow;
  if (!TENANT_NAME.test(header) || header === DIRECT) {
    throw new BadRequest(`malformed ${TENANT_HEADER}: 1-80 letters, digits, '.', '_', ':' or '-', and not "direct"`);
  }
  return OTHER_FLOW;
}

/** Total rows per second the configuration reserves. */
export function reservedRowsPerS(table: TenantTable): number {
  return table.flows.reduce((sum, f) => sum + f.reservedRowsPerS, 0);
}
