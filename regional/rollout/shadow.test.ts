import { describe, expect, it } from "vitest";
import type { ModelVersion } from "../model-version.ts";
import { ShadowRunner } from "./shadow.ts";
import type { ShadowResult } from "./step-evidence.ts";

/**
 * A version as the shadow runner sees it, on a clock the test owns: each run takes `coldMs` when the version's
 * last run was not its own (another version ran in between, or none ever did), `warmMs` otherwise, and fails
 * when `fail` says so.
 */
function fakeVersions(clock: { ms: number }) {
  let last: string | undefined;
  const make = (version: string, runMs: { coldMs: number; warmMs: number }, fail?: () => Error | undefined) =>
    ({
      name: "digits",
      version,
      submitted: 0,
      lease: () => ({ release() {} }),
      async shadowRun(data: Float32Array) {
        clock.ms += last === version ? runMs.warmMs : runMs.coldMs;
        last = version;
        const error = fail?.();
        if (error) throw error;
        return Float32Array.of(data[0]!, 1 - data[0]!);
      },
    }) as unknown as ModelVersion;
  return make;
}

/** A runner over `stable` and `candidate` that takes every copy; resolves with the first `n` results. */
function runner(stable: ModelVersion, candidate: ModelVersion, clock: { ms: number }, n: number) {
  const results: ShadowResult[] = [];
  const failures: { version: string | undefined; reason: string }[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const shadow = new ShadowRunner({
    pair: () => ({ stable, candidate }),
    maxQueue: () => 100,
    sample: () => 1,
    random: () => 0,
    now: () => clock.ms,
    record: (result) => {
      results.push(result);
      if (results.length === n) done();
    },
    failed: (version, error) => failures.push({ version: version?.version, reason: error.message }),
  });
  return { shadow, results, failures, finished };
}

const rows = (x: number) => ({ data: Float32Array.of(x), batch: 1, width: 1 });

describe("ShadowRunner", () => {
  it("times each version warm, whichever ran before: identical versions take identical times", async () => {
    const clock = { ms: 0 };
    const make = fakeVersions(clock);
    const speed = { coldMs: 5, warmMs: 1 };
    const { shadow, results, finished } = runner(make("1", speed), make("2", speed), clock, 4);
    for (let i = 0; i < 4; i++) shadow.offer(rows(0.9));
    await finished;
    // Cold runs would time the second version of every pair at 5 ms and the first at 1 (or 5) ms.
    expect(results.map((r) => [r.stableMs, r.candidateMs])).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
    expect(results.every((r) => r.disagreements === 0)).toBe(true);
  });

  it("queues copies up to maxQueue and drops the next", () => {
    const clock = { ms: 0 };
    const make = fakeVersions(clock);
    const speed = { coldMs: 1, warmMs: 1 };
    const shadow = new ShadowRunner({
      pair: () => ({ stable: make("1", speed), candidate: make("2", speed) }),
      maxQueue: () => 2,
      sample: () => 1,
      random: () => 0,
      record: () => {},
      failed: () => {},
    });
    const reused = rows(0.9);
    expect([shadow.offer(reused), shadow.offer(reused), shadow.offer(reused)]).toEqual([true, true, false]);
    expect(shadow.waiting).toBe(2);
    shadow.clear();
  });

  it("keeps a failed run's reason: reported with its version, and recorded as that version's error", async () => {
    const clock = { ms: 0 };
    const make = fakeVersions(clock);
    const speed = { coldMs: 1, warmMs: 1 };
    let runs = 0;
    const candidate = make("2", speed, () => (++runs % 2 === 0 ? new Error("session lost") : undefined));
    const { shadow, results, failures, finished } = runner(make("1", speed), candidate, clock, 2);
    shadow.offer(rows(0.9));
    shadow.offer(rows(0.1));
    await finished;
    expect(results.map((r) => [r.stableMs, r.candidateMs])).toEqual([
      [1, undefined],
      [1, undefined],
    ]);
    expect(failures).toEqual([
      { version: "2", reason: "session lost" },
      { version: "2", reason: "session lost" },
    ]);
  });

  it("reports a failure of its own step rather than leaving it unhandled", async () => {
    const clock = { ms: 0 };
    const make = fakeVersions(clock);
    const speed = { coldMs: 1, warmMs: 1 };
    const failures: { version: string | undefined; reason: string }[] = [];
    let reported: () => void = () => {};
    const reportedOnce = new Promise<void>((resolve) => {
      reported = resolve;
    });
    const shadow = new ShadowRunner({
      pair: () => ({ stable: make("1", speed), candidate: make("2", speed) }),
      maxQueue: () => 100,
      sample: () => 1,
      random: () => 0,
      record: () => {
        throw new Error("evidence store broken");
      },
      failed: (version, error) => {
        failures.push({ version: version?.version, reason: error.message });
        reported();
      },
    });
    shadow.offer(rows(0.9));
    await reportedOnce;
    expect(failures).toEqual([{ version: undefined, reason: "evidence store broken" }]);
  });
});
