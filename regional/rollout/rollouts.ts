import { createHash } from "node:crypto";
import { BadRequest, Conflict, ServingError } from "../../protocol/errors.ts";
import { assignmentBytes, bucketOf, inCanary } from "../../protocol/rollout/assignment.ts";
import type { StepEvidence } from "../../protocol/rollout/evidence.ts";
import { gatesProblem } from "../../protocol/rollout/gates.ts";
import {
  checkTransition,
  percentOf,
  type RolloutState,
  type RolloutView,
  viewOf,
} from "../../protocol/rollout/state.ts";
import type { InputRows } from "../../protocol/tensor.ts";
import type { Logger } from "../log.ts";
import type { Lease, ModelVersion } from "../model-version.ts";
import type { Recorder, RolloutRecorder } from "../recorder.ts";
import type { ModelRepository } from "../repository.ts";
import { applyPlan } from "./apply-plan.ts";
import { ShadowRunner } from "./shadow.ts";
import { StepCounters } from "./step-evidence.ts";

/** What the admin endpoint answers for a model: its rollout, this process's evidence, the versions loaded. */
export interface RolloutStatus {
  model: string;
  state: RolloutState | null;
  /** Counts of the current step (null without a running rollout). */
  evidence: StepEvidence | null;
  serving: string | null;
  /** The candidate version loaded beside the serving one, if any. */
  candidate: string | null;
}

interface ModelRollout {
  state?: RolloutState;
  counters: StepCounters;
  shadow: ShadowRunner;
  recorder: RolloutRecorder;
  /** Changes of one model apply one after another. */
  tail: Promise<unknown>;
}

/** A rollout start refused because the candidate has no passing gates record for its file. */
export class GatesNotPassed extends ServingError {
  constructor(message: string) {
    super(409, "gates_not_passed", message);
  }
}

/**
 * The rollouts of one pool process, one per model at most: their state (set through the admin endpoint by the
 * controller, which holds none), the canary routing of live requests, the shadow runs and the evidence the
 * controller's tests read. Versions themselves live in the repository: a rollout loads its candidate beside
 * the serving version, promotes it or drops it.
 */
export class Rollouts {
  readonly #repository: ModelRepository;
  readonly #recorder: Recorder;
  readonly #log: Logger;
  readonly #models = new Map<string, ModelRollout>();
  readonly #shadowClock: (() => number) | undefined;

  /** `shadowClock`: the milliseconds shadow runs are timed by (default `performance.now`). */
  constructor(repository: ModelRepository, recorder: Recorder, log: Logger, shadowClock?: () => number) {
    this.#repository = repository;
    this.#recorder = recorder;
    this.#log = log;
    this.#shadowClock = shadowClock;
  }

