import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../protocol/digest.ts";
import { type ModelConfig, parseModelConfig } from "../protocol/model-config.ts";
import { importModelPublicKey } from "../protocol/model-signature.ts";
import type { Fixture } from "./heldout-fixture.ts";
import type { OnnxModel } from "./session.ts";
import { checkVersion, type VersionCheckLimits, type VersionSources } from "./version-check.ts";

// The digits config (64 inputs, 10 classes), its version 1 listed as the fake bytes below, batches of 4.
const BYTES = new TextEncoder().encode("a model file, as far as these checks care");
const WIDTH = 64;
const CLASSES = 10;
const ROWS = 10;

async function configFor(bytes: Uint8Array, accuracy = 0.9): Promise<ModelConfig> {
  const raw = JSON.parse(readFileSync(new URL("../models/digits/config.json", import.meta.url), "utf8"));
  raw.maxBatchSize = 4;
  raw.versions = {
    "1": { file: "model.onnx", sha256: await sha256Hex(bytes), bytes: bytes.length, accuracy: { test: accuracy } },
  };
  return parseModelConfig(raw, "digits/config.json");
}

/** Row r holds its label (r % 10) in its first value. */
function fixture(width = WIDTH): Fixture {
  const matrix = new Float32Array(ROWS * width);
  const labels: number[] = [];
  for (let r = 0; r < ROWS; r++) {
    matrix[r * width] = r % CLASSES;
    labels.push(r % CLASSES);
  }
  return { matrix, width, labels };
}

/** The clock the checks' warm-up is timed by (`VersionSources.now`): the fake sessions move it. */
const clock = { ms: 0 };

/**
 * A session that answers each row with its first value one-hot (or what `answer` says), recording its batches;
 * its runs take `runMs` on `clock`, one after another (the last for every run after).
 */
function fakeSession(answer?: (label: number) => number, runMs: number[] = [1]) {
  const batches: number[] = [];
  let released = 0;
  const session: OnnxModel = {
    async run(data, n) {
      clock.ms += runMs[Math.min(batches.length, runMs.length - 1)]!;
      batches.push(n);
      const out = new Float32Array(n * CLASSES);
      for (let r = 0; r < n; r++) out[r * CLASSES + (answer ?? ((l) => l))(data[r * WIDTH]!)] = 1;
      return out;
    },
    async release() {
      released++;
    },
  };
  return { session, batches, released: () => released };
}

function sources(session: OnnxModel, bytes = BYTES, fix = fixture()): VersionSources & { created: () => number } {
  let created = 0;
  return {
    modelBytes: async () => bytes,
    createSession: async () => {
      created++;
      return session;
    },
    fixture: async () => fix,
    now: () => clock.ms,
    created: () => created,
  };
}

const limits: VersionCheckLimits = { warmupBudgetMs: 10_000, accuracyTolerance: 0.01 };

describe("checkVersion", () => {
  it("passes a matching file whose session answers the fixture, in batches of the model's size", async () => {
    const fake = fakeSession();
    const checked = await checkVersion(await configFor(BYTES), "1", sources(fake.session), limits);
    expect(checked.version).toBe("1");
    expect(checked.session).toBe(fake.session);
    expect(checked.io).toMatchObject({ width: WIDTH, classes: CLASSES });
    expect(checked.checks).toMatchObject({
      sha256: await sha256Hex(BYTES),
      fixture: { rows: ROWS, accuracy: 1, required: 0.89 },
    });
    expect(checked.checks.warmupMs).toBe(1);
    // One warm-up row, then the 10 fixture rows in chunks of maxBatchSize 4.
    expect(fake.batches).toEqual([1, 4, 4, 2]);
    expect(fake.released()).toBe(0);
  });

  it("refuses a version config.json does not list", async () => {
    const fake = fakeSession();
    await expect(checkVersion(await configFor(BYTES), "2", sources(fake.session), limits)).rejects.toThrow(
      "version 2 is not listed in config.json",
    );
  });

  it("refuses altered bytes before any session is made", async () => {
    const fake = fakeSession();
    const src = sources(fake.session, BYTES.subarray(1));
    await expect(checkVersion(await configFor(BYTES), "1", src, limits)).rejects.toThrow(
      /^checksum mismatch: digits\/1\/model\.onnx .*; the file will not be served$/,
    );
    expect(src.created()).toBe(0);
  });

  it("refuses an unsigned file when a key is configured, before any session is made", async () => {
    const fake = fakeSession();
    const src = sources(fake.session);
    const publicKey = await importModelPublicKey(btoa(String.fromCharCode(...new Uint8Array(32).fill(7))));
    await expect(checkVersion(await configFor(BYTES), "1", src, { ...limits, publicKey })).rejects.toThrow(
      /^signature refused: digits\/1 is not signed.*; the file will not be served$/,
    );
    expect(src.created()).toBe(0);
  });

  it("says a session could not be made", async () => {
    const src: VersionSources = {
      ...sources(fakeSession().session),
      createSession: async () => {
        throw new Error("input pixels missing");
      },
    };
    await expect(checkVersion(await configFor(BYTES), "1", src, limits)).rejects.toThrow(
      "cannot create a session: input pixels missing",
    );
  });

  it("times the warm-up: the first try within its budget is the figure, up to 3 tries", async () => {
    const fake = fakeSession(undefined, [9, 4, 1]);
    const checked = await checkVersion(await configFor(BYTES), "1", sources(fake.session), {
      ...limits,
      warmupBudgetMs: 4,
    });
    expect(checked.checks.warmupMs).toBe(4);
    expect(fake.batches).toEqual([1, 1, 4, 4, 2]);
  });

  it("releases the session when the warm-up stays over its budget in all 3 tries, and says its best", async () => {
    const fake = fakeSession(undefined, [9, 5, 7]);
    const check = checkVersion(await configFor(BYTES), "1", sources(fake.session), { ...limits, warmupBudgetMs: 4 });
    await expect(check).rejects.toThrow(/^warm-up inference took 5\.000 ms at best \(3 tries\), over the 4 ms budget$/);
    expect(fake.batches).toEqual([1, 1, 1]);
    expect(fake.released()).toBe(1);
  });

  it("releases the session when the fixture's rows are not the model's width", async () => {
    const fake = fakeSession();
    const check = checkVersion(await configFor(BYTES), "1", sources(fake.session, BYTES, fixture(8)), limits);
    await expect(check).rejects.toThrow("the fixture's rows have 8 values; the model takes 64");
    expect(fake.released()).toBe(1);
  });

  it("releases the session when fixture accuracy is below the stated accuracy less the tolerance", async () => {
    // Every row answered 0: one row in ten right.
    const fake = fakeSession(() => 0);
    const check = checkVersion(await configFor(BYTES, 0.5), "1", sources(fake.session), limits);
    await expect(check).rejects.toThrow("fixture accuracy 0.1000 is below the required 0.4900");
    expect(fake.released()).toBe(1);
  });

  it("refuses outputs of the wrong width (the warm-up does not look at them; the fixture check does)", async () => {
    const fake = fakeSession();
    const session: OnnxModel = { ...fake.session, run: async (_data, n) => new Float32Array(n * 3) };
    const check = checkVersion(await configFor(BYTES), "1", sources(session), limits);
    await expect(check).rejects.toThrow("the model returned 12 values for 4 rows; the config says 10 classes");
    expect(fake.released()).toBe(1);
  });
});
