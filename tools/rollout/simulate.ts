import { nearestRank } from "../../protocol/quantile.ts";
import type { RolloutConfig } from "../../protocol/rollout/config.ts";
import { emptyEvidence, type StepEvidence } from "../../protocol/rollout/evidence.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { seededRandom } from "../../protocol/seeded-random.ts";
import { decideStep, nextState, startState } from "./decide.ts";
import type { TestName } from "./sequential-tests.ts";

/** How a simulated candidate really differs from the stable version. */
export interface Effects {
  /** Chance a run fails: stable, candidate. */
  errors: { stable: number; candidate: number };
  /** Chance that a run in the slowest part of a block of shadow pairs is the candidate's (0.5: as fast). */
  slow: number;
  /** Chance a row's labels differ. */
  disagreement: number;
}

export const IDENTICAL: Effects = { errors: { stable: 0, candidate: 0 }, slow: 0.5, disagreement: 0 };

/** The traffic the pools see between two reads of the controller. */
export interface Traffic {
  /** Live requests (one row each) per controller tick. */
  requestsPerTick: number;
  /** Share of them that get a shadow run of both versions (the rest are dropped or not sampled). */
  shadowShare: number;
}

export interface SimulatedRollout {
  outcome: "promoted" | "rolled-back" | "undecided";
  /** The breached test, for a rollback. */
  test?: TestName;
  /** The step (index) it ended at. */
  step: number;
  /** Live requests until the decision. */
  requests: number;
  /** Live requests each step took (the last one until the decision). */
  perStep: number[];
}

/**
 * One rollout of a candidate with `effects`, decided exactly as the controller decides (decideStep on the
 * step's evidence after every tick), on simulated counts: each live request goes to the candidate at the
 * step's percent, and a share of them also gets a shadow run of both versions (one row compared, one
 * candidate run timed; every `latency.block` pairs, the block's slowest runs ranked).
 */
export function simulateRollout(
  config: RolloutConfig,
  effects: Effects,
  traffic: Traffic,
  random: () => number,
  maxTicks = 100_000,
): SimulatedRollout {
  const now = new Date(0);
  let state: RolloutState = startState({ model: "m", stable: "1", candidate: "2", config, revision: 1, now });
  let evidence: StepEvidence = emptyEvidence(state.id, 0);
  const perStep = [0];
  let requests = 0;
  const hit = (p: number) => random() < p;
  for (let tick = 0; tick < maxTicks; tick++) {
    const percent = config.steps[state.step]! / 100;
    for (let i = 0; i < traffic.requestsPerTick; i++) {
      requests++;
      perStep[perStep.length - 1]!++;
      const toCandidate = hit(percent);
      const live = toCandidate ? evidence.candidate : evidence.stable;
      live.runs++;
      if (hit(toCandidate ? effects.errors.candidate : effects.errors.stable)) live.errors++;
      if (!hit(traffic.shadowShare)) continue;
      evidence.candidate.runs++;
      if (hit(effects.errors.candidate)) evidence.candidate.errors++;
      evidence.stable.runs++;
      if (hit(effects.errors.stable)) evidence.stable.errors++;
      evidence.comparisons.rows++;
      if (hit(effects.disagreement)) evidence.comparisons.disagreements++;
      evidence.latency.pairs++;
      if (evidence.latency.pairs % config.latency.block === 0) {
        const tail = Math.max(1, Math.round((1 - config.latency.quantile) * 2 * config.latency.block));
        evidence.latency.tail += tail;
        for (let t = 0; t < tail; t++) if (hit(effects.slow)) evidence.latency.slow++;
      }
    }
    const decision = decideStep(state, evidence, now.getTime());
    if (decision.action === "wait") continue;
    if (decision.action === "rollback") {
      const test = decision.results.find((r) => r.verdict === "reject")!.test;
      return { outcome: "rolled-back", test, step: state.step, requests, perStep };
    }
    if (decision.action === "promote") return { outcome: "promoted", step: state.step, requests, perStep };
    state = nextState(state, decision, state.revision + 1, now);
    evidence = emptyEvidence(state.id, state.step);
    perStep.push(0);
  }
  return { outcome: "undecided", step: state.step, requests, perStep };
}

export interface Summary {
  runs: number;
  promoted: number;
  rolledBack: number;
  undecided: number;
  /** Rollbacks by the test that breached. */
  byTest: Partial<Record<TestName, number>>;
  /** Mean live requests until the decision, over decided runs. */
  meanRequests: number;
  /** The 95th percentile of the same (nearest rank). */
  p95Requests: number;
}

/** `runs` rollouts from one seed, summed up. */
export function simulateMany(
  config: RolloutConfig,
  effects: Effects,
  traffic: Traffic,
  runs: number,
  seed: number,
): Summary {
  const random = seededRandom(seed);
  const results = Array.from({ length: runs }, () => simulateRollout(config, effects, traffic, random));
  const byTest: Summary["byTest"] = {};
  for (const r of results) if (r.test) byTest[r.test] = (byTest[r.test] ?? 0) + 1;
  const decided = results
    .filter((r) => r.outcome !== "undecided")
    .map((r) => r.requests)
    .sort((a, b) => a - b);
  return {
    runs,
    promoted: results.filter((r) => r.outcome === "promoted").length,
    rolledBack: results.filter((r) => r.outcome === "rolled-back").length,
    undecided: results.filter((r) => r.outcome === "undecided").length,
    byTest,
    meanRequests: decided.length ? decided.reduce((a, b) => a + b, 0) / decided.length : 0,
    p95Requests: decided.length ? nearestRank(decided, 0.95) : 0,
  };
}
