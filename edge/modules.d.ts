// Module types for the wrangler rules in wrangler.toml: `CompiledWasm` (**/*.wasm) and `Data` (**/*.onnx).
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}

declare module "*.onnx" {
  const bytes: ArrayBuffer;
  export default bytes;
}

// The model repository as the Worker bundles it: generated at build time by tools/edge-bundle/edge-models.ts
// (the `[alias]` of the wrangler config build-edge.ts writes points this specifier at the generated file).
declare module "edgecascade-models" {
  const models: {
    /** A logical model's config.json (the full model's). */
    config: unknown;
    /** Its edge variant: config.json and the `.onnx` of the served version. */
    edge: { config: unknown; bytes: ArrayBuffer } | undefined;
    /** Held-out rows for the demo page, as JSON text of `{input: number[], label: number}[]`. */
    samples: string;
  }[];
  export default models;
}

// LOCAL_PLATFORM=memory's stand-ins: edge/local/platform.ts in a local build, none (edge/local-platform.ts) in a
// deployed one (the `[alias]` build-edge.ts writes).
declare module "edgecascade-local-platform" {
  export const localPlatform: import("./local-platform.ts").LocalPlatform | undefined;
}

// Vite's `?raw` import, for unit tests (run by vitest in Node) that read docs the Worker never bundles.
declare module "*.md?raw" {
  const text: string;
  export default text;
}
