import { describe, expect, it } from "vitest";
import { modelOfKey, parseRegistryUrl, registryKey } from "./layout.ts";

describe("registry layout", () => {
  it("reads s3://bucket/prefix", () => {
    expect(parseRegistryUrl("s3://edgecascade-models/prod/v1/")).toEqual({
      bucket: "edgecascade-models",
      prefix: "prod/v1",
    });
    expect(parseRegistryUrl("s3://models")).toEqual({ bucket: "models", prefix: "" });
    expect(() => parseRegistryUrl("https://models/x")).toThrow(/is not s3:\/\/BUCKET\/PREFIX/);
    expect(() => parseRegistryUrl("s3://Models/x")).toThrow(/lowercase/);
    expect(() => parseRegistryUrl("s3://models/a/../b")).toThrow(/"\.\."/);
  });

  it("keys the models/ tree under the prefix", () => {
    expect(registryKey("prod", "digits", "2", "model.onnx")).toBe("prod/digits/2/model.onnx");
    expect(registryKey("", "digits", "served.json")).toBe("digits/served.json");
    expect(modelOfKey("prod", "prod/digits/served.json")).toBe("digits");
    expect(modelOfKey("", "digits/2/model.onnx")).toBe("digits");
    expect(modelOfKey("prod", "other/digits/served.json")).toBeUndefined();
    expect(modelOfKey("prod", "prod/stray")).toBeUndefined();
  });
});
