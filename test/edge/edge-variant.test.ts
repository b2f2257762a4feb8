import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-web";
import { describe, expect, it } from "vitest";
import {
  type EdgeSession,
  EdgeVariant,
  type EdgeVariantSource,
  verifyModelBytes,
} from "../../edge/inference/edge-variant.ts";
import { serialRuns } from "../../edge/inference/serial-runs.ts";
import { edgeSessionBytes, SessionPool } from "../../edge/inference/session-pool.ts";
import { ServedModel } from "../../edge/models/served-model.ts";
import { swapVariant } from "../../edge/registry/swap-variant.ts";
import type { ModelIo } from "../../protocol/model-config.ts";
import { modelBytes, modelConfig } from "../support/heldout.ts";
import { confidentRows, TOLERANCE, unsureRows } from "./support.ts";

// EdgeVariant's checks and concurrency with real onnxruntime-web (its Node build: the same wasm kernels the
// Worker runs; the workerd loading path itself is covered by the workerd suites).
const config = modelConfig("digits-edge");
const bytes = modelBytes("digits-edge");

/** Sessions released so far, by this file's sessions. */
let released = 0;

async function ortSession(model: Uint8Array, io: ModelIo): Promise<EdgeSession> {
  const session = await ort.InferenceSession.create(model, { executionProviders: ["wasm"] });
  const run = serialRuns(async (data, batch) => {
    const outputs = await session.run({
      [io.inputName]: new ort.Tensor("float32", data, [batch, io.width]),
    });
    return outputs[io.outputName]!.data as Float32Array;
  });
  return {
    run,
    async release() {
      await run.idle();
      await session.release();
      released++;
    },
  };
}

const source = (over: Partial<EdgeVariantSource> = {}): EdgeVariantSource => ({
  config,
  bytes,
  createSession: ortSession,
  ...over,
});

