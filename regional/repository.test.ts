import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Conflict, NotFound, RateLimited } from "../protocol/errors.ts";
import type { LogFields } from "./log.ts";
import { createMetrics } from "./metrics.ts";
import { ModelRepository, type RepositoryOptions } from "./repository.ts";

const MODELS = new URL("../models/", import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A repository over a scratch directory holding `digits`: its config only (no load can run), or `withFiles`
 * its version 1 too. Its log lines and metrics are kept.
 */
function scratch({
  withFiles = false,
  options = {},
}: {
  withFiles?: boolean;
  options?: Partial<RepositoryOptions>;
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), "repository-"));
  dirs.push(dir);
  mkdirSync(join(dir, "digits"));
  cpSync(
    join(MODELS, withFiles ? "digits" : "digits/config.json"),
    join(dir, withFiles ? "digits" : "digits/config.json"),
    {
      recursive: true,
    },
  );
  const metrics = createMetrics();
  const logs: (LogFields & { msg: string })[] = [];
  const repository = new ModelRepository(
    {
      modelsDir: dir,
      provider: "cpu",
      maxBatch: 64,
      maxQueue: 8,
      maxQueueDelayUs: 0,
      queueFull: () => new RateLimited("full", 1),
      ...options,
    },
    metrics.recorder,
    (_level, msg, fields) => logs.push({ msg, ...fields }),
  );
  return { dir, repository, metrics, logs };
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

describe("ModelRepository: failures off the request path", () => {
  it("logs and counts a retired version whose session fails to release, and goes on", async () => {
    const { repository, metrics, logs } = scratch({
      withFiles: true,
      options: {
        wrapSession: (session) => ({
          run: session.run,
          release: () => session.release().then(() => Promise.reject(new Error("release refused"))),
        }),
      },
    });
    await repository.discover();
    await repository.load("digits");
    // The reload swaps in a new instance of version 1; the old one retires and its release fails.
    await repository.load("digits");
    await vi.waitFor(() => expect(logs.map((l) => l.msg)).toContain("model version release failed"));
    expect(logs.find((l) => l.msg === "model version release failed")).toMatchObject({
      model: "digits",
      version: "1",
      reason: "release refused",
    });
    expect(await metrics.text()).toContain(
      'edgecascade_background_failures_total{task="release",model="digits",version="1"} 1',
    );
    expect(repository.modelReady("digits", "1")).toBe(true);
    // The pool's shutdown says what failed rather than hanging or ending the process.
    await expect(repository.close()).rejects.toThrow("release refused");
  });
});

describe("ModelRepository: loads a readiness check starts on demand", () => {
  const onDemand = (memoryBudgetBytes: number) => scratch({ options: { loadPolicy: "on-demand", memoryBudgetBytes } });

  it("logs a load that could not start (no room within the budget) with its reason", async () => {
    const { repository, logs } = onDemand(1);
    await repository.discover();
    repository.ensureLoading("digits");
    await vi.waitFor(() => expect(logs.map((l) => l.msg)).toContain("model load not started"));
    expect(logs.find((l) => l.msg === "model load not started")).toMatchObject({
      model: "digits",
      reason: expect.stringMatching(/^model "digits" cannot be loaded within --model-memory-mb: /),
    });
  });

  it("leaves a failed load to the lifecycle, which logged and counted it: said once, as the load's failure", async () => {
    const { repository, metrics, logs } = onDemand(2 ** 30);
    await repository.discover();
    repository.ensureLoading("digits");
    await vi.waitFor(() => expect(logs.map((l) => l.msg)).toContain("model load failed"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(logs.map((l) => l.msg)).not.toContain("model load not started");
    expect(await metrics.text()).toContain('edgecascade_model_loads_total{model="digits",outcome="failure"} 1');
  });
});
