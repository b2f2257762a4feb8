import { setTimeout as sleep } from "node:timers/promises";
import type { VersionDelay } from "./options/simulation.ts";
import type { OnnxModel } from "./session.ts";

/**
 * `--version-delay-ms` (a simulation setting): the versions it names get a session whose every run, live or
 * shadow, waits that long first, as a slower model would take longer; the others keep theirs. It is the
 * repository's `wrapSession` (version-loader.ts): nothing else in the pool knows of it.
 */
export function delayedVersions(
  delays: readonly VersionDelay[],
): ((session: OnnxModel, of: { name: string; version: string }) => OnnxModel) | undefined {
  if (delays.length === 0) return undefined;
  const ms = new Map(delays.map((d) => [`${d.model}@${d.version}`, d.ms]));
  return (session, { name, version }) => {
    const wait = ms.get(`${name}@${version}`);
    if (wait === undefined || wait <= 0) return session;
    return {
      run: (data, batch) => sleep(wait).then(() => session.run(data, batch)),
      release: () => session.release(),
    };
  };
}
