import * as v from "valibot";
import { parseRolloutState, type RolloutState } from "../rollout/state.ts";
import { parseOrDescribe } from "../schema-message.ts";

/**
 * A model's served state, `<model>/served.json` in the registry: the version every pool and isolate serves
 * outside a canary, the model's newest rollout (running or ended), and a revision that orders every change.
 * `npm run model -- publish` writes the first one, `npm run rollout` every later one; pools and the Worker only
 * read it. A rollout's state carries the revision of the write that made it, so the pools' own revision check
 * (protocol/rollout/state.ts `checkTransition`) orders registry writes as it ordered the controller's calls.
 */
export interface ServedState {
  model: string;
  /** 1 for the first write; every write adds one. */
  revision: number;
  /** Served outside a canary: the rollout's stable version while it runs, its candidate once promoted. */
  version: string;
  rollout?: RolloutState;
  /** ISO time of the write. */
  updatedAt: string;
  /** Why the version changed last (a promotion, a rollback, the first publication). */
  reason?: string;
}

const outer = v.strictObject({
  model: v.pipe(v.string(), v.nonEmpty("must not be empty")),
  revision: v.pipe(v.number(), v.integer("must be an integer"), v.minValue(1, "must be 1 or more")),
  version: v.pipe(v.string(), v.regex(/^\d+$/, 'must be a version number such as "2"')),
  rollout: v.optional(v.unknown()),
  updatedAt: v.string(),
  reason: v.optional(v.pipe(v.string(), v.maxLength(2000, "must be at most 2000 characters"))),
});

/** `served.json` as read from the registry, checked; the message names the field. */
export function parseServedState(raw: unknown): { ok: true; value: ServedState } | { ok: false; message: string } {
  const parsed = parseOrDescribe(outer, raw);
  if (!parsed.ok) return parsed;
  const { rollout, ...rest } = parsed.value;
  if (rollout === undefined) return { ok: true, value: rest };
  const state = parseRolloutState(rollout);
  if (!state.ok) return { ok: false, message: `"rollout": ${state.message}` };
  const problem =
    state.value.model !== rest.model
      ? `"rollout" is of model "${state.value.model}", not "${rest.model}"`
      : state.value.revision > rest.revision
        ? `"rollout.revision" ${state.value.revision} is above "revision" ${rest.revision}`
        : rest.version !== servedVersionOf(state.value)
          ? `"version" ${rest.version} is not the one rollout ${state.value.id} serves (${servedVersionOf(state.value)})`
          : undefined;
  return problem ? { ok: false, message: problem } : { ok: true, value: { ...rest, rollout: state.value } };
}

/** The version a rollout state serves outside its canary: the candidate once promoted, else the stable one. */
export function servedVersionOf(rollout: RolloutState): string {
  return rollout.phase === "promoted" ? rollout.candidate : rollout.stable;
}

/** A model's first served state, at its publication. */
export function firstServedState(model: string, version: string, at: Date): ServedState {
  return { model, revision: 1, version, updatedAt: at.toISOString(), reason: `version ${version} published` };
}

/** The revision the next write of `current` takes: a rollout state made for it carries the same one. */
export function nextRevision(current: ServedState): number {
  return current.revision + 1;
}

/** `current` with a new rollout state (a start, a step, a promotion, a rollback) made at `nextRevision`. */
export function withRollout(current: ServedState, rollout: RolloutState, at: Date): ServedState {
  if (rollout.model !== current.model) throw new Error(`rollout of ${rollout.model} written to ${current.model}`);
  if (rollout.revision !== nextRevision(current)) {
    throw new Error(`rollout revision ${rollout.revision} is not the next of ${current.model}'s ${current.revision}`);
  }
  const version = servedVersionOf(rollout);
  return {
    model: current.model,
    revision: rollout.revision,
    version,
    rollout,
    updatedAt: at.toISOString(),
    ...(version !== current.version
      ? { reason: rollout.reason ?? `rollout ${rollout.id}` }
      : current.reason
        ? { reason: current.reason }
        : {}),
  };
}

/**
 * Back from a promotion: the promoted rollout is marked rolled back and its stable version served again (pools
 * swap it in, isolates look answers up under it). Refused unless the newest rollout was promoted and still serves.
 */
export function rolledBackFromPromotion(current: ServedState, reason: string, at: Date): ServedState {
  const r = current.rollout;
  if (r?.phase !== "promoted" || current.version !== r.candidate) {
    throw new Error(`${current.model} serves version ${current.version} with no promoted rollout to undo`);
  }
  const revision = nextRevision(current);
  const iso = at.toISOString();
  const rollout: RolloutState = { ...r, revision, phase: "rolled-back", reason, endedAt: iso };
  return { model: current.model, revision, version: r.stable, rollout, updatedAt: iso, reason };
}
