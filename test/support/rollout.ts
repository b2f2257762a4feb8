import { type RolloutConfigOverrides, rolloutConfig } from "../../protocol/rollout/config.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { nextState, startState } from "../../tools/rollout/decide.ts";

/** A rollout of `candidate` over `stable` at `revision`, as the controller's `start` makes it. */
export function rolloutOf(options: {
  model?: string;
  stable?: string;
  candidate: string;
  revision: number;
  config?: RolloutConfigOverrides;
}): RolloutState {
  return startState({
    model: options.model ?? "digits",
    stable: options.stable ?? "1",
    candidate: options.candidate,
    config: rolloutConfig(options.config),
    revision: options.revision,
    now: new Date(),
  });
}

export const advance = (s: RolloutState, to: number) =>
  nextState(s, { action: "advance", to }, s.revision + 1, new Date());
export const rollBack = (s: RolloutState, reason = "test") =>
  nextState(s, { action: "rollback", reason }, s.revision + 1, new Date());
export const promote = (s: RolloutState, reason = "test") =>
  nextState(s, { action: "promote", reason }, s.revision + 1, new Date());
