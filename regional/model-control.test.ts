import { describe, expect, it } from "vitest";
import { ServingError } from "../protocol/errors.ts";
import { rolloutConfig } from "../protocol/rollout/config.ts";
import { emptyEvidence, type StepEvidence } from "../protocol/rollout/evidence.ts";
import type { RolloutState } from "../protocol/rollout/state.ts";
import { combineChange, combineIndex, combineStatus, type Settled } from "./model-control.ts";
import type { IndexEntry } from "./model-life.ts";
import type { RolloutStatus } from "./rollout/rollouts.ts";

const ok = <T>(value: T): Settled<T> => ({ ok: true, value });
const failed = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  ({ ok: false, error: { status, code, message, headers } }) as const;

/** A running rollout of digits 1 → 2, started at revision 1 and now at `revision`, step `step`. */
function state(revision: number, step = 0): RolloutState {
  const at = "2026-12-01T00:00:00.000Z";
  return {
    model: "digits",
    id: 1,
    revision,
    stable: "1",
    candidate: "2",
    step,
    phase: "running",
    config: rolloutConfig(),
    startedAt: at,
    stepStartedAt: at,
  };
}

function evidence(step: number, candidateRuns: number, id = 1): StepEvidence {
  const e = emptyEvidence(id, step);
  return { ...e, candidate: { runs: candidateRuns, errors: 0 }, shadowMs: { stable: candidateRuns, candidate: null } };
}

function status(revision: number, ev: StepEvidence | null, candidate: string | null = "2"): RolloutStatus {
  return { model: "digits", state: state(revision, ev?.step ?? 0), evidence: ev, serving: "1", candidate };
}

function thrown(run: () => unknown): ServingError {
  try {
    run();
  } catch (err) {
    return err as ServingError;
  }
  throw new Error("did not throw");
}

describe("combineChange", () => {
  it("answers the first worker's value when every worker succeeded, counting them", () => {
    const combined = combineChange([ok({ name: "digits", version: "2" }), ok({ name: "digits", version: "2" })]);
    expect(combined).toEqual({ name: "digits", version: "2", workers: { answered: 2, consistent: true } });
  });

  it("throws the first failure with its status, code and headers, saying in how many workers it failed", () => {
    const err = thrown(() =>
      combineChange([
        ok({ name: "digits" }),
        failed(400, "load_failed", "checksum mismatch", { "x-a": "1" }),
        failed(503, "not_ready", "later"),
      ]),
    );
    expect(err).toBeInstanceOf(ServingError);
    expect(err).toMatchObject({
      status: 400,
      code: "load_failed",
      message: "checksum mismatch (in 2 of 3 workers of this pool)",
      headers: { "x-a": "1" },
    });
  });

  it("keeps a lone worker's message as it is", () => {
    const err = thrown(() => combineChange([failed(404, "not_found", 'unknown model "x"')]));
    expect(err).toMatchObject({ status: 404, code: "not_found", message: 'unknown model "x"' });
  });

  it("is a 503 when no worker answered", () => {
    const err = thrown(() => combineChange([]));
    expect(err).toMatchObject({ status: 503, code: "not_ready", message: "no worker of this pool answered" });
  });
});

describe("combineStatus", () => {
  it("takes the newest state and sums the evidence of the workers at its rollout and step", () => {
    const combined = combineStatus([ok(status(3, evidence(1, 5))), ok(status(3, evidence(1, 7)))]);
    expect(combined.state?.revision).toBe(3);
    expect(combined.evidence?.candidate.runs).toBe(12);
    // Display quantiles are the highest of the workers', not a sum.
    expect(combined.evidence?.shadowMs.stable).toBe(7);
    expect(combined.workers).toEqual({ answered: 2, consistent: true });
  });

  it("answers the highest revision whichever worker holds it, and leaves out evidence of another step", () => {
    const combined = combineStatus([ok(status(2, evidence(0, 5))), ok(status(4, evidence(1, 7)))]);
    expect(combined.state?.revision).toBe(4);
    expect(combined.evidence).toMatchObject({ step: 1, candidate: { runs: 7, errors: 0 } });
    expect(combined.workers).toEqual({ answered: 2, consistent: false });
  });

  it("leaves out evidence of another rollout at the same step", () => {
    const combined = combineStatus([ok(status(3, evidence(1, 5))), ok(status(3, evidence(1, 7, 2)))]);
    expect(combined.evidence?.candidate.runs).toBe(5);
  });

  it("is inconsistent when workers hold different candidates at one revision", () => {
    const combined = combineStatus([ok(status(3, evidence(1, 5))), ok(status(3, evidence(1, 1), null))]);
    expect(combined.workers).toEqual({ answered: 2, consistent: false });
    expect(combined.evidence?.candidate.runs).toBe(6);
  });

  it("is inconsistent when a worker failed, answering from those that did not", () => {
    const combined = combineStatus([ok(status(3, evidence(1, 5))), failed(500, "internal", "boom")]);
    expect(combined.workers).toEqual({ answered: 1, consistent: false });
    expect(combined.evidence?.candidate.runs).toBe(5);
  });

  it("treats no rollout as revision 0 and keeps null evidence", () => {
    const none: RolloutStatus = { model: "digits", state: null, evidence: null, serving: "1", candidate: null };
    expect(combineStatus([ok(none), ok(none)])).toEqual({ ...none, workers: { answered: 2, consistent: true } });
  });

  it("throws the failure when every worker failed", () => {
    const err = thrown(() => combineStatus([failed(404, "not_found", "no such model")]));
    expect(err).toMatchObject({ status: 404, message: "no such model" });
  });
});

describe("combineIndex", () => {
  it("lists a model as its most servable worker has it, each version and state once", () => {
    const a: IndexEntry[] = [
      { name: "digits", version: "1", state: "READY" },
      { name: "iris", state: "UNAVAILABLE", reason: "not loaded; loads on its first request" },
      { name: "wine", state: "UNAVAILABLE", reason: "not loaded; loads on its first request" },
    ];
    const b: IndexEntry[] = [
      { name: "digits", version: "1", state: "READY" },
      { name: "iris", version: "1", state: "UNLOADING" },
      { name: "iris", version: "2", state: "READY" },
      { name: "wine", state: "UNAVAILABLE", reason: "evicted to fit the memory budget" },
    ];
    expect(combineIndex([ok(a), ok(b)])).toEqual([
      { name: "digits", version: "1", state: "READY" },
      { name: "iris", version: "2", state: "READY" },
      { name: "iris", version: "1", state: "UNLOADING" },
      { name: "wine", state: "UNAVAILABLE", reason: "not loaded; loads on its first request" },
    ]);
  });

  it("answers with the failure when no worker answered", () => {
    expect(() => combineIndex([failed(503, "not_ready", "worker 1 did not answer")])).toThrow(
      "worker 1 did not answer",
    );
  });
});
