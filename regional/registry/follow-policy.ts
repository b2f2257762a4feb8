import type { ModelConfig } from "../../protocol/model-config.ts";
import { edgeVersionFor } from "../../protocol/registry/edge-view.ts";
import type { ServedState } from "../../protocol/registry/served-state.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";

/**
 * How one pool process converges on a model's served state (pure): the steps, in order, that take what it
 * serves and the rollout it holds to what the registry says. Each step is what an operator's call did before
 * the registry (a load with its swap, a rollout state through `checkTransition`), so every check still applies.
 */

/** What this process holds of a model. */
export interface PoolModelView {
  /** The version serving, if any. */
  serving: string | undefined;
  /** The rollout state it holds (its newest), if any. */
  rollout: RolloutState | undefined;
  /**
   * It is not loaded now and loads on its first request (`--load-policy on-demand`, not pinned): that load takes
   * the version the config written for it names, the served one, so a load of its own would only spend memory.
   */
  loadsOnDemand?: boolean;
}

export type FollowStep =
  /** Take on a rollout state (start: load the candidate; promote, adopt, roll back, record). */
  | { type: "rollout"; state: RolloutState }
  /** Load this version and swap it in (warm-up and checks first; a failure keeps the serving version). */
  | { type: "load"; version: string };

/** The steps that bring `pool` to `served`; none when it is there. */
export function followSteps(served: ServedState, pool: PoolModelView): FollowStep[] {
  const steps: FollowStep[] = [];
  const wanted = served.rollout;
  const held = pool.rollout;
  const newer = wanted !== undefined && wanted.revision > (held?.revision ?? 0);
  let serving = pool.serving;
  let running = held?.phase === "running";
  let applied = !newer;
  // A rollout this process runs, ended in the registry: promote or roll it back first (a load is refused meanwhile).
  if (newer && running && wanted.id === held!.id && wanted.phase !== "running") {
    steps.push({ type: "rollout", state: wanted });
    if (wanted.phase === "promoted") serving = wanted.candidate;
    running = false;
    applied = true;
  }
  // A rollout this process still runs while the registry holds a later one (it missed the end within one poll, a
  // partition): end it as the registry ended it, told by what the later one is over (its stable is the old
  // candidate after a promotion), at a revision between the two, then go on as for any newer state.
  if (newer && running && wanted.id !== held!.id) {
    const promoted =
      wanted.phase === "running" ? wanted.stable === held!.candidate : served.version === held!.candidate;
    const ended: RolloutState = {
      ...held!,
      revision: held!.revision + 1,
      phase: promoted ? "promoted" : "rolled-back",
      reason: `ended while this pool did not hear (the registry has rollout ${wanted.id} at revision ${wanted.revision})`,
    };
    steps.push({ type: "rollout", state: ended });
    if (promoted) serving = held!.candidate;
    running = false;
  }
  // Outside a rollout, serve the served version (a restarted pod, a rollback after a promotion).
  if (!running && serving !== served.version) {
    steps.push({ type: "load", version: served.version });
    serving = served.version;
  }
  // Then the rollout state itself: a start loads the candidate beside the version just made to serve.
  if (!applied && wanted) steps.push({ type: "rollout", state: wanted });
  // Loaded on demand and not loaded now: its next request loads the served version, within the memory budget.
  // Only a running rollout needs it serving now (its canary runs beside the serving version); an ended one's
  // state is not kept for a model that does not serve here.
  const canary = steps.some((step) => step.type === "rollout" && step.state.phase === "running");
  if (pool.loadsOnDemand && !canary) return [];
  return steps;
}

/** The versions of a full model this process needs on disk: the served one, and a running rollout's candidate. */
export function versionsNeeded(served: ServedState): string[] {
  const r = served.rollout;
  return r?.phase === "running" && r.candidate !== served.version ? [served.version, r.candidate] : [served.version];
}

/**
 * The version a model without a served state of its own serves: an edge variant follows its full model (the
 * version calibrated against the served one, as at the edge); otherwise its config's.
 */
export function followedVersion(config: ModelConfig, full: ServedState | undefined): string | undefined {
  if (config.standsFor && full) return edgeVersionFor(config, full.version);
  return config.versions[config.version] ? config.version : undefined;
}
