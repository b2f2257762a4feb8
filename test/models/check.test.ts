import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSubcommands } from "../../tools/cli/command.ts";
import { COMMANDS } from "../../tools/model/commands.ts";
import { signVersions } from "../../tools/model/signing/sign-versions.ts";
import { biasedDigits } from "../support/candidates.ts";
import { testSigner } from "../support/model-keys.ts";
import { addVersion, copyModels } from "../support/regional-server.ts";

const models = copyModels();
afterAll(() => models.remove());

async function check(...argv: string[]) {
  const lines: string[] = [];
  const notes: string[] = [];
  const code = await runSubcommands(
    ["check", ...argv, "--models", models.dir, "--samples", "300"],
    COMMANDS,
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
    expect(table).toMatch(/pass {2}energy \(estimate\) +[\d.]+ mJ per prediction \([\d.]+ µs CPU x 5 W\)/);
    expect(table.trim().endsWith("all gates passed")).toBe(true);
    expect(notes[0]).toMatch(/recorded in .*digits\/config.json \(versions\.2\.gates/);
    expect(entry("digits", "2").gates).toMatchObject({
      sha256: entry("digits", "2").sha256,
      passed: true,
      against: "1",
    });
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

  it("measures an edge variant in onnxruntime-web too", async () => {
    const { code, table } = await check("--name", "digits-edge", "--version", "1", "--dry-run");
    expect(table).toMatch(/(pass|FAIL) {2}p99 onnxruntime-web +[\d.]+ ms per row/);
    expect(failed(table).filter((g) => !g!.startsWith("p"))).toEqual([]);
    expect(code).toBe(failed(table).length === 0 ? 0 : 1);
  });

  it("refuses a version config.json does not list", async () => {
    const { code, notes } = await check("--name", "digits", "--version", "9");
    expect(code).toBe(1);
    expect(notes[0]).toBe("model check: refused: digits has no version 9; config.json lists 1, 2, 3");
  });
});
