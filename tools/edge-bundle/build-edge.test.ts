import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundleInputs, MODELS_DIR } from "./build-edge.ts";

describe("bundleInputs: a local bundle is rebuilt when, and only when, what it is made of changed", () => {
  const dir = mkdtempSync(join(tmpdir(), "bundle-inputs-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is the same for the same files, and changes with a model file's content or a new file", () => {
    const models = join(dir, "models");
    cpSync(MODELS_DIR, models, { recursive: true });
    const before = bundleInputs(models);
    expect(bundleInputs(models)).toBe(before);
    // The same repository elsewhere is the same input: only paths inside it count.
    const elsewhere = join(dir, "elsewhere");
    cpSync(models, elsewhere, { recursive: true });
    expect(bundleInputs(elsewhere)).toBe(before);

    writeFileSync(join(models, "digits/config.json"), "{}\n");
    const edited = bundleInputs(models);
    expect(edited).not.toBe(before);
    writeFileSync(join(models, "digits/notes.txt"), "");
    expect(bundleInputs(models)).not.toBe(edited);
  });
});
