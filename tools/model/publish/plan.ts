import type { ModelConfig } from "../../../protocol/model-config.ts";

/**
 * What publishing `version` of a model does to the registry's config.json, pure: the local config's entry for
 * that version added to the registry's (or, for a model new to the registry, the local config with that version
 * alone). A version's file never changes once published: the same version with another sha256 is refused
 * (versions only move forward; import the file as a new version). The same file again is a no-op, except that
 * its entry (a newer gates record) replaces the published one.
 */
export function publishedConfig(
  registry: ModelConfig | undefined,
  local: ModelConfig,
  version: string,
): { ok: true; config: ModelConfig } | { ok: false; reason: string } {
  const entry = local.versions[version];
  if (!entry) return { ok: false, reason: `${local.name} has no version ${version} in its config.json` };
  if (!entry.signature) {
    return {
      ok: false,
      reason: `${local.name} version ${version} is not signed: pools and isolates load only signed files (npm run model -- sign --name ${local.name} --version ${version})`,
    };
  }
  if (!registry) return { ok: true, config: { ...local, version, versions: { [version]: entry } } };
  const published = registry.versions[version];
  if (published && published.sha256 !== entry.sha256) {
    return {
      ok: false,
      reason: `${local.name} version ${version} is already published with another file (sha256 ${published.sha256.slice(0, 12)}…, this one ${entry.sha256.slice(0, 12)}…): a version never changes; import it as a new version`,
    };
  }
  for (const field of ["inputs", "outputs", "labels"] as const) {
    if (JSON.stringify(registry[field]) !== JSON.stringify(local[field])) {
      return {
        ok: false,
        reason: `${local.name}'s ${field} differ from the registry's: a new model, not a new version`,
      };
    }
  }
  // The registry's `version` is where the config was first published; which version serves is served.json's.
  return { ok: true, config: { ...registry, versions: { ...registry.versions, [version]: entry } } };
}

/** The edge variants' versions published with `version` of their model: those calibrated against it. */
export function edgeVersionsWith(edge: ModelConfig, model: string, version: string): string[] {
  return Object.entries(edge.versions)
    .filter(([, e]) => e.cascade?.against.model === model && e.cascade.against.version === version)
    .map(([v]) => v);
}
