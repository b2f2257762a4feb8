import ortWasm from "onnxruntime-web/ort-wasm-simd-threaded.wasm";
import * as ort from "onnxruntime-web/wasm";
import type { ModelIo } from "../../protocol/model-config.ts";
import type { EdgeSession, Runner } from "./edge-variant.ts";
import { DirectRunner, type OrtWasmExports, ortWasmExports } from "./ort-direct.ts";
import { serialRuns } from "./serial-runs.ts";
import { WARM_UP_MODEL_BASE64 } from "./warm-up-model.ts";

/**
 * onnxruntime-web inside workerd (see shared notes, toolchain.md). Workers refuse to compile WebAssembly
 * from bytes at run time, and `import.meta.url` is empty, so ORT can locate neither its glue nor its wasm.
 * What works: wrangler's CompiledWasm rule hands us the SIMD wasm precompiled; a truthy
 * `env.wasm.wasmBinary` makes ORT use its built-in glue, which then calls
 * `WebAssembly.instantiate(wasmBinary, imports)`; we answer exactly that call with the precompiled module,
 * and keep the instance: runs go straight to its C functions (ort-direct.ts).
 */
const PLACEHOLDER = "edgecascade: precompiled ort wasm";
const PLACEHOLDER_BINARY = new TextEncoder().encode(PLACEHOLDER);

/** ORT copies `wasmBinary` before instantiating, so its call is recognised by content, not identity. */
function isPlaceholder(source: unknown): boolean {
  if (!ArrayBuffer.isView(source) && !(source instanceof ArrayBuffer)) return false;
  const bytes = ArrayBuffer.isView(source)
    ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
    : new Uint8Array(source);
  return bytes.byteLength === PLACEHOLDER_BINARY.byteLength && new TextDecoder().decode(bytes) === PLACEHOLDER;
}

/** ORT's one wasm instance in this isolate and what it was instantiated with, once instantiated. */
let instantiated: { instance: WebAssembly.Instance; imports: WebAssembly.Imports | undefined } | undefined;

function installWasm(): void {
  ort.env.wasm.numThreads = 1; // Workers have no threads (no SharedArrayBuffer workers).
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmBinary = PLACEHOLDER_BINARY;
  const instantiate = WebAssembly.instantiate.bind(WebAssembly) as (
    source: BufferSource | WebAssembly.Module,
    imports?: WebAssembly.Imports,
  ) => Promise<unknown>;
  // Only ORT's own call (a copy of our placeholder; real wasm starts with "\0asm") is redirected.
  WebAssembly.instantiate = ((source: BufferSource | WebAssembly.Module, imports?: WebAssembly.Imports) =>
    isPlaceholder(source)
      ? (instantiate(ortWasm, imports) as Promise<WebAssembly.Instance>).then((created) => {
          instantiated = { instance: created, imports };
          return { instance: created, module: ortWasm };
        })
      : instantiate(source, imports)) as typeof WebAssembly.instantiate;
}

/**
 * "basic" graph optimisations fold the int8 weights' DequantizeLinear into constants once, as "all" does, without
 * the layout and fusion passes that find nothing in a model this small: session creation ~80 → ~60 ms of CPU in
 * workerd here (docs/edge.md). onnxruntime-web's outputs are identical at every level (toolchain notes).
 */
const SESSION_OPTIONS: ort.InferenceSession.SessionOptions = {
  executionProviders: ["wasm"],
  graphOptimizationLevel: "basic",
};

installWasm();
/**
 * ORT's wasm instantiated, its runtime initialised and the code of every operator the edge variants use compiled
 * at start-up (module scope), not on a request (docs/edge.md, *Cold isolates*); each model's own session is
 * then a few ms.
 * A failure here is not final: the first session creation awaits this and tries again.
 */
const runtimeStarted: Promise<void> = warmUp().catch((err: unknown) =>
  console.warn(`onnxruntime-web did not start at start-up: ${(err as Error).message}`),
);

/** A session of the start-up model (warm-up-model.ts), created, run once and released. */
async function warmUp(): Promise<void> {
  const bytes = Uint8Array.from(atob(WARM_UP_MODEL_BASE64), (c) => c.charCodeAt(0));
  const session = await ort.InferenceSession.create(bytes, SESSION_OPTIONS);
  try {
    await session.run({ x: new ort.Tensor("float32", Float32Array.from([0.2, 0.7, 0.9, 0.1]), [2, 2]) });
  } finally {
    await session.release();
  }
}

