import { addEvidence, type StepEvidence } from "../../protocol/rollout/evidence.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import type { PoolClient } from "./client.ts";
import { fleetOf } from "./fleet.ts";
import type { Pool } from "./pools.ts";
import { prometheusEvidence } from "./prometheus-evidence.ts";

/** Where the controller reads a step's evidence, summed over every pod once. */
export interface EvidenceSource {
  /** What the pools counted for `state`'s rollout and step (undefined: nothing yet), and lines worth printing. */
  read(state: RolloutState): Promise<{ evidence?: StepEvidence; notes: string[] }>;
  describe: string;
}

/**
 * Each pool's admin endpoint (`GET …/rollout`), summed: exact where each URL is one pool (the local stack, a
 * list of pod addresses), wrong behind a Service, whose every call reaches one pod of many.
 */
export function poolsEvidence(client: PoolClient, pools: readonly Pool[]): EvidenceSource {
  return {
    describe: `the pools' admin endpoints (${pools.map((p) => p.name).join(", ")})`,
    async read(state) {
      const fleet = fleetOf(await client.status(pools, state.model));
      const notes = fleet.unreachable.map((u) => `not reachable: ${u.pool.name} (${u.error})`);
      const e = fleet.evidence;
      return e && e.id === state.id && e.step === state.step ? { evidence: e, notes } : { notes };
    },
  };
}

/**
 * The pods' own counters as each cluster's Prometheus scraped them (`edgecascade_rollout_step_evidence`),
 * summed by one query per cluster: every pod is one scrape target, so each is counted once, whichever pods a
 * Service would have sent calls to; pods added mid-step count from their first scrape.
 */
export function prometheusSource(urls: readonly string[]): EvidenceSource {
  return {
    describe: `Prometheus (${urls.join(", ")})`,
    async read(state) {
      const notes: string[] = [];
      let sum: StepEvidence | undefined;
      for (const url of urls) {
        try {
          const e = await prometheusEvidence(url, state);
          if (e) sum = sum ? addEvidence(sum, e) : e;
        } catch (err) {
          notes.push(`Prometheus ${url}: ${(err as Error).message}`);
        }
      }
      return sum ? { evidence: sum, notes } : { notes };
    },
  };
}
