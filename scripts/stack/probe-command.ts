import { mayCall, parseTenantKeys } from "../../edge/tenants/keys.ts";

/**
 * The banner's probe command: with EDGE_API_KEYS, one of its keys (the first that may call the probe's model,
 * digits unless the repository lacks it; scoped to others only: --model one of those).
 */
export function probeCommand(url: string, rawKeys: string | undefined, served: readonly string[]): string {
  const command = `npm run probe -- --url ${url}`;
  const keys = parseTenantKeys(rawKeys, served);
  const model = served.includes("digits") ? "digits" : served[0];
  if (keys.length === 0) return model === "digits" || model === undefined ? command : `${command} --model ${model}`;
  const fitting = keys.find((k) => model !== undefined && mayCall(k.models, model));
  const key = fitting ?? keys[0]!;
  const keyModel = fitting ? model : key.models === "*" ? model : [...key.models][0];
  return `${command}${keyModel && keyModel !== "digits" ? ` --model ${keyModel}` : ""} --api-key ${key.key}`;
}
