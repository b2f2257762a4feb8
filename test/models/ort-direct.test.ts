import * as ort from "onnxruntime-web/wasm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DirectRunner,
  type OrtWasmExports,
  ortWasmExports,
  type WasmImports,
  type WasmInstance,
} from "../../edge/inference/ort-direct.ts";
import { modelIoOf } from "../../protocol/model-config.ts";
import { heldoutOf, modelBytes, modelConfig } from "../support/heldout.ts";

// The direct runner against `session.run` on the same session, in Node's onnxruntime-web: the same wasm build
// the Worker runs (its glue instantiates it the same way, so the instance is caught the same way).
let caught: { instance: WasmInstance; imports: WasmImports | undefined } | undefined;
// (Node's type checking here has no WebAssembly namespace: reached through globalThis.)
const webAssembly = (
  globalThis as unknown as { WebAssembly: { instantiate: (...args: unknown[]) => Promise<unknown> } }
).WebAssembly;
const instantiate = webAssembly.instantiate.bind(webAssembly);
webAssembly.instantiate = async (...args: unknown[]) => {
  const [source, imports] = args as [unknown, WasmImports | undefined];
  const result = (await instantiate(source, imports)) as { instance?: WasmInstance };
  if (result.instance) caught = { instance: result.instance, imports };
  return result;
};
ort.env.wasm.numThreads = 1;

let wasm: OrtWasmExports;
type Handled = { handler: { sessionId: number } };
beforeAll(async () => {
  await ort.InferenceSession.create(modelBytes("digits-edge"));
  wasm = ortWasmExports(caught!.instance, caught!.imports)!;
});

describe.each([
  ["digits-edge", "digits"],
  ["breast-cancer-edge", "breast-cancer"],
])("DirectRunner on %s", (edgeName, fullName) => {
  it("answers every held-out row exactly as session.run does, at batch sizes 1, 2, 7 and 64", async () => {
    expect(wasm).toBeDefined();
    const io = modelIoOf(modelConfig(edgeName));
    const session = await ort.InferenceSession.create(modelBytes(edgeName), { graphOptimizationLevel: "basic" });
    const handle = (session as unknown as { handler: { sessionId: number } }).handler.sessionId;
    const direct = new DirectRunner(wasm, { session: handle, ...io });
    const rows = heldoutOf(fullName).rows.map((r) => r.input);
    let compared = 0;
    for (const batch of [1, 2, 7, 64]) {
      for (let start = 0; start + batch <= rows.length; start += batch) {
        const data = Float32Array.from(rows.slice(start, start + batch).flat());
        const feeds = { [io.inputName]: new ort.Tensor("float32", data, [batch, io.width]) };
        const expected = (await session.run(feeds, [io.outputName]))[io.outputName]!.data;
        const got = direct.run(data, batch);
        expect(got).toEqual(expected);
        // The answer is the caller's: the next run does not change it.
        const copy = Float32Array.from(got);
        direct.run(new Float32Array(data.length), batch);
        expect(got).toEqual(copy);
        compared += batch;
      }
    }
    expect(compared).toBeGreaterThan(rows.length * 3);
  });

  it("once disposed and its session released, leaves nothing in the wasm heap: a hundred in turn take no more room than one", async () => {
    const io = modelIoOf(modelConfig(edgeName));
    const rows = Float32Array.from(
      heldoutOf(fullName)
        .rows.slice(0, 8)
        .flatMap((r) => r.input),
    );
    const cycle = async () => {
      const session = await ort.InferenceSession.create(modelBytes(edgeName), { graphOptimizationLevel: "basic" });
      const direct = new DirectRunner(wasm, { session: (session as unknown as Handled).handler.sessionId, ...io });
      for (const batch of [1, 3, 8]) direct.run(rows.subarray(0, batch * io.width), batch);
      direct.dispose();
      expect(() => direct.run(rows.subarray(0, io.width), 1)).toThrow("this session was released");
      await session.release();
    };
    /**
     * Where the allocator puts a small block now: it moves up as the heap fills with what was never freed, and may
     * move down when onnxruntime frees what it kept from its first sessions.
     */
    const probe = () => {
      const pointer = wasm.malloc(64);
      wasm.free(pointer);
      return pointer;
    };
    await cycle();
    const settled = probe();
    for (let i = 0; i < 100; i++) await cycle();
    expect(probe()).toBeLessThanOrEqual(settled);
  });

  it("refuses rows that do not fill the batch", () => {
    const io = modelIoOf(modelConfig(edgeName));
    const direct = new DirectRunner(wasm, { session: 1, ...io });
    expect(() => direct.run(new Float32Array(io.width + 1), 1)).toThrow(
      `expected 1x${io.width} values, got ${io.width + 1}`,
    );
  });
});
