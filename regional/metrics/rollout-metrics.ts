import { Counter, Gauge, type Registry } from "prom-client";
import type { StepEvidence } from "../../protocol/rollout/evidence.ts";
import { evidenceCounts } from "../../protocol/rollout/evidence-counts.ts";
import type { RolloutRecorder } from "../recorder.ts";

/** The rollouts' series (docs/rollouts.md): the candidate's share, outcomes, shadow runs and the step's evidence. */
export function rolloutMetrics(common: { registers: Registry[] }): (model: string) => RolloutRecorder {
  // Every worker of a pool applies each rollout change, so its counters and gauge are the same in each: the
  // cluster's sum would multiply them by the number of workers; "max" reports them once per pool.
  const oncePerPool = { aggregator: "max", ...common } as const;
  const rolloutPercent = new Gauge({
    name: "edgecascade_rollout_percent",
    help: "Share of requests (percent) the rollout's candidate answers: 0 in shadow or after a rollback, 100 once promoted.",
    labelNames: ["model", "candidate"],
    ...oncePerPool,
  });
  const rollbacks = new Counter({
    name: "edgecascade_rollout_rollbacks_total",
    help: "Rollouts rolled back (a sequential test found the candidate worse, or an operator rolled it back).",
    labelNames: ["model"],
    ...oncePerPool,
  });
  const promotions = new Counter({
    name: "edgecascade_rollout_promotions_total",
    help: "Rollouts whose candidate became the served version.",
    labelNames: ["model"],
    ...oncePerPool,
  });
  const shadowCopies = new Counter({
    name: "edgecascade_rollout_shadow_requests_total",
    help: "Live requests copied for a shadow run of both versions (queued), or dropped because the shadow queue was full.",
    labelNames: ["model", "outcome"],
    ...common,
  });
  const comparedRows = new Counter({
    name: "edgecascade_rollout_shadow_rows_total",
    help: "Rows run by both versions in shadow, by whether their labels agreed.",
    labelNames: ["model", "labels"],
    ...common,
  });
  // The current step's counts of every running rollout, read at scrape time: the controller sums them over pods
  // (Prometheus, `sum by (count)`), the cluster over workers.
  const evidenceReaders = new Map<string, () => StepEvidence | null>();
  new Gauge({
    name: "edgecascade_rollout_step_evidence",
    help: "The running rollout's current step, counted by this pool: live runs, errors, shadow comparisons and latency ranks (label count); the rollout controller sums it over pods.",
    labelNames: ["model", "rollout", "step", "count"],
    ...common,
    collect() {
      this.reset();
      for (const [model, read] of evidenceReaders) {
        const e = read();
        if (!e) continue;
        for (const [count, n] of Object.entries(evidenceCounts(e))) {
          this.set({ model, rollout: String(e.id), step: String(e.step), count }, n);
        }
      }
    },
  });
  return (model) => {
    const candidates = new Set<string>();
    return {
      started(candidate) {
        for (const old of candidates) rolloutPercent.remove({ model, candidate: old });
        candidates.clear();
        candidates.add(candidate);
      },
      percent: (candidate, percent) => rolloutPercent.set({ model, candidate }, percent),
      rolledBack: () => rollbacks.inc({ model }),
      promoted: () => promotions.inc({ model }),
      shadow: (outcome) => shadowCopies.inc({ model, outcome }),
      compared(rows, disagreements) {
        if (rows > disagreements) comparedRows.inc({ model, labels: "agree" }, rows - disagreements);
        if (disagreements > 0) comparedRows.inc({ model, labels: "disagree" }, disagreements);
      },
      evidence: (read) => evidenceReaders.set(model, read),
    };
  };
}