  #entry(name: string): ModelRollout {
    let entry = this.#models.get(name);
    if (!entry) {
      const counters = new StepCounters();
      const recorder = this.#recorder.rollout(name);
      const running = () => (entry!.state?.phase === "running" ? entry!.state : undefined);
      const shadow = new ShadowRunner({
        pair: () => {
          if (!running()) return undefined;
          const { serving, candidate } = this.#repository.versions(name);
          return serving && candidate ? { stable: serving, candidate } : undefined;
        },
        now: this.#shadowClock,
        maxQueue: () => running()?.config.shadow.maxQueue ?? 0,
        sample: () => running()?.config.shadow.sample ?? 0,
        record: (result) => {
          counters.shadow(result);
          if (result.stableMs !== undefined && result.candidateMs !== undefined) {
            recorder.compared(result.rows, result.disagreements);
          }
        },
        // The evidence counts a failed run as an error of its version; why it failed is said here.
        failed: (version, error) => {
          const fields = { model: name, version: version?.version ?? null, reason: error.message };
          this.#log("warn", "shadow run failed", fields);
          this.#recorder.backgroundFailure("shadow-run", name, version?.version ?? "");
        },
      });
      recorder.evidence(() => (running() ? counters.snapshot() : null));
      entry = { counters, shadow, recorder, tail: Promise.resolve() };
      this.#models.set(name, entry);
    }
    return entry;
  }

  #running(name: string): RolloutState | undefined {
    const state = this.#models.get(name)?.state;
    return state?.phase === "running" ? state : undefined;
  }

  /** What the edge and clients may know (model metadata, answers' headers), if the model has had a rollout. */
  view(name: string): RolloutView | undefined {
    const state = this.#models.get(name)?.state;
    return state ? viewOf(state) : undefined;
  }

  status(name: string): RolloutStatus {
    const { serving, candidate } = this.#repository.versions(name);
    const entry = this.#models.get(name);
    const state = entry?.state ?? null;
    return {
      model: name,
      state,
      evidence: state?.phase === "running" ? entry!.counters.snapshot() : null,
      serving: serving?.version ?? null,
      candidate: candidate?.version ?? null,
    };
  }

  /**
   * The version a live request runs on: during a canary, a request whose input hashes into the canary's share
   * goes to the candidate (its lease replaces `lease`). A request that pinned a version keeps it.
   */
  route(lease: Lease, rows: InputRows, pinned: boolean): Lease {
    const state = this.#running(lease.model.name);
    if (!state || pinned || lease.model.version !== state.stable) return lease;
    const percent = percentOf(state);
    if (percent <= 0) return lease;
    const candidate = this.#repository.versions(state.model).candidate;
    if (!candidate) return lease;
    if (percent < 100) {
      const digest = createHash("sha256")
        .update(assignmentBytes(state.model, state.candidate, rows.data))
        .digest();
      if (!inCanary(bucketOf(digest), percent)) return lease;
    }
    const routed = candidate.lease();
    lease.release();
    return routed;
  }

  /**
   * After a live answer of `version` was computed (`ok`), or its run failed: count it, and offer a copy of the
   * rows to the shadow runner. Cheap and synchronous; the shadow work happens later, off the request's path.
   */
  afterAnswer(version: ModelVersion, rows: InputRows, ok: boolean): void {
    const state = this.#running(version.name);
    if (!state) return;
    const role =
      version.version === state.candidate ? "candidate" : version.version === state.stable ? "stable" : undefined;
    if (!role) return;
    const entry = this.#entry(state.model);
    entry.counters.live(role, ok);
    if (!ok) return;
    const queued = entry.shadow.offer(rows);
    if (queued === undefined) return;
    entry.counters.offered(queued);
    entry.recorder.shadow(queued ? "queued" : "dropped");
  }

  /**
   * Take on a new state (the admin PUT): check the transition against this process's state and serving
   * version, then load, promote or drop the candidate as it requires. Refusals are ServingErrors saying why;
   * on a failed candidate load nothing changes.
   */
  apply(next: RolloutState): Promise<RolloutStatus> {
    const name = next.model;
    this.#repository.versions(name); // 404 for an unknown model, before anything else
    const entry = this.#entry(name);
    const result = entry.tail.then(() => this.#apply(entry, next));
    entry.tail = result.catch(() => {});
    return result;
  }

  async #apply(entry: ModelRollout, next: RolloutState): Promise<RolloutStatus> {
    const name = next.model;
    const serving = this.#repository.versions(name).serving?.version;
    const check = checkTransition(entry.state, next, serving);
    if (!check.ok) throw check.status === 400 ? new BadRequest(check.message) : new Conflict(check.message);
    const plan = applyPlan(check.transition.kind);
    for (const action of plan.actions) {
      if (action === "check-gates") await this.#requirePassingGates(name, next.candidate);
      if (action === "load") {
        await this.#repository.loadCandidate(name, next.candidate);
        entry.recorder.started(next.candidate);
      }
      if (action === "promote") await this.#repository.promoteCandidate(name);
      if (action === "drop") await this.#repository.dropCandidate(name);
    }
    if (!plan.takeState) return this.status(name);

    entry.state = next;
    const percent = percentOf(next);
    this.#repository.candidateServes(name, next.phase === "running" && percent > 0);
    entry.counters.at(next.id, next.step, next.config.latency);
    if (next.phase !== "running") entry.shadow.clear();
    if (plan.setPercent) entry.recorder.percent(next.candidate, percent);
    if (plan.ended === "rolled-back") entry.recorder.rolledBack();
    if (plan.ended === "promoted") entry.recorder.promoted();
    if (plan.log) {
      const fields = {
        model: name,
        id: next.id,
        revision: next.revision,
        stable: next.stable,
        candidate: next.candidate,
        percent,
      };
      this.#log(plan.log.level, plan.log.message, { ...fields, ...(next.reason ? { reason: next.reason } : {}) });
    }
    return this.status(name);
  }

  /** A rollout starts only for a file whose gates (`npm run model -- check`) passed, recorded for its sha256. */
  async #requirePassingGates(name: string, version: string): Promise<void> {
    const problem = gatesProblem(await this.#repository.configOnDisk(name), version);
    if (problem?.missing) throw new BadRequest(`model "${name}" has no version ${version} in config.json`);
    if (problem) throw new GatesNotPassed(problem.reason);
  }
}
