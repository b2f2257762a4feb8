import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ModelConfig, parseModelConfig } from "../../../protocol/model-config.ts";
import { edgeVersionsWith, publishedConfig } from "./plan.ts";

const read = (name: string) =>
  parseModelConfig(
    JSON.parse(readFileSync(new URL(`../../../models/${name}/config.json`, import.meta.url), "utf8")),
    name,
  );
const signed = (config: ModelConfig, version: string, sha256 = config.versions[version]!.sha256): ModelConfig => ({
  ...config,
  versions: {
    ...config.versions,
    [version]: {
      ...config.versions[version]!,
      sha256,
      signature: { key: "0123456789abcdef", ed25519: `${"A".repeat(86)}==` },
    },
  },
});

describe("publishing a version into the registry's config", () => {
  const digits = read("digits");

  it("starts a new model's config with the version alone, and adds later ones", () => {
    const first = publishedConfig(undefined, signed(digits, "1"), "1");
    expect(first).toMatchObject({ ok: true, config: { version: "1" } });
    const local = signed(
      { ...digits, versions: { ...digits.versions, "2": { ...digits.versions["1"]!, sha256: "2".repeat(64) } } },
      "2",
    );
    const second = publishedConfig((first as { config: ModelConfig }).config, local, "2");
    expect(second.ok && Object.keys(second.config.versions)).toEqual(["1", "2"]);
    expect(second.ok && second.config.version).toBe("1"); // served.json, not config.json, says what serves
  });

  it("refuses an unsigned file, another file under a published version, and changed tensors", () => {
    expect(publishedConfig(undefined, digits, "1")).toMatchObject({ ok: false, reason: /is not signed/ });
    const registry = signed(digits, "1");
    expect(publishedConfig(registry, signed(digits, "1", "f".repeat(64)), "1")).toMatchObject({
      ok: false,
      reason: /already published with another file/,
    });
    expect(
      publishedConfig(registry, { ...signed(digits, "1"), labels: digits.labels.map((l) => `x${l}`) }, "1"),
    ).toMatchObject({
      ok: false,
      reason: /labels differ/,
    });
  });

  it("publishes with a model the edge variants calibrated against that version", () => {
    const edge = read("digits-edge");
    expect(edgeVersionsWith(edge, "digits", "1")).toEqual(["1"]);
    expect(edgeVersionsWith(edge, "digits", "2")).toEqual([]);
  });
});
