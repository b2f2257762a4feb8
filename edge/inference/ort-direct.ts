/**
 * Runs of an onnxruntime-web session straight through the C functions of its wasm build, without the
 * per-call work of `session.run` (~25 µs for a ~1 µs kernel, docs/performance.md): ORT's JS allocates run
 * options, mallocs and copies every input, creates and releases an OrtValue per tensor, copies each output
 * into a fresh array and wraps it in a Tensor, on every call, across a chain of awaits. Here each batch size
 * gets, once, an input and an output buffer in the wasm heap with an OrtValue over each; a run copies the rows
 * in, calls `OrtRun` with the output preallocated, and copies the probabilities out. (`session.run`'s own
 * preallocated outputs do not help: for CPU tensors, 1.30.0 hands back the fetch tensor without copying the
 * result into it, so it reads zeros; measured in Node.)
 */

import { ORT_EXPORT_NAMES } from "./ort-export-names.ts";

/** The C functions a run needs, and the heap. */
export interface OrtWasmExports {
  malloc(bytes: number): number;
  free(pointer: number): void;
  /** `OrtCreateTensor(type, data, bytes, dims, dimsLength, location)`: an OrtValue over caller-owned data, 0 on failure. */
  createTensor(type: number, data: number, bytes: number, dims: number, dimsLength: number, location: number): number;
  /** `OrtRun(session, inputNames, inputs, inputCount, outputNames, outputCount, outputs, runOptions)`: 0 or an error code. */
  run(
    session: number,
    inputNames: number,
    inputs: number,
    inputCount: number,
    outputNames: number,
    outputCount: number,
    outputs: number,
    runOptions: number,
  ): number;
  /** `OrtGetLastError(code*, message**)`. */
  getLastError(code: number, message: number): void;
  /** `OrtReleaseTensor(value)`: an OrtValue from `createTensor`, released (the data it points at is the caller's). */
  releaseTensor(tensor: number): void;
  memory: WasmMemory;
}

/** The parts of WebAssembly's types used here, written out so that Node's type checking (tests) takes this file too. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}
export type WasmImports = Record<string, Record<string, unknown>>;

const isMemory = (value: unknown): value is WasmMemory =>
  typeof value === "object" && value !== null && "buffer" in value && "grow" in value;

/** ORT's C enums: `ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT`, and data location "cpu" (wasm-common.ts). */
const FLOAT = 1;
const CPU = 1;

/**
 * The instance's C functions by their 1.30.0 names and its memory (this build imports it: the threaded build
 * shares one between workers); undefined when the instance is not that build.
 */
export function ortWasmExports(instance: WasmInstance, imports: WasmImports | undefined): OrtWasmExports | undefined {
  const exports = instance.exports;
  const fns: Record<string, (...args: number[]) => number> = {};
  for (const [name, exported] of Object.entries(ORT_EXPORT_NAMES)) {
    const fn = exports[exported];
    if (typeof fn !== "function") return undefined;
    fns[name] = fn as (...args: number[]) => number;
  }
  const candidates = [...Object.values(exports), ...Object.values(imports ?? {}).flatMap((m) => Object.values(m))];
  const memory = candidates.find(isMemory);
  if (!memory) return undefined;
  return { ...(fns as unknown as Omit<OrtWasmExports, "memory">), memory };
}

/** One batch size's preallocated buffers and OrtValues, and the pointer arrays OrtRun reads them from. */
interface Slot {
  input: number;
  output: number;
  inputTensor: number;
  /** `OrtValue*[1]` holding the input tensor. */
  inputs: number;
  /** `OrtValue*[1]` holding the preallocated output tensor (OrtRun writes into it). */
  outputs: number;
  outputTensor: number;
}

export interface DirectRunOptions {
  /** The session's handle (`OrtSession*`), as onnxruntime-web's session handler keeps it (`sessionId`). */
  session: number;
  inputName: string;
  outputName: string;
  /** Features per row. */
  width: number;
  /** Output values per row. */
  classes: number;
}

/**
 * A session's runs through the C API: `run(rows, batch)` returns the `[batch, classes]` float32 output, a copy
 * the caller owns. Synchronous, so runs cannot overlap (the C call returns before anything else runs).
 */
export class DirectRunner {
  readonly #wasm: OrtWasmExports;
  readonly #options: DirectRunOptions;
  readonly #inputNames: number;
  readonly #outputNames: number;
  /** `int code; char* message` for OrtGetLastError. */
  readonly #errorScratch: number;
  readonly #slots: Slot[] = [];
  /** Everything malloc'd for names and scratch, freed by `dispose`. */
  readonly #allocated: number[] = [];
  #heap: Float32Array;
  #pointers: Uint32Array;

