import { ServingError } from "../protocol/errors.ts";
import { addEvidence } from "../protocol/rollout/evidence.ts";
import type { RolloutState } from "../protocol/rollout/state.ts";
import type { IndexEntry, LoadReport, ModelRepository } from "./repository.ts";
import type { RolloutStatus, Rollouts } from "./rollout/rollouts.ts";

/** The pool processes that answered a control call, and whether they agree. */
export interface WorkersAnswered {
  workers?: { answered: number; consistent: boolean };
}

/**
 * What the admin endpoints do to a pool's models: load, unload, and set or read a rollout. One process does
 * it to itself (`localControl`); in a cluster every worker must, whichever one took the connection
 * (`clusterControl`, relayed by the primary).
 */
export interface ModelControl {
  /** The repository index: in a cluster, every worker's rows combined (`combineIndex`). */
  index(): Promise<IndexEntry[]>;
  load(name: string, version?: string): Promise<LoadReport & WorkersAnswered>;
  unload(name: string): Promise<IndexEntry & WorkersAnswered>;
  rollout(state: RolloutState): Promise<RolloutStatus & WorkersAnswered>;
  rolloutStatus(name: string): Promise<RolloutStatus & WorkersAnswered>;
}

export function localControl(repository: ModelRepository, rollouts: Rollouts): ModelControl {
  return {
    index: async () => repository.index(),
    load: (name, version) => repository.load(name, version),
    unload: (name) => repository.unload(name),
    rollout: (state) => rollouts.apply(state),
    rolloutStatus: async (name) => rollouts.status(name),
  };
}

/** One process's answer to a relayed call: its value, or its error in a form that crosses IPC. */
export type Settled<T> =
  | { ok: true; value: T }
  | { ok: false; error: { status: number; code: string; message: string; headers: Record<string, string> } };

export type ControlOp = keyof ModelControl;

/** Run a control call here, for the primary's relay. */
export async function settle<T>(run: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    const known = err instanceof ServingError;
    return {
      ok: false,
      error: {
        status: known ? err.status : 500,
        code: known ? err.code : "internal",
        message: known ? err.message : `internal error: ${(err as Error).message}`,
        headers: known ? err.headers : {},
      },
    };
  }
}

/**
 * Every worker's answer to a change (load, unload, rollout) as one: the first worker's value when all
 * succeeded; otherwise the first failure, saying how many workers it failed in (those that succeeded keep the
 * change, so retrying the same call converges: each of them is idempotent).
 */
export function combineChange<T extends object>(results: readonly Settled<T>[]): T & WorkersAnswered {
  const failed = results.filter((r) => !r.ok);
  if (results.length === 0) throw new ServingError(503, "not_ready", "no worker of this pool answered");
  if (failed.length === 0) {
    const first = (results[0] as { value: T }).value;
    return { ...first, workers: { answered: results.length, consistent: true } };
  }
  const { error } = failed[0] as Extract<Settled<T>, { ok: false }>;
  const message =
    results.length > 1
      ? `${error.message} (in ${failed.length} of ${results.length} workers of this pool)`
      : error.message;
  throw new ServingError(error.status, error.code, message, error.headers);
}

/**
 * Every worker's rollout status as the pool's: the newest state (highest revision), the evidence of the
 * workers at that state's rollout and step summed, and whether all workers hold the same state and versions
 * (a controller re-sends the state to a pool whose workers disagree).
 */
export function combineStatus(results: readonly Settled<RolloutStatus>[]): RolloutStatus & WorkersAnswered {
  const statuses = results.filter((r) => r.ok).map((r) => (r as { value: RolloutStatus }).value);
  if (statuses.length === 0) return combineChange(results);
  const newest = statuses.reduce((a, b) => ((b.state?.revision ?? 0) > (a.state?.revision ?? 0) ? b : a));
  const key = (s: RolloutStatus) => JSON.stringify([s.state?.revision ?? 0, s.serving, s.candidate]);
  let evidence = newest.evidence;
  for (const s of statuses) {
    if (s === newest || !evidence || !s.evidence) continue;
    if (s.evidence.id === evidence.id && s.evidence.step === evidence.step)
      evidence = addEvidence(evidence, s.evidence);
  }
  return {
    ...newest,
    evidence,
    workers: {
      answered: statuses.length,
      consistent: statuses.length === results.length && statuses.every((s) => key(s) === key(newest)),
    },
  };
}

/** Triton's states, the most servable first: a model is in the pod's index as its most servable worker has it. */
const STATE_ORDER: Record<IndexEntry["state"], number> = { READY: 0, LOADING: 1, UNLOADING: 2, UNAVAILABLE: 3 };

/**
 * Every worker's repository index as the pod's: a model with versions serving, loading or retiring in any
 * worker is listed with those rows (each version and state once); one no worker loads is listed once, with the
 * first worker's reason. With models placed on their owning worker (regional/peers/), the pod serves what any
 * of its workers does. Sorted by model as each worker's index is.
 */
export function combineIndex(results: readonly Settled<IndexEntry[]>[]): IndexEntry[] {
  const indexes = results.filter((r) => r.ok).map((r) => (r as { value: IndexEntry[] }).value);
  if (indexes.length === 0) return combineChange(results);
  const byModel = new Map<string, IndexEntry[]>();
  for (const rows of indexes) for (const row of rows) byModel.set(row.name, [...(byModel.get(row.name) ?? []), row]);
  const combined: IndexEntry[] = [];
  for (const name of [...byModel.keys()].sort()) {
    const rows = byModel.get(name)!;
    const loaded = rows.filter((r) => r.state !== "UNAVAILABLE");
    if (loaded.length === 0) {
      combined.push(rows[0]!);
      continue;
    }
    const seen = new Set<string>();
    for (const row of [...loaded].sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state])) {
      const key = `${row.version}\u0000${row.state}\u0000${row.candidate ?? false}`;
      if (!seen.has(key)) combined.push(row);
      seen.add(key);
    }
  }
  return combined;
}

/** Sends a control call to every worker of the pool (through the primary) and collects their answers. */
export type Relay = <T>(op: ControlOp, args: unknown[]) => Promise<Settled<T>[]>;

/** Control of a clustered pool: every call runs in every worker, whichever worker took the connection. */
export function clusterControl(relay: Relay): ModelControl {
  return {
    index: async () => combineIndex(await relay<IndexEntry[]>("index", [])),
    // IPC carries JSON: an undefined argument would arrive as null.
    load: async (name, version) =>
      combineChange(await relay<LoadReport>("load", version === undefined ? [name] : [name, version])),
    unload: async (name) => combineChange(await relay<IndexEntry>("unload", [name])),
    rollout: async (state) => combineChange(await relay<RolloutStatus>("rollout", [state])),
    rolloutStatus: async (name) => combineStatus(await relay<RolloutStatus>("rolloutStatus", [name])),
  };
}
