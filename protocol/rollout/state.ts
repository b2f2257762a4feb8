import * as v from "valibot";
import { parseOrDescribe } from "../schema-message.ts";
import { configProblem, type RolloutConfig, rolloutConfigSchema } from "./config.ts";

/** Where a rollout is: running its steps, or ended by promotion or rollback. */
export type RolloutPhase = "running" | "promoted" | "rolled-back";

/**
 * One model's rollout as every pool holds it. Controllers move it by handing pools a new state with a higher
 * `revision` (PUT .../rollout); a pool that missed changes (a restart, a new pod) catches up from whichever
 * state is newest. Times are ISO strings set by the controller.
 */
export interface RolloutState {
  model: string;
  /** The revision at which this rollout started: the same `id` is the same rollout. */
  id: number;
  /** Increases with every change, across rollouts of the model. */
  revision: number;
  /** The version serving outside the canary when the rollout started. */
  stable: string;
  candidate: string;
  /** Index into `config.steps`. */
  step: number;
  phase: RolloutPhase;
  config: RolloutConfig;
  /** Why it ended (the breached test and its evidence, or who promoted it). */
  reason?: string;
  startedAt: string;
  stepStartedAt: string;
  endedAt?: string;
}

const version = v.pipe(v.string(), v.regex(/^\d+$/, 'must be a version number such as "2"'));
const revision = v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be 1 or more"));

const stateSchema = v.strictObject({
  model: v.pipe(v.string(), v.nonEmpty("must not be empty")),
  id: revision,
  revision,
  stable: version,
  candidate: version,
  step: v.pipe(v.number(), v.integer("must be an integer"), v.minValue(0, "must be 0 or more")),
  phase: v.picklist(["running", "promoted", "rolled-back"]),
  config: rolloutConfigSchema,
  reason: v.optional(v.pipe(v.string(), v.maxLength(2000, "must be at most 2000 characters"))),
  startedAt: v.string(),
  stepStartedAt: v.string(),
  endedAt: v.optional(v.string()),
});

/** A state as a client sent it, checked; the error names the field. */
export function parseRolloutState(raw: unknown): { ok: true; value: RolloutState } | { ok: false; message: string } {
  const parsed = parseOrDescribe(stateSchema, raw);
  if (!parsed.ok) return parsed;
  const state = parsed.value;
  const problem =
    configProblem(state.config) ??
    (state.step >= state.config.steps.length
      ? `"step" ${state.step} is past the last of ${state.config.steps.length} steps`
      : undefined) ??
    (state.id > state.revision ? `"id" ${state.id} is above "revision" ${state.revision}` : undefined);
  return problem ? { ok: false, message: problem } : { ok: true, value: state };
}

/** Percent of requests the candidate answers in this state. */
export function percentOf(state: RolloutState | undefined): number {
  if (!state || state.phase === "rolled-back") return 0;
  if (state.phase === "promoted") return 100;
  return state.config.steps[state.step]!;
}

/** What a rollout looks like from outside (model metadata, the edge's region status check): no parameters, no evidence. */
export interface RolloutView {
  id: number;
  revision: number;
  stable: string;
  candidate: string;
  phase: RolloutPhase;
  percent: number;
}

export function viewOf(state: RolloutState): RolloutView {
  const { id, revision, stable, candidate, phase } = state;
  return { id, revision, stable, candidate, phase, percent: percentOf(state) };
}

/** What a pool must do to take on a new state. */
export type Transition =
  /** Load the candidate beside the serving version. */
  | { kind: "start" }
  /** A new step of the same rollout: new percent, fresh evidence. */
  | { kind: "step"; fresh: boolean }
  /** The candidate becomes the serving version. */
  | { kind: "promote" }
  /** A promotion this pool never saw the rollout of (a restarted pod): load the candidate and serve it. */
  | { kind: "adopt" }
  | { kind: "rollback" }
  /** Keep the state for the record; nothing to load or retire. */
  | { kind: "record" }
  /** The same state again (a retry): nothing at all. */
  | { kind: "none" };

export type TransitionCheck = { ok: true; transition: Transition } | { ok: false; status: 400 | 409; message: string };

const newer = (a: string, b: string) => BigInt(a) > BigInt(b);

/**
 * Whether a pool holding `current` (if any), serving version `serving`, may take on `next`, and what that
 * takes. Revisions order every change: an older one is refused, the same one must be identical.
 */
export function checkTransition(
  current: RolloutState | undefined,
  next: RolloutState,
  serving: string | undefined,
): TransitionCheck {
  const refuse = (status: 400 | 409, message: string): TransitionCheck => ({ ok: false, status, message });
  const ok = (transition: Transition): TransitionCheck => ({ ok: true, transition });
  if (current && next.revision < current.revision) {
    return refuse(409, `revision ${next.revision} is older than this pool's ${current.revision}`);
  }
  if (current && next.revision === current.revision) {
    return JSON.stringify(next) === JSON.stringify(current)
      ? ok({ kind: "none" })
      : refuse(409, `revision ${next.revision} is already taken by another state`);
  }
  const same = current !== undefined && current.id === next.id;
  if (same && (current.candidate !== next.candidate || current.stable !== next.stable)) {
    return refuse(
      409,
      `rollout ${next.id} is of version ${current.candidate} over ${current.stable}, not ${next.candidate} over ${next.stable}`,
    );
  }
  const running = current?.phase === "running";
  switch (next.phase) {
    case "running":
      if (same && running) {
        if (next.step < current.step)
          return refuse(409, `rollout ${next.id} is at step ${current.step}, past ${next.step}`);
        return ok({ kind: "step", fresh: next.step !== current.step });
      }
      if (running)
        return refuse(
          409,
          `rollout ${current!.id} (version ${current!.candidate}) is running; promote it or roll it back first`,
        );
      if (same) return refuse(409, `rollout ${next.id} has ended (${current!.phase}); start a new one`);
      if (serving !== next.stable) {
        return refuse(
          409,
          `the rollout is over version ${next.stable}, and this pool serves ${serving ?? "no version"}`,
        );
      }
      if (!newer(next.candidate, next.stable)) {
        return refuse(
          400,
          `candidate version ${next.candidate} is not newer than version ${next.stable}: versions only move forward (import the old files as a new version to go back)`,
        );
      }
      return ok({ kind: "start" });
    case "rolled-back":
      return ok({ kind: same && running ? "rollback" : "record" });
    case "promoted":
      if (same && running) return ok({ kind: "promote" });
      if (serving === next.candidate) return ok({ kind: "record" });
      if (serving === next.stable) return ok({ kind: "adopt" });
      return refuse(
        409,
        `rollout ${next.id} promoted version ${next.candidate} over ${next.stable}; this pool serves ${serving ?? "no version"}`,
      );
  }
}
