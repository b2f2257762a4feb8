import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Conflict, NotFound, RateLimited } from "../protocol/errors.ts";
import { createMetrics } from "./metrics.ts";
import { ModelRepository } from "./repository.ts";

const MODELS = new URL("../models/", import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A repository over a scratch directory holding only `digits`' config (no load runs in these tests). */
function scratch() {
  const dir = mkdtempSync(join(tmpdir(), "repository-"));
  dirs.push(dir);
  mkdirSync(join(dir, "digits"));
  cpSync(join(MODELS, "digits/config.json"), join(dir, "digits/config.json"));
  const repository = new ModelRepository(
    {
      modelsDir: dir,
      provider: "cpu",
      maxBatch: 64,
      maxQueue: 8,
      maxQueueDelayUs: 0,
      queueFull: () => new RateLimited("full", 1),
    },
    createMetrics().recorder,
    () => {},
  );
  return { dir, repository };
}

describe("ModelRepository: discovery", () => {
  it("load and loadCandidate alike find a model directory added since start; neither finds one that is not there", async () => {
    const { dir, repository } = scratch();
    expect(await repository.discover()).toEqual(["digits"]);
    mkdirSync(join(dir, "later"));
    cpSync(join(MODELS, "digits/config.json"), join(dir, "later/config.json"));
    // Found: a candidate needs a serving version, so the refusal is the rollout's (409), not an unknown model's.
    await expect(repository.loadCandidate("later", "1")).rejects.toThrow(Conflict);
    await expect(repository.loadCandidate("later", "1")).rejects.toThrow(/model "later" does not serve/);
    expect(repository.index().map((e) => e.name)).toEqual(["digits", "later"]);
    await expect(repository.loadCandidate("missing", "1")).rejects.toThrow(NotFound);
    await expect(repository.load("missing")).rejects.toThrow(
      /unknown model "missing"; this pool serves "digits", "later"/,
    );
  });
});
