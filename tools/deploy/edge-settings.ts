import { EDGE_SETTINGS } from "../../edge/settings/table.ts";
import { UsageError } from "../cli/errors.ts";
import { readTable } from "../cli/table.ts";

/**
 * An environment's vars and the secrets file's values read as its Worker will read them (edge/env.ts's table),
 * before anything is uploaded. A bad one would make every request of the new version answer 500 naming it, and
 * `wrangler check startup` shows none of the Worker's start-up logs (wrangler discards them), so the deploy is
 * where an operator can be stopped. Checks against the bundle and bindings (models, Fetchers, rate limiters)
 * stay with the Worker. Returns what is wrong, or undefined.
 */
export function edgeSettingsProblem(
  env: string,
  vars: Readonly<Record<string, unknown>>,
  secrets: Readonly<Record<string, string>>,
): string | undefined {
  try {
    readTable(EDGE_SETTINGS, { env: { ...vars, ...secrets } });
    return undefined;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return `${env}'s Worker would refuse its configuration: ${err.message} (wrangler.toml's [env.${env}.vars], or --secrets-file)`;
  }
}
