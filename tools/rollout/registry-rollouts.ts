import { parseModelConfig } from "../../protocol/model-config.ts";
import { CONFIG_FILE } from "../../protocol/registry/layout.ts";
import {
  nextRevision,
  rolledBackFromPromotion,
  type ServedState,
  withRollout,
} from "../../protocol/registry/served-state.ts";
import type { RolloutConfig } from "../../protocol/rollout/config.ts";
import { gatesProblem } from "../../protocol/rollout/gates.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { RegistryError, type S3Registry } from "../../registry/s3-registry.ts";
import { RefusedError } from "../cli/errors.ts";
import { decideStep, nextState, startState } from "./decide.ts";
import type { EvidenceSource } from "./evidence-source.ts";
import { decisionLines, evidenceLines, rolloutLine } from "./report.ts";

/**
 * Rollouts kept in the model registry (`<model>/served.json`, protocol/registry/served-state.ts): every change is
 * one compare-and-swap write of the served state, which every pod and isolate follows by itself; no call reaches
 * a pool. The controller still holds no state of its own.
 */

async function servedOf(registry: S3Registry, model: string): Promise<{ state: ServedState; etag: string }> {
  const read = await registry.served(model);
  if (!read)
    throw new RefusedError(
      `${registry.where} has no served state of ${model}: publish it first (npm run model -- publish)`,
    );
  return read;
}

/** Write the next rollout state over the served state read; the new served state. */
async function write(
  registry: S3Registry,
  read: { state: ServedState; etag: string },
  next: RolloutState,
  at: Date,
): Promise<ServedState> {
  const served = withRollout(read.state, next, at);
  await registry.writeServed(served, read.etag);
  return served;
}

/** `start`: a new rollout of `candidate` over the served version, refused unless it is published with passing gates. */
export async function startInRegistry(
  registry: S3Registry,
  model: string,
  candidate: string,
  config: RolloutConfig,
): Promise<RolloutState> {
  const read = await servedOf(registry, model);
  const current = read.state.rollout;
  if (current?.phase === "running") {
    throw new RefusedError(
      `rollout ${current.id} (version ${current.candidate}) is running; promote it or roll it back first`,
    );
  }
  const raw = await registry.getJson([model, CONFIG_FILE]);
  if (!raw) throw new RefusedError(`${registry.where} has no ${model}/${CONFIG_FILE}`);
  const published = parseModelConfig(raw.value, `${registry.where}: ${model}/${CONFIG_FILE}`);
  const problem = gatesProblem(published, candidate);
  if (problem?.missing)
    throw new RefusedError(
      `${model} version ${candidate} is not published: npm run model -- publish --name ${model} --version ${candidate}`,
    );
  if (problem) throw new RefusedError(problem.reason);
  if (BigInt(candidate) <= BigInt(read.state.version)) {
    throw new RefusedError(
      `candidate version ${candidate} is not newer than the served version ${read.state.version}: versions only move forward`,
    );
  }
  const at = new Date();
  const state = startState({
    model,
    stable: read.state.version,
    candidate,
    config,
    revision: nextRevision(read.state),
    now: at,
  });
  await write(registry, read, state, at);
  return state;
}

/**
 * `promote` or `rollback` by hand. A rollback of a rollout already promoted serves its stable version again
 * (every pod swaps it back in, every isolate follows): the registry keeps the files, so going back needs no import.
 */
export async function changeInRegistry(
  registry: S3Registry,
  model: string,
  action: "promote" | "rollback",
  reason: string,
): Promise<ServedState> {
  const read = await servedOf(registry, model);
  const state = read.state.rollout;
  const at = new Date();
  if (action === "rollback" && state?.phase === "promoted") {
    const back = rolledBackFromPromotion(read.state, reason, at);
    await registry.writeServed(back, read.etag);
    return back;
  }
  if (state?.phase !== "running")
    throw new RefusedError(`${model} has no running rollout${action === "rollback" ? " nor a promoted one" : ""}`);
  return write(registry, read, nextState(state, { action, reason }, nextRevision(read.state), at), at);
}

export interface RegistryControllerOptions {
  registry: S3Registry;
  model: string;
  evidence: EvidenceSource;
  intervalMs?: number;
  progressMs?: number;
  log: (line: string) => void;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `npm run rollout -- run --registry …`: each tick reads the served state and the current step's evidence (pools
 * or Prometheus), applies the sequential tests, and writes the next state (a step, the promotion, a rollback) over
 * the state it read. A write that lost a race with another controller is read again next tick.
 */
export async function runRegistryController(options: RegistryControllerOptions): Promise<"promoted" | "rolled-back"> {
  const { registry, model, evidence: source, log } = options;
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const intervalMs = options.intervalMs ?? 1000;
  const progressMs = options.progressMs ?? 10_000;
  let lastProgress = 0;
  let announced = 0;
  let lastNotes = "";
  log(`evidence from ${source.describe}`);
  for (;;) {
    const read = await servedOf(registry, model);
    const state = read.state.rollout;
    if (!state) throw new RefusedError(`${model} has had no rollout; start one with npm run rollout -- start`);
    if (state.revision !== announced) {
      log(rolloutLine(state));
      announced = state.revision;
    }
    if (state.phase !== "running") return state.phase;
    const { evidence, notes } = await source.read(state);
    if (notes.join("\n") !== lastNotes) {
      for (const line of notes) log(`  ${line}`);
      lastNotes = notes.join("\n");
    }
    if (evidence) {
      const at = now();
      const decision = decideStep(state, evidence, at.getTime());
      if (decision.action === "wait") {
        if (at.getTime() - lastProgress >= progressMs) {
          lastProgress = at.getTime();
          log(`${at.toISOString().slice(11, 19)} waiting (${decision.why})`);
          for (const line of evidenceLines(state, evidence)) log(`  ${line}`);
        }
      } else {
        for (const line of decisionLines(state, decision, at)) log(line);
        try {
          await write(registry, read, nextState(state, decision, nextRevision(read.state), at), at);
        } catch (err) {
          if (!(err instanceof RegistryError)) throw err;
          log(`  ${err.message}`);
        }
        lastProgress = 0;
        continue;
      }
    }
    await sleep(intervalMs);
  }
}
