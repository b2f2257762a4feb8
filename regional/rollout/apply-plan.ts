import type { Transition } from "../../protocol/rollout/state.ts";

/** What the repository is asked to do, in order, for a transition. */
export type CandidateAction = "check-gates" | "load" | "promote" | "drop";

/** What a pool process does to take on a new rollout state (rollouts.ts `apply`), by the transition's kind. */
export interface ApplyPlan {
  actions: CandidateAction[];
  /** Whether the state is taken on at all (a retry of the state held changes nothing). */
  takeState: boolean;
  /** Whether the canary share gauge is set (a state kept for the record changes nothing served). */
  setPercent: boolean;
  /** How the rollout ended here, for its metric. */
  ended?: "promoted" | "rolled-back";
  log?: { level: "info" | "warn"; message: string };
}

const MESSAGES: Record<Exclude<Transition["kind"], "none">, string> = {
  start: "rollout started",
  step: "rollout step",
  promote: "rollout promoted: the candidate serves",
  adopt: "rollout promoted elsewhere: the candidate serves here too",
  rollback: "rollout rolled back: the candidate is retired",
  record: "rollout state recorded",
};

/** The plan for a transition `checkTransition` allowed. */
export function applyPlan(kind: Transition["kind"]): ApplyPlan {
  if (kind === "none") return { actions: [], takeState: false, setPercent: false };
  const actions: CandidateAction[] = [];
  // A candidate serves only after its gates record was checked and its own load checks passed; an adoption
  // (promoted while this process never had the candidate: a worker started since) loads it, then promotes.
  if (kind === "start" || kind === "adopt") actions.push("check-gates", "load");
  if (kind === "adopt" || kind === "promote") actions.push("promote");
  if (kind === "rollback") actions.push("drop");
  const ended = kind === "rollback" ? "rolled-back" : kind === "promote" || kind === "adopt" ? "promoted" : undefined;
  return {
    actions,
    takeState: true,
    setPercent: kind !== "record",
    ...(ended ? { ended } : {}),
    log: { level: kind === "rollback" ? "warn" : "info", message: MESSAGES[kind] },
  };
}
