import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { calibrationOf, modelIoOf, parseModelConfig } from "./model-config.ts";

const load = (name: string) =>
  JSON.parse(readFileSync(new URL(`../models/${name}/config.json`, import.meta.url), "utf8"));

describe("model config", () => {
  it("parses both sample configs into signatures", () => {
    const full = parseModelConfig(load("digits"), "digits/config.json");
    expect(modelIoOf(full)).toMatchObject({
      name: "digits",
      inputName: "pixels",
      width: 64,
      outputName: "probabilities",
      classes: 10,
    });
    const edge = parseModelConfig(load("digits-edge"), "digits-edge/config.json");
    expect(edge.standsFor).toBe("digits");
    expect(calibrationOf(edge).threshold).toBeGreaterThan(0);
    expect(() => calibrationOf(full)).toThrow("model digits version 1 has no cascade calibration");
  });

  it.each([
    [(c: Record<string, unknown>) => ({ ...c, version: "7" }), 'x: "version" 7 is not listed in "versions"'],
    [(c: Record<string, unknown>) => ({ ...c, labels: ["0"] }), 'x: "labels" has 1 entries; the output has 10 classes'],
    [(c: Record<string, unknown>) => ({ ...c, platform: "tensorflow" }), 'x: "platform"'],
    [
      (c: Record<string, unknown>) => {
        const { name: _, ...rest } = c;
        return rest;
      },
      'x: "name" is required',
    ],
    [
      (c: Record<string, unknown>) => ({
        ...c,
        versions: { "1": { ...(c.versions as Record<string, object>)["1"], sha256: "abc" } },
      }),
      'x: "versions.1.sha256" must be 64 lowercase hex digits',
    ],
    [
      (c: Record<string, unknown>) => ({ ...c, inputs: [{ name: "pixels", datatype: "INT8", shape: [-1, 64] }] }),
      "x: the input must be FP32 with shape [-1, n]",
    ],
  ])("names the file and field of a bad config (%#)", (mutate, message) => {
    expect(() => parseModelConfig(mutate(load("digits")), "x")).toThrow(message);
  });
});
