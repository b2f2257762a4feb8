// Module types for the wrangler rules in wrangler.toml: `CompiledWasm` (**/*.wasm) and `Data` (**/*.onnx).
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}

declare module "*.onnx" {
  const bytes: ArrayBuffer;
  export default bytes;
}