/** The session handle onnxruntime-web's wasm session handler keeps (`sessionId`, the `OrtSession*`). */
function sessionHandle(session: ort.InferenceSession): number | undefined {
  const id = (session as unknown as { handler?: { sessionId?: unknown } }).handler?.sessionId;
  return typeof id === "number" && id > 0 ? id : undefined;
}

/** `session.run` per call, one at a time (serial-runs.ts). */
function sessionRunner(session: ort.InferenceSession, io: ModelIo): ReturnType<typeof serialRuns> {
  const fetches = [io.outputName];
  return serialRuns(async (data, batch) => {
    const input = new ort.Tensor("float32", data, [batch, io.width]);
    const outputs = await session.run({ [io.inputName]: input }, fetches);
    const output = outputs[io.outputName];
    if (!output || !(output.data instanceof Float32Array)) {
      throw new Error(`model output "${io.outputName}" missing or not float32`);
    }
    return output.data;
  });
}

/** Rows that exercise every feature, for comparing the two ways of running a session. */
function checkRows(width: number, batch: number): Float32Array {
  return Float32Array.from({ length: width * batch }, (_, i) => ((i * 7) % 17) / 4);
}

/**
 * The direct runner of `session`, once it has given the same outputs as `session.run` on the same rows at
 * batch sizes 1 and 3; undefined (with a warning) when this ORT build's exports are not the ones it knows.
 */
async function directRunner(
  wasm: OrtWasmExports | undefined,
  session: ort.InferenceSession,
  io: ModelIo,
): Promise<DirectRunner | undefined> {
  const handle = sessionHandle(session);
  if (!wasm || handle === undefined) {
    console.warn(`onnxruntime-web: direct runs unavailable (unknown build); using session.run`);
    return undefined;
  }
  const direct = new DirectRunner(wasm, {
    session: handle,
    inputName: io.inputName,
    outputName: io.outputName,
    width: io.width,
    classes: io.classes,
  });
  const viaRun = sessionRunner(session, io);
  // A graph with a fixed batch takes only that many rows per run.
  for (const batch of io.fixedBatch === undefined ? [1, 3] : [io.fixedBatch]) {
    const rows = checkRows(io.width, batch);
    const expected = await viaRun(rows, batch);
    const got = direct.run(rows, batch);
    if (got.length !== expected.length || got.some((v, i) => v !== expected[i])) {
      console.warn("onnxruntime-web: direct runs differ from session.run; using session.run");
      direct.dispose();
      return undefined;
    }
  }
  return direct;
}

/**
 * An ORT session over `bytes` (wasm execution provider, one thread): its runs (direct once checked, else
 * `session.run` one at a time) and its release, which gives the wasm heap back every byte of it (the direct
 * runner's buffers and OrtValues, then the session).
 */
export async function createOrtSession(bytes: Uint8Array, io: ModelIo): Promise<EdgeSession> {
  await runtimeStarted;
  // The session fetches only the output that is read: a tree ensemble's int64 labels are never copied out.
  const session = await ort.InferenceSession.create(bytes, SESSION_OPTIONS);
  const wasm = instantiated && ortWasmExports(instantiated.instance, instantiated.imports);
  const direct = await directRunner(wasm, session, io);
  if (direct) {
    const run: Runner = (data, batch) => direct.run(data, batch);
    return {
      run,
      async release() {
        direct.dispose();
        await session.release();
      },
    };
  }
  const serial = sessionRunner(session, io);
  return {
    run: serial,
    async release() {
      await serial.idle();
      await session.release();
    },
  };
}

/**
 * The wasm heap's size now: it grows as sessions need room and never shrinks (released sessions' memory is
 * reused by the next ones); it counts against the isolate's 128 MB. 0 before ORT started.
 */
export function wasmHeapBytes(): number {
  const memory = instantiated && ortWasmExports(instantiated.instance, instantiated.imports)?.memory;
  return memory ? memory.buffer.byteLength : 0;
}
