import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readRepository } from "./edge-models.ts";

const MODELS = new URL("../../models/", import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A repository holding the committed breast-cancer model and its edge variant, plus a stray file. */
function repository(): string {
  const dir = mkdtempSync(join(tmpdir(), "edge-models-"));
  dirs.push(dir);
  for (const name of ["breast-cancer", "breast-cancer-edge"])
    cpSync(join(MODELS, name), join(dir, name), { recursive: true });
  writeFileSync(join(dir, "README.md"), "not a model");
  mkdirSync(join(dir, "notes"));
  return dir;
}

describe("readRepository", () => {
  it("takes every model directory, and skips what holds no config.json", () => {
    const models = readRepository(repository());
    expect(models.map((m) => [m.config.name, m.edge?.config.name])).toEqual([["breast-cancer", "breast-cancer-edge"]]);
  });

  it("fails, naming the file, on a config.json that is there but cannot be read: the model never silently leaves the bundle", () => {
    const dir = repository();
    mkdirSync(join(dir, "digits"));
    mkdirSync(join(dir, "digits", "config.json"));
    expect(() => readRepository(dir)).toThrow(`cannot read ${join(dir, "digits", "config.json")}: EISDIR`);
  });
});
