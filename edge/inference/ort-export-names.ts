/**
 * Where each function is among the wasm instance's exports: emscripten minifies export names, so these are
 * those of onnxruntime-web 1.30.0's `ort-wasm-simd-threaded.wasm` (its glue assigns `_OrtRun = exports.sb`, ...).
 * `test/models/ort-web-exports.test.ts` reads them back from the glue that ships with the installed version.
 */
export const ORT_EXPORT_NAMES = {
  malloc: "wb",
  free: "vb",
  createTensor: "gb",
  run: "sb",
  getLastError: "Xa",
  releaseTensor: "ib",
} as const;
