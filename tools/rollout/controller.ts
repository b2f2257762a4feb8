import type { RolloutState } from "../../protocol/rollout/state.ts";
import type { PoolClient } from "./client.ts";
import { decideStep, nextState } from "./decide.ts";
import { type Fleet, fleetOf } from "./fleet.ts";
import type { Pool } from "./pools.ts";
import { decisionLines, evidenceLines, promotionNote, rolloutLine } from "./report.ts";

export interface ControllerOptions {
  client: PoolClient;
  pools: readonly Pool[];
  model: string;
  /** Milliseconds between reads of the pools. Default 1000. */
  intervalMs?: number;
  /** Milliseconds between progress lines while waiting. Default 10000. */
  progressMs?: number;
  log: (line: string) => void;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Send the newest state to the pools that are behind it (restarted, new, or whose workers disagree), so that
 * every pool converges on one state; returns the pools that refused or could not be reached.
 */
export async function syncPools(
  client: PoolClient,
  fleet: Fleet,
  log: (line: string) => void,
): Promise<{ pool: Pool; error: string }[]> {
  if (!fleet.newest || fleet.behind.length === 0) return [];
  const answers = await client.put(fleet.behind, fleet.newest);
  for (const a of answers) {
    log(
      a.ok
        ? `  synced ${a.pool.name} to revision ${fleet.newest.revision}`
        : `  could not sync ${a.pool.name}: ${a.error}`,
    );
  }
  return answers.flatMap((a) => (a.ok ? [] : [{ pool: a.pool, error: a.error }]));
}

/**
 * `npm run rollout -- run`: the controller loop. It holds no state: each tick it reads every pool, takes the
 * newest rollout state, brings lagging pools up to it, sums the current step's evidence, applies the
 * sequential tests and moves the rollout (next step, promotion, or rollback at the first breach) by sending
 * the next state to every pool. Prints each decision with its evidence; resolves with how the rollout ended.
 */
export async function runController(options: ControllerOptions): Promise<"promoted" | "rolled-back"> {
  const { client, pools, model, log } = options;
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const intervalMs = options.intervalMs ?? 1000;
  const progressMs = options.progressMs ?? 10_000;
  let lastProgress = 0;
  let lastUnreachable = "";
  let announced = 0;
  for (;;) {
    const fleet = fleetOf(await client.status(pools, model));
    const unreachable = fleet.unreachable.map((u) => `${u.pool.name} (${u.error})`).join(", ");
    if (unreachable !== lastUnreachable) {
      log(unreachable ? `  not answered: ${unreachable}` : "  every pool answers");
      lastUnreachable = unreachable;
    }
    const state = fleet.newest;
    if (!state) throw new Error(`no pool holds a rollout of ${model}; start one with npm run rollout -- start`);
    if (state.revision !== announced) {
      log(rolloutLine(state));
      announced = state.revision;
    }
    await syncPools(client, fleet, log);
    if (state.phase !== "running") {
      if (state.phase === "promoted") log(promotionNote(state));
      return state.phase;
    }
    if (fleet.evidence) {
      const at = now();
      const decision = decideStep(state, fleet.evidence, at.getTime());
      if (decision.action === "wait") {
        if (at.getTime() - lastProgress >= progressMs) {
          lastProgress = at.getTime();
          log(`${at.toISOString().slice(11, 19)} waiting (${decision.why})`);
          for (const line of evidenceLines(state, fleet.evidence)) log(`  ${line}`);
        }
      } else {
        for (const line of decisionLines(state, decision, at)) log(line);
        const next: RolloutState = nextState(state, decision, state.revision + 1, at);
        for (const a of await client.put(pools, next)) {
          if (!a.ok)
            log(`  ${a.pool.name} did not take revision ${next.revision} (${a.error}); it is sent again next tick`);
        }
        lastProgress = 0;
        continue;
      }
    }
    await sleep(intervalMs);
  }
}
