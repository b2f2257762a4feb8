import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ORT_EXPORT_NAMES } from "../../edge/inference/ort-export-names.ts";

// The glue of the installed onnxruntime-web, as the Worker's bundle imports it (`onnxruntime-web/wasm`'s "import"
// condition), binds each C function to an export of the wasm file (`_OrtRun=s.sb`; the object's name varies).
const root = join(dirname(fileURLToPath(import.meta.url)), "../../node_modules/onnxruntime-web");
const exportsMap = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports["./wasm"].import.default;
const glue = readFileSync(join(root, exportsMap), "utf8");
const C_NAMES = {
  malloc: "_malloc",
  free: "_free",
  createTensor: "_OrtCreateTensor",
  run: "_OrtRun",
  getLastError: "_OrtGetLastError",
  releaseTensor: "_OrtReleaseTensor",
};

describe("ORT_EXPORT_NAMES", () => {
  it("names the exports that the installed onnxruntime-web's glue binds each C function to", () => {
    for (const [key, cName] of Object.entries(C_NAMES)) {
      const bound = new RegExp(`\\b${cName}=\\w+\\.(\\w+)[;,]`).exec(glue)?.[1];
      expect(bound, cName).toBe(ORT_EXPORT_NAMES[key as keyof typeof ORT_EXPORT_NAMES]);
    }
  });
});
