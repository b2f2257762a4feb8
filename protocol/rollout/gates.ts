import type { ModelConfig } from "../model-config.ts";

/**
 * Why `version` of a model may not start a rollout: no release gates record (`npm run model -- check`), one made
 * for another file, or a failed one; undefined when its record passed for the file config.json lists. The pools
 * refuse such a start (409 `gates_not_passed`), and `npm run rollout -- start --registry` before writing it.
 */
export function gatesProblem(
  config: ModelConfig,
  version: string,
): { missing: true } | { missing: false; reason: string } | undefined {
  const name = config.name;
  const entry = config.versions[version];
  if (!entry) return { missing: true };
  const gates = entry.gates;
  const run = `run \`npm run model -- check --name ${name} --version ${version}\``;
  if (!gates) return { missing: false, reason: `${name} version ${version} has no release gates record; ${run} first` };
  if (gates.sha256 !== entry.sha256) {
    return {
      missing: false,
      reason: `${name} version ${version}'s gates were checked for another file (sha256 ${gates.sha256.slice(0, 12)}…, the file is ${entry.sha256.slice(0, 12)}…); ${run} again`,
    };
  }
  if (!gates.passed) {
    return {
      missing: false,
      reason: `${name} version ${version} failed its release gates (${gates.checkedAt}); ${run} for the table`,
    };
  }
  return undefined;
}
