import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSubcommands } from "../../tools/cli/command.ts";
import { checkCommandOn } from "../../tools/model/check/command.ts";
import type { RunClocks } from "../../tools/model/check/measure.ts";
import { signVersions } from "../../tools/model/signing/sign-versions.ts";
import { biasedDigits } from "../support/candidates.ts";
import { testSigner } from "../support/model-keys.ts";
import { addVersion, copyModels } from "../support/regional-server.ts";

const models = copyModels();
afterAll(() => models.remove());

/**
 * Clocks on which every timed run takes `runMs`, all of it on the thread's CPU: the wall clock moves by `runMs`
 * at each read (rowLatency reads it at each run's start and end), the CPU clock follows it at half speed. The
 * gates then judge the figures this test chose, whatever else the machine runs; the runs themselves are real.
 */
function steady(runMs: number): RunClocks {
  let ms = 0;
  return { now: () => (ms += runMs), threadCpuUs: () => ms * 500 };
}

async function check(...argv: string[]) {
  return checkOn(steady(0.1), ...argv);
}

async function checkOn(clocks: RunClocks, ...argv: string[]) {
  const lines: string[] = [];
  const notes: string[] = [];
  const code = await runSubcommands(
    ["check", ...argv, "--models", models.dir, "--samples", "300"],
    [checkCommandOn(clocks)],
    {
      log: (l) => lines.push(l),
      note: (l) => notes.push(l),
    },
    "model",
  );
  return { code, table: lines.join("\n"), notes };
}
const entry = (name: string, version: string) =>
  JSON.parse(readFileSync(join(models.dir, name, "config.json"), "utf8")).versions[version];
const failed = (table: string) =>
  table
    .split("\n")
    .filter((l) => l.startsWith("FAIL"))
    .map((l) => l.split(/ {2,}/)[1]);

describe("npm run model -- check", () => {
  it("passes a version identical to the served one and records that for its file", async () => {
    await addVersion(models.dir, "digits", "2");
    const { code, table, notes } = await check("--name", "digits", "--version", "2");
    expect(code).toBe(0);
    expect(table).toMatch(/^digits version 2 against version 1 \(served\):/);
    expect(table).toMatch(/pass {2}agreement +100\.00% of 362 rows/);
    expect(table).toMatch(/pass {2}p50 onnxruntime-node +0\.100 ms per row \(300 runs\) +<= 1\.000 ms/);
    expect(table).toMatch(/pass {2}p99 onnxruntime-node +0\.100 ms per row +<= 5\.000 ms/);
    expect(table).toMatch(/pass {2}energy \(estimate\) +0\.5000 mJ per prediction \(100\.0 µs CPU x 5 W\)/);
    expect(table.trim().endsWith("all gates passed")).toBe(true);
    expect(notes[0]).toMatch(/recorded in .*digits\/config.json \(versions\.2\.gates/);
    expect(entry("digits", "2").gates).toMatchObject({
      sha256: entry("digits", "2").sha256,
      passed: true,
      against: "1",
    });
  });

  it("fails the speed gates of a version slower than its budgets, and only those", async () => {
    const { code, table } = await checkOn(steady(6), "--name", "digits", "--version", "2", "--dry-run");
    expect(code).toBe(1);
    expect(failed(table)).toEqual(["p50 onnxruntime-node", "p99 onnxruntime-node", "energy (estimate)"]);
    expect(table).toMatch(/FAIL {2}p99 onnxruntime-node +6\.000 ms per row +<= 5\.000 ms/);
    expect(table).toMatch(/FAIL {2}energy \(estimate\) +30\.0000 mJ per prediction \(6000\.0 µs CPU x 5 W\)/);
  });

  it("fails a candidate that disagrees with the served version on 4% of rows, exit 1, and records the failure", async () => {
    const biased = biasedDigits(0.04);
    await addVersion(models.dir, "digits", "3", { bytes: biased.bytes, accuracy: biased.accuracy });
    const { code, table } = await check("--name", "digits", "--version", "3");
    expect(code).toBe(1);
    // Most rows it relabels were right: accuracy drops by more than the 1% tolerance.
    expect(failed(table)).toEqual(["accuracy"]);
    expect(table).toMatch(/pass {2}agreement +9[5-7]\.\d\d% of 362 rows/);
    expect(table.trim().endsWith("1 gate(s) failed")).toBe(true);
    expect(entry("digits", "3").gates).toMatchObject({ passed: false, results: { accuracy: { passed: false } } });
  });

  it("holds a version to the config's budgets, and checks the signature given a key", async () => {
    const signer = await testSigner();
    await signVersions(models.dir, "digits", signer, ["2"]);
    const path = join(models.dir, "digits", "config.json");
    const config = JSON.parse(readFileSync(path, "utf8"));
    config.budgets = { maxBytes: 1000 };
    writeFileSync(path, JSON.stringify(config));
    const other = await testSigner();
    const { code, table } = await check(
      "--name",
      "digits",
      "--version",
      "2",
      "--model-public-key",
      other.publicKey,
      "--dry-run",
    );
    expect(code).toBe(1);
    expect(failed(table)).toEqual(["signature", "size"]);
    expect(table).toMatch(/FAIL {2}size +203778 bytes +<= 1000 bytes/);
    // A dry run records nothing: the passing record of the first test stays.
    expect(entry("digits", "2").gates.passed).toBe(true);
  });

  it("measures an edge variant in onnxruntime-web too, against the edge's budgets", async () => {
    const { code, table } = await check("--name", "digits-edge", "--version", "1", "--dry-run");
    expect(table).toMatch(/pass {2}p99 onnxruntime-node +0\.100 ms per row +<= 2\.000 ms/);
    expect(table).toMatch(/pass {2}p99 onnxruntime-web +0\.100 ms per row +<= 5\.000 ms/);
    expect(failed(table)).toEqual([]);
    expect(code).toBe(0);
    // Slower than the edge's own budget (2 ms at p99), not the pools' (5 ms).
    const slow = await checkOn(steady(3), "--name", "digits-edge", "--version", "1", "--dry-run");
    expect(failed(slow.table)).toEqual([
      "p50 onnxruntime-node",
      "p99 onnxruntime-node",
      "p50 onnxruntime-web",
      "energy (estimate)",
    ]);
  });

  it("refuses a version config.json does not list", async () => {
    const { code, notes } = await check("--name", "digits", "--version", "9");
    expect(code).toBe(1);
    expect(notes[0]).toBe("model check: refused: digits has no version 9; config.json lists 1, 2, 3");
  });
});
