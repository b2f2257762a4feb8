import { type HeldoutFigures, type HeldoutSet, heldoutFigures } from "../../../protocol/heldout.ts";
import type { ModelConfig } from "../../../protocol/model-config.ts";

/**
 * A version's held-out figures from the fixture its held-out rows live in (protocol/heldout.ts `heldoutPath`):
 * an edge variant's at its calibrated threshold, against the full model version it was calibrated on.
 * Undefined when the fixture holds no expected output of this version (a version added by hand, or a fixture
 * written for another version).
 */
export function versionFigures(config: ModelConfig, version: string, fixture: HeldoutSet): HeldoutFigures | undefined {
  const entry = config.versions[version];
  if (!entry || fixture.models[config.name] !== version) return undefined;
  const cascade = entry.cascade;
  if (cascade && fixture.models[cascade.against.model] !== cascade.against.version) return undefined;
  const edge = cascade ? { threshold: cascade.threshold, fullModel: cascade.against.model } : undefined;
  return heldoutFigures(fixture, config.name, config.labels.length, edge);
}

/**
 * `raw` (a config.json as read) with `figures` as `versions[version].heldout`, every other field kept; its
 * place in the entry is after what was there.
 */
export function withFigures(
  raw: Record<string, unknown>,
  version: string,
  figures: HeldoutFigures,
): Record<string, unknown> {
  const versions = raw.versions as Record<string, Record<string, unknown>>;
  const { heldout: _old, ...entry } = versions[version] ?? {};
  return { ...raw, versions: { ...versions, [version]: { ...entry, heldout: figures } } };
}
