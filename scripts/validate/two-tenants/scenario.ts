/**
 * The two-tenant scenario's options, its results, and the figures it holds A and B to.
 */

import type { ValidationModel } from "../model.ts";
import type { TenantTally, TwoTenantVerdict } from "../tenant-verdict.ts";

export interface TwoTenantOptions {
  model: ValidationModel;
  capacityS: number;
  phaseS: number;
  /** Connections B's flood is sent over (A: 64). */
  connections: number;
  sloMs: number;
  /** Rows per B request. */
  bRows: number;
  /** A's rate, as a share of the pool's capacity in rows per second. */
  aShare: number;
  /** B's offered rows per second, as a multiple of the pool's capacity. */
  flood: number;
  /** Pool on one core, the generator on another (taskset). */
  pin: boolean;
  /** Rounds of A alone and A beside B's flood. */
  rounds: number;
}

export interface TenantPhase {
  round: number;
  phase: string;
  a: TenantTally & { offeredRps: number };
  b?: TenantTally & { offeredRps: number; offeredRowsPerS: number };
}

/** The scenario on one pool. */
export interface TwoTenantRun {
  kind: "device" | "cpu";
  pinned: string;
  capacity: { rowsPerS: number; reqPerS: number; statuses: Record<string, number> };
  reservationRowsPerS: number;
  phases: TenantPhase[];
  /** Through one edge Worker during the flood (the device pool only). */
  edge?: { a: Record<string, number>; b: Record<string, number>; bDegradedReasons: Record<string, number> };
  poolCounts: Record<string, Record<string, number>>;
  verdict: TwoTenantVerdict;
}

export interface TwoTenantReport {
  settings: Omit<TwoTenantOptions, "model"> & { model: string };
  /** The device-bound pool (the verdict), then the CPU-bound one. */
  runs: TwoTenantRun[];
}

/** A's promise (tenant-verdict.ts): its p99 beside the flood at most 1.5x alone, at least 99% answered. */
export const SLO = (deadlineMs: number) => ({ p99Ratio: 1.5, successRate: 0.99, deadlineMs });

/** The budget of the requests sent through the edge during the flood, ms: who is shed, not how fast. */
export const EDGE_BUDGET_MS = 100;

/** Edge isolates B's flood comes through on the CPU-bound pool, each backing off when shed. */
export const ISOLATES = 64;

/** The simulated accelerator of the first pool: a batch of up to 16 rows takes 2 ms, whatever its rows. */
export const DEVICE = { runMs: 2, maxBatch: 16 } as const;