describe("EdgeVariant", () => {
  it("refuses model bytes that differ from config.json's sha256 or size", async () => {
    await expect(verifyModelBytes(config, bytes)).resolves.toBeUndefined();
    const tampered = Uint8Array.from(bytes);
    tampered[tampered.length - 1]! ^= 1;
    await expect(verifyModelBytes(config, tampered)).rejects.toThrow(
      new RegExp(
        `checksum mismatch: .* config.json says [0-9a-f]{64} \\(${bytes.length} bytes\\); the edge model will not load`,
      ),
    );
    await expect(verifyModelBytes(config, bytes.subarray(1))).rejects.toThrow(`(${bytes.length - 1} bytes)`);
    let created = 0;
    const counted: EdgeVariantSource["createSession"] = async (...args) => {
      created++;
      return ortSession(...args);
    };
    const model = new EdgeVariant(source({ bytes: tampered, createSession: counted }));
    await expect(model.load()).rejects.toThrow(/sha256/);
    expect(created).toBe(0); // the session is never created from unverified bytes
    expect(model.ready).toBe(false);
    expect((model.loadError as Error).message).toMatch(/sha256/);
  });

  it("retries a failed load on the next use", async () => {
    let attempts = 0;
    const model = new EdgeVariant(
      source({
        createSession: async (...args) => {
          if (++attempts === 1) throw new Error("out of memory");
          return ortSession(...args);
        },
      }),
    );
    const row = Float32Array.from(confidentRows[0]!.input);
    await expect(model.infer(row, 1)).rejects.toThrow("out of memory");
    expect(model.ready).toBe(false);
    const probs = await model.infer(row, 1);
    expect(probs).toHaveLength(10);
    expect(model.loads).toBe(2);
    expect(model.ready).toBe(true);
  });

  it("gives each of many overlapping calls its own rows' answer", async () => {
    const model = new EdgeVariant(source());
    const rows = [...confidentRows.slice(0, 40), ...unsureRows];
    const answers = await Promise.all(
      rows.map((r, i) =>
        i % 3 === 0
          ? model.infer(Float32Array.from([...r.input, ...r.input]), 2).then((p) => p.subarray(0, 10))
          : model.infer(Float32Array.from(r.input), 1),
      ),
    );
    expect(model.loads).toBe(1);
    for (const [i, row] of rows.entries()) {
      const expected = row.expected["digits-edge"]!;
      for (const [c, p] of expected.entries()) expect(Math.abs(answers[i]![c]! - p)).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it("exposes its calibration and stands in for digits", () => {
    const model = new EdgeVariant(source());
    expect(model.calibration.against).toEqual({ model: "digits", version: "1" });
    expect(model.calibration.threshold).toBe(config.versions["1"]!.cascade!.threshold);
    expect(model.calibration.threshold).toBeGreaterThan(0.5);
    expect(model.version).toBe("1");
  });
});

describe("edge variants within a session budget", () => {
  // Three variants (the same file under three names) in a pool with room for two sessions.
  const named = (name: string, pool: SessionPool) => new EdgeVariant(source({ config: { ...config, name }, pool }));
  const row = Float32Array.from(confidentRows[0]!.input);

  it("creates a session on first use, evicts the least recently used to make room, and creates it again when used", async () => {
    const pool = new SessionPool(2.5 * edgeSessionBytes(bytes.length));
    const [a, b, c] = ["a-edge", "b-edge", "c-edge"].map((n) => named(n, pool)) as [
      EdgeVariant,
      EdgeVariant,
      EdgeVariant,
    ];
    expect(a.ready).toBe(false);
    await a.infer(row, 1);
    await b.infer(row, 1);
    await a.infer(row, 1); // b is now the least recently used
    const before = released;
    await c.infer(row, 1);
    expect([a.ready, b.ready, c.ready]).toEqual([true, false, true]);
    expect(b.evictions).toBe(1);
    expect(released).toBe(before + 1); // its session was released, not just forgotten
    expect(pool.snapshot()).toMatchObject({ resident: 2, created: 3, evictions: 1 });
    expect(pool.usedBytes()).toBeLessThanOrEqual(pool.budgetBytes);
    // b again: created anew (its bytes checked again), a is evicted (c was used after it).
    const probs = await b.infer(row, 1);
    expect(probs).toHaveLength(10);
    expect([a.ready, b.ready, c.ready]).toEqual([false, true, true]);
    expect(b.loads).toBe(2);
    expect(pool.snapshot()).toMatchObject({ resident: 2, created: 4, evictions: 2 });
  });

  it("concurrent first uses of models that do not all fit never hold more than the budget", async () => {
    const pool = new SessionPool(2.5 * edgeSessionBytes(bytes.length));
    const models = ["d-edge", "e-edge", "f-edge", "g-edge"].map((n) => named(n, pool));
    let most = 0;
    await Promise.all(
      models.map(async (m) => {
        await m.infer(row, 1);
        most = Math.max(most, pool.usedBytes());
      }),
    );
    expect(most).toBeLessThanOrEqual(pool.budgetBytes);
    expect(pool.snapshot().resident).toBe(2);
  });

  it("refuses a session larger than the whole budget, saying so", async () => {
    const tiny = new SessionPool(1024);
    const model = named("h-edge", tiny);
    await expect(model.load()).rejects.toThrow(
      /h-edge: no room within EDGE_SESSION_MEMORY_MB: it needs 0\.\d+ MB, more than the whole budget/,
    );
  });
});

describe("a variant from the registry swapped in", () => {
  // Room for two sessions; digits' bundled variant and the registry's (the same file: what is counted is the same).
  const pool = () => new SessionPool(2.5 * edgeSessionBytes(bytes.length));
  const served = (edge: EdgeVariant) => new ServedModel({ config: modelConfig("digits"), edge, samples: () => [] });
  const row = Float32Array.from(confidentRows[0]!.input);

  it("has its session created before the swap when the one it replaces had one, which is then released", async () => {
    const sessions = pool();
    const bundled = new EdgeVariant(source({ pool: sessions }));
    const model = served(bundled);
    await bundled.infer(row, 1);
    const next = new EdgeVariant(source({ pool: sessions }));
    const before = released;
    await swapVariant(model, next, sessions);
    expect(model.edge).toBe(next);
    expect([bundled.ready, next.ready]).toEqual([false, true]);
    expect(released).toBe(before + 1);
    expect(sessions.snapshot()).toMatchObject({ resident: 1, residentBytes: next.bytes, created: 2, evictions: 0 });
  });

  it("takes the place of one without a session as it is: its session is created on its first use, within the budget", async () => {
    const sessions = pool();
    const model = served(new EdgeVariant(source({ pool: sessions })));
    const next = new EdgeVariant(source({ pool: sessions }));
    await swapVariant(model, next, sessions);
    expect(model.edge).toBe(next);
    expect(next.ready).toBe(false);
    expect(sessions.snapshot()).toMatchObject({ resident: 0, created: 0 });
    expect(await next.infer(row, 1)).toHaveLength(10);
    expect(sessions.snapshot()).toMatchObject({ resident: 1, residentBytes: next.bytes, created: 1 });
  });

  it("replaces nothing when its session cannot be created", async () => {
    const sessions = pool();
    const bundled = new EdgeVariant(source({ pool: sessions }));
    const model = served(bundled);
    await bundled.load();
    const failing = new EdgeVariant(
      source({
        pool: sessions,
        createSession: async () => {
          throw new Error("out of memory");
        },
      }),
    );
    await expect(swapVariant(model, failing, sessions)).rejects.toThrow("out of memory");
    expect(model.edge).toBe(bundled);
    expect(bundled.ready).toBe(true);
  });
});

describe("an edge variant whose graph has a fixed batch", () => {
  it("runs a request's rows one fixed batch at a time, each row as a run of its own would answer it", async () => {
    // torch.onnx.export without dynamic_axes: "input" [1, 13] -> "output" [1, 3] (test/fixtures/converters/).
    const fixed = new Uint8Array(readFileSync(new URL("../fixtures/converters/torch-fixed.onnx", import.meta.url)));
    const entry = {
      ...config.versions["1"]!,
      sha256: createHash("sha256").update(fixed).digest("hex"),
      bytes: fixed.length,
      fixedBatch: 1,
    };
    const fixedConfig = {
      ...config,
      name: "torch-fixed-edge",
      inputs: [{ name: "input", datatype: "FP32" as const, shape: [-1, 13] }],
      outputs: [{ name: "output", datatype: "FP32" as const, shape: [-1, 3] }],
      labels: ["0", "1", "2"],
      versions: { "1": entry },
    };
    const model = new EdgeVariant(source({ config: fixedConfig, bytes: fixed }));
    const rows = Array.from({ length: 5 }, (_, r) => Array.from({ length: 13 }, (_, f) => ((r + 1) * (f + 3)) % 7));
    const together = await model.infer(Float32Array.from(rows.flat()), 5);
    const raw = await ort.InferenceSession.create(fixed, { executionProviders: ["wasm"] });
    for (const [r, row] of rows.entries()) {
      const one = await raw.run({ input: new ort.Tensor("float32", Float32Array.from(row), [1, 13]) });
      expect(Array.from(together.subarray(r * 3, r * 3 + 3))).toEqual(Array.from(one.output!.data as Float32Array));
    }
    await raw.release();
  });
});
