import { type ModelConfig, type ModelIo, modelIoOf } from "../protocol/model-config.ts";
import { checkModelFile, modelFileProblem } from "../protocol/model-file-check.ts";
import type { ModelPublicKey } from "../protocol/model-signature.ts";
import { checkFixtureOutputs } from "./fixture-check.ts";
import type { Fixture } from "./heldout-fixture.ts";
import type { VersionChecks } from "./model-version.ts";
import type { OnnxModel } from "./session.ts";

/**
 * Verification of one version before it may serve: the file against config.json (size, sha256, then the
 * Ed25519 signature with a key), a session, a warm-up within its budget, and the held-out fixture check.
 * Where the bytes, sessions and fixtures come from is given (`VersionSources`), so that the steps are tested
 * with a fake session; the repository gives the disk and onnxruntime-node.
 */

/** Where a check gets what it reads. */
export interface VersionSources {
  /** The bytes of `name/version/file`; rejects with why it cannot. */
  modelBytes(name: string, version: string, file: string): Promise<Uint8Array>;
  /** A session over verified bytes. */
  createSession(bytes: Uint8Array, io: ModelIo, weights: "fp32" | "int8" | undefined): Promise<OnnxModel>;
  /** The held-out fixture of `version` (`<name>/<version>/heldout.json`, or the full model's for an edge variant). */
  fixture(config: ModelConfig, version: string): Promise<Fixture>;
  /**
   * What an earlier load of exactly this file (`name`, `version`, `sha256`) checked, if one passed in this
   * process: the same bytes on the same runtime give the same outputs, so a reload (after an eviction, say)
   * warms up on a row of zeros and skips the fixture. Default: none.
   */
  checkedBefore?(name: string, version: string, sha256: string): VersionChecks | undefined;
  /** Milliseconds, for the warm-up's durations. Default `performance.now`. */
  now?: () => number;
}

export interface VersionCheckLimits {
  /** A warm-up inference must finish within this many milliseconds (best of 3). */
  warmupBudgetMs: number;
  /** How far fixture accuracy may fall below the accuracy the config states for the version. */
  accuracyTolerance: number;
  /** The key every file must be signed with; none: unsigned files pass. */
  publicKey?: ModelPublicKey;
}

/** A version that passed every check, with its open session. */
export interface CheckedVersion {
  version: string;
  io: ModelIo;
  session: OnnxModel;
  checks: VersionChecks;
}

const WARMUP_ATTEMPTS = 3;

/**
 * Check `version` of the model in `config`. Throws an Error saying which step failed and why; the session,
 * if one was made, is released first.
 */
export async function checkVersion(
  config: ModelConfig,
  version: string,
  sources: VersionSources,
  limits: VersionCheckLimits,
): Promise<CheckedVersion> {
  const { name } = config;
  const listed = config.versions[version];
  if (!listed) throw new Error(`version ${version} is not listed in config.json`);
  const bytes = await sources.modelBytes(name, version, listed.file);
  const file = await checkModelFile(bytes, name, version, listed, limits.publicKey);
  const problem = modelFileProblem(file);
  if (problem) throw new Error(`${problem}; the file will not be served`);
  const io = modelIoOf(config, version);
  const session = await sources.createSession(bytes, io, listed.weights).catch((err: Error) => {
    throw new Error(`cannot create a session: ${err.message}`);
  });
  try {
    const now = sources.now ?? (() => performance.now());
    const before = sources.checkedBefore?.(name, version, file.sha256);
    if (before) {
      const zeros = { matrix: new Float32Array(io.width), width: io.width, labels: [0] };
      const warmupMs = await warmUp(session, zeros, io, limits.warmupBudgetMs, now);
      return { version, io, session, checks: { ...before, warmupMs } };
    }
    const fixture = await sources.fixture(config, version);
    const warmupMs = await warmUp(session, fixture, io, limits.warmupBudgetMs, now);
    const required = Math.max(0, listed.accuracy.test - limits.accuracyTolerance);
    const accuracy = await fixtureAccuracy(session, fixture, io, config.maxBatchSize, required);
    const checks = { sha256: file.sha256, warmupMs, fixture: { rows: fixture.labels.length, accuracy, required } };
    return { version, io, session, checks };
  } catch (err) {
    await session.release();
    throw err;
  }
}

/** Milliseconds of the fastest of up to 3 one-row inferences; fails when none is within the budget. */
async function warmUp(
  session: OnnxModel,
  fixture: Fixture,
  io: ModelIo,
  budgetMs: number,
  now: () => number,
): Promise<number> {
  if (fixture.width !== io.width) {
    throw new Error(`the fixture's rows have ${fixture.width} values; the model takes ${io.width}`);
  }
  const row = fixture.matrix.slice(0, fixture.width);
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < WARMUP_ATTEMPTS; attempt++) {
    const t0 = now();
    await session.run(row, 1);
    best = Math.min(best, now() - t0);
    if (best <= budgetMs) return best;
  }
  throw new Error(
    `warm-up inference took ${best.toFixed(3)} ms at best (${WARMUP_ATTEMPTS} tries), over the ${budgetMs} ms budget`,
  );
}

/** The fixture's accuracy, run in chunks of the model's batch size; fails below `required` or on a bad shape. */
async function fixtureAccuracy(
  session: OnnxModel,
  fixture: Fixture,
  io: ModelIo,
  chunk: number,
  required: number,
): Promise<number> {
  const rows = fixture.labels.length;
  const probs = new Float32Array(rows * io.classes);
  for (let start = 0; start < rows; start += chunk) {
    const n = Math.min(chunk, rows - start);
    const out = await session.run(fixture.matrix.subarray(start * fixture.width, (start + n) * fixture.width), n);
    if (out.length !== n * io.classes) {
      throw new Error(`the model returned ${out.length} values for ${n} rows; the config says ${io.classes} classes`);
    }
    probs.set(out, start * io.classes);
  }
  const verdict = checkFixtureOutputs(probs, fixture.labels, io.classes, required);
  if (!verdict.ok) throw new Error(verdict.reason);
  return verdict.accuracy;
}