  constructor(wasm: OrtWasmExports, options: DirectRunOptions) {
    this.#wasm = wasm;
    this.#options = options;
    this.#inputNames = this.#pointerTo(this.#string(options.inputName));
    this.#outputNames = this.#pointerTo(this.#string(options.outputName));
    this.#errorScratch = this.#malloc(8);
    this.#heap = new Float32Array(wasm.memory.buffer);
    this.#pointers = new Uint32Array(wasm.memory.buffer);
  }

  run(data: Float32Array, batch: number): Float32Array {
    if (this.#disposed) throw new Error("this session was released");
    const { width, classes, session } = this.#options;
    if (data.length !== batch * width) throw new Error(`expected ${batch}x${width} values, got ${data.length}`);
    const slot = this.#slots[batch] ?? this.#slot(batch);
    this.#view().set(data, slot.input >>> 2);
    const code = this.#wasm.run(session, this.#inputNames, slot.inputs, 1, this.#outputNames, 1, slot.outputs, 0);
    if (code !== 0) throw this.#lastError(`OrtRun failed (${code})`);
    const heap = this.#view();
    // The same buffer as `heap`: a run that grew the memory was caught by `#view`.
    if (this.#pointers[slot.outputs >>> 2] !== slot.outputTensor) {
      throw new Error("OrtRun replaced the preallocated output tensor");
    }
    const start = slot.output >>> 2;
    return heap.slice(start, start + batch * classes);
  }

  /**
   * The heap as float32 (and as the uint32 of wasm32 pointers), again after the memory grew (growing detaches
   * the old buffer); kept between runs rather than a view made per run.
   */
  #view(): Float32Array {
    if (this.#heap.buffer !== this.#wasm.memory.buffer) {
      this.#heap = new Float32Array(this.#wasm.memory.buffer);
      this.#pointers = new Uint32Array(this.#wasm.memory.buffer);
    }
    return this.#heap;
  }

  #slot(batch: number): Slot {
    const { width, classes } = this.#options;
    const input = this.#malloc(batch * width * 4);
    const output = this.#malloc(batch * classes * 4);
    const inputTensor = this.#tensor(input, batch, width);
    const outputTensor = this.#tensor(output, batch, classes);
    const slot = {
      input,
      output,
      inputTensor,
      inputs: this.#pointerTo(inputTensor),
      outputs: this.#pointerTo(outputTensor),
      outputTensor,
    };
    this.#slots[batch] = slot;
    return slot;
  }

  #tensor(data: number, rows: number, columns: number): number {
    const dims = this.#wasm.malloc(8); // not kept: freed below
    if (dims === 0) throw new Error("wasm malloc of 8 bytes failed");
    new Int32Array(this.#wasm.memory.buffer, dims, 2).set([rows, columns]);
    const tensor = this.#wasm.createTensor(FLOAT, data, rows * columns * 4, dims, 2, CPU);
    this.#wasm.free(dims); // OrtCreateTensor copies the shape
    if (tensor === 0) throw this.#lastError("OrtCreateTensor failed");
    return tensor;
  }

  #malloc(bytes: number): number {
    const pointer = this.#wasm.malloc(bytes);
    if (pointer === 0) throw new Error(`wasm malloc of ${bytes} bytes failed`);
    this.#allocated.push(pointer);
    return pointer;
  }

  /**
   * Release every OrtValue and free every buffer this runner made (before its session is released, when the
   * isolate evicts the session to make room for another): nothing of it stays in the wasm heap. Runs after
   * it throw.
   */
  dispose(): void {
    for (const slot of this.#slots) {
      if (!slot) continue;
      this.#wasm.releaseTensor(slot.inputTensor);
      this.#wasm.releaseTensor(slot.outputTensor);
    }
    this.#slots.length = 0;
    for (const pointer of this.#allocated.splice(0)) this.#wasm.free(pointer);
    this.#disposed = true;
  }

  #disposed = false;

  #string(text: string): number {
    const bytes = new TextEncoder().encode(text);
    const pointer = this.#malloc(bytes.length + 1);
    const heap = new Uint8Array(this.#wasm.memory.buffer, pointer, bytes.length + 1);
    heap.set(bytes);
    heap[bytes.length] = 0;
    return pointer;
  }

  /** A one-element array of pointers holding `value` (wasm32: 4 bytes). */
  #pointerTo(value: number): number {
    const pointer = this.#malloc(4);
    new Uint32Array(this.#wasm.memory.buffer, pointer, 1)[0] = value;
    return pointer;
  }

  #lastError(what: string): Error {
    this.#wasm.getLastError(this.#errorScratch, this.#errorScratch + 4);
    const [code, message] = new Uint32Array(this.#wasm.memory.buffer, this.#errorScratch, 2);
    let text = "";
    if (message) {
      const heap = new Uint8Array(this.#wasm.memory.buffer);
      const end = heap.indexOf(0, message);
      text = new TextDecoder().decode(heap.subarray(message, end));
    }
    return new Error(`${what}: ORT error ${code}: ${text}`);
  }
}
