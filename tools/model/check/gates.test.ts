import { describe, expect, it } from "vitest";
import { budgetsFor, EDGE_BUDGETS, energyMj, FULL_BUDGETS } from "./budgets.ts";
import { evaluateGates, gatesTable, type Measured } from "./gates.ts";
import { gatesRecord, withGatesRecord } from "./record.ts";

const SHA = "a".repeat(64);
const good: Measured = {
  file: { bytes: 1000, sha256: SHA, listedSha256: SHA, listedBytes: 1000 },
  load: { error: undefined },
  schema: undefined,
  fixture: { ok: true, accuracy: 0.98 },
  comparison: { rows: 300, servedVersion: "1", candidate: 0.975, served: 0.98, agreement: 0.99 },
  node: { p50Ms: 0.03, p99Ms: 0.2, cpuUsPerRow: 40, samples: 2000 },
  web: { p50Ms: 0.05, p99Ms: 0.5, cpuUsPerRow: 80, samples: 2000 },
};
const verdicts = (m: Measured, edge = false) =>
  Object.fromEntries(evaluateGates(m, edge ? EDGE_BUDGETS : FULL_BUDGETS, edge).map((r) => [r.gate, r.passed]));

describe("release gates", () => {
  it("passes a candidate within every budget; edge variants also get onnxruntime-web rows", () => {
    const full = evaluateGates(good, FULL_BUDGETS, false);
    expect(full.map((r) => r.gate)).toEqual([
      "checksum",
      "signature",
      "load",
      "schema",
      "fixture",
      "accuracy",
      "agreement",
      "size",
      "p50 onnxruntime-node",
      "p99 onnxruntime-node",
      "energy (estimate)",
    ]);
    expect(full.every((r) => r.passed)).toBe(true);
    const edge = evaluateGates(good, EDGE_BUDGETS, true);
    expect(edge.map((r) => r.gate)).toContain("p99 onnxruntime-web");
    // An edge variant's energy is that of the runtime it serves in, the Worker's wasm.
    expect(edge.find((r) => r.gate === "energy (estimate)")!.value).toBe(
      "0.4000 mJ per prediction (80.0 µs CPU x 5 W)",
    );
  });

  it.each<[string, Partial<Measured>, string]>([
    ["a checksum mismatch", { file: { ...good.file, sha256: "b".repeat(64) } }, "checksum"],
    ["a signature problem", { signature: { problem: "digits/2 is not signed" } }, "signature"],
    ["a schema mismatch", { schema: 'graph: "x" [-1, 3]' }, "schema"],
    ["a failed fixture check", { fixture: { ok: false, reason: "fixture row 3: output 2 is NaN" } }, "fixture"],
    ["accuracy more than the tolerance below", { comparison: { ...good.comparison!, candidate: 0.969 } }, "accuracy"],
    ["low agreement", { comparison: { ...good.comparison!, agreement: 0.94 } }, "agreement"],
    [
      "a file over the size budget",
      { file: { ...good.file, bytes: 65 * 1024 * 1024, listedBytes: 65 * 1024 * 1024 } },
      "size",
    ],
    ["a slow median", { node: { ...good.node!, p50Ms: 1.5 } }, "p50 onnxruntime-node"],
    ["a slow tail", { node: { ...good.node!, p99Ms: 6 } }, "p99 onnxruntime-node"],
    ["too much energy", { node: { ...good.node!, cpuUsPerRow: 1100 } }, "energy (estimate)"],
  ])("fails on %s, and only that gate", (_what, change, gate) => {
    const result = verdicts({ ...good, ...change });
    expect(
      Object.entries(result)
        .filter(([, ok]) => !ok)
        .map(([g]) => g),
    ).toEqual([gate]);
  });

  it("fails what could not be measured after a load failure", () => {
    const failed = evaluateGates({ file: good.file, load: { error: "protobuf parsing failed" } }, FULL_BUDGETS, false);
    expect(failed.filter((r) => !r.passed).map((r) => [r.gate, r.value])).toEqual([
      ["load", "protobuf parsing failed"],
      ["schema", "not measured"],
      ["fixture", "not measured"],
      ["accuracy", "not measured"],
      ["agreement", "not measured"],
      ["p50 onnxruntime-node", "not measured"],
      ["p99 onnxruntime-node", "not measured"],
      ["energy (estimate)", "not measured"],
    ]);
  });

  it("takes the config's budgets over the role's defaults", () => {
    const config = { standsFor: "digits", budgets: { p99Ms: 0.1, wattsPerCore: 10 } } as never;
    expect(budgetsFor(config)).toEqual({ ...EDGE_BUDGETS, p99Ms: 0.1, wattsPerCore: 10 });
    expect(budgetsFor({} as never)).toEqual(FULL_BUDGETS);
    expect(energyMj(50, 5)).toBeCloseTo(0.25, 12);
  });

  it("prints a table with a verdict per gate, and records the result for the file's sha256", () => {
    const rows = evaluateGates({ ...good, node: { ...good.node!, p99Ms: 9 } }, FULL_BUDGETS, false);
    const table = gatesTable(rows).split("\n");
    expect(table[0]).toMatch(/^ {6}gate +measured +budget$/);
    expect(table.find((l) => l.includes("p99 onnxruntime-node"))).toMatch(
      /^FAIL {2}p99 onnxruntime-node +9\.000 ms per row +<= 5\.000 ms$/,
    );
    const record = gatesRecord(rows, SHA, "1", new Date("2026-12-01T00:00:00Z"));
    expect(record).toMatchObject({ sha256: SHA, passed: false, against: "1", checkedAt: "2026-12-01T00:00:00.000Z" });
    expect(record.results["p99 onnxruntime-node"]).toEqual({
      measured: "9.000 ms per row",
      budget: "<= 5.000 ms",
      passed: false,
    });
    const raw = { name: "digits", versions: { "1": { file: "model.onnx" }, "2": { file: "model.onnx", owner: "x" } } };
    const written = withGatesRecord(raw, "2", record);
    expect(written.versions["2"]).toEqual({ file: "model.onnx", owner: "x", gates: record });
    expect(written.versions["1"]).toBe(raw.versions["1"]);
  });
});
