import { addEvidence, type StepEvidence } from "../../protocol/rollout/evidence.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import type { PoolAnswer } from "./client.ts";
import type { Pool } from "./pools.ts";

/** Every pool's answer about one model, read together. */
export interface Fleet {
  /** The newest state any pool holds (the highest revision): the rollout as it is. */
  newest: RolloutState | undefined;
  /** Pools that answered with an older state, or whose workers disagree: they are sent `newest` again. */
  behind: Pool[];
  unreachable: { pool: Pool; error: string }[];
  /** The evidence of the pools at the newest state's rollout and step, summed. */
  evidence: StepEvidence | undefined;
  /** Pools by the version they serve. */
  serving: Map<string, string[]>;
}

export function fleetOf(answers: readonly PoolAnswer[]): Fleet {
  const ok = answers.filter((a) => a.ok);
  const unreachable = answers.flatMap((a) => (a.ok ? [] : [{ pool: a.pool, error: a.error }]));
  let newest: RolloutState | undefined;
  for (const a of ok) {
    const s = a.status.state;
    if (s && (!newest || s.revision > newest.revision)) newest = s;
  }
  const behind = ok
    .filter(
      (a) => newest && ((a.status.state?.revision ?? 0) < newest.revision || a.status.workers?.consistent === false),
    )
    .map((a) => a.pool);
  let evidence: StepEvidence | undefined;
  for (const a of ok) {
    const e = a.status.evidence;
    if (!newest || !e || e.id !== newest.id || e.step !== newest.step) continue;
    evidence = evidence ? addEvidence(evidence, e) : e;
  }
  const serving = new Map<string, string[]>();
  for (const a of ok) {
    const v = a.status.serving ?? "none";
    serving.set(v, [...(serving.get(v) ?? []), a.pool.name]);
  }
  return { newest, behind, unreachable, evidence, serving };
}
