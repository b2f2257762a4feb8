import { describe, expect, it } from "vitest";
import { modelKey } from "./model-key.ts";

describe("the model key a deploy checks the edge models against", () => {
  it("is the one the Worker will hold: the secrets file's, else the environment's var", () => {
    expect(modelKey({ env: "production", fromFile: "F", fromVars: "V", onWorker: [], shell: "S" })).toEqual({
      key: "F",
      from: "--secrets-file",
    });
    expect(modelKey({ env: "production", fromVars: "V", onWorker: ["MODEL_PUBLIC_KEY"], shell: "S" })).toEqual({
      key: "V",
      from: "wrangler.toml [env.production.vars]",
    });
  });

  it("takes the shell's key for one the Worker already holds, and refuses without it", () => {
    expect(modelKey({ env: "production", onWorker: ["API_KEYS", "MODEL_PUBLIC_KEY"], shell: "S" }).key).toBe("S");
    expect(() => modelKey({ env: "production", onWorker: ["MODEL_PUBLIC_KEY"] })).toThrow(
      /production's Worker holds a MODEL_PUBLIC_KEY secret, which cannot be read back.*export MODEL_PUBLIC_KEY/,
    );
  });

  it("ignores the shell's key for a Worker that will hold none (staging's unsigned builds)", () => {
    expect(modelKey({ env: "staging", onWorker: ["API_KEYS"], shell: "S" })).toEqual({
      key: undefined,
      from: "staging's Worker gets no MODEL_PUBLIC_KEY",
      shellKeyIgnored: true,
    });
    expect(modelKey({ env: "staging", onWorker: [] })).toMatchObject({ key: undefined, shellKeyIgnored: false });
  });

  it("uses the shell's key in a dry run, which does not ask the Worker", () => {
    expect(modelKey({ env: "staging", onWorker: undefined, shell: "S" })).toEqual({
      key: "S",
      from: "the shell's MODEL_PUBLIC_KEY",
    });
    expect(modelKey({ env: "staging", onWorker: undefined }).key).toBeUndefined();
  });
});
