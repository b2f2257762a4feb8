import { readFile, writeFile } from "node:fs/promises";
import { defineCommand } from "../../cli/command.ts";
import { RefusedError } from "../../cli/errors.ts";
import { inspectCandidate } from "../onnx/load.ts";
import { decodeModel, encodeModel } from "../onnx/proto.ts";
import { QuantizeError, quantizeWeights } from "./graph.ts";

const DESCRIPTION = `Weight-only int8 for the edge: the FP32 weights of MatMul and Gemm nodes become int8, per output channel,
symmetric, each behind a DequantizeLinear node; everything else is unchanged. Prints the tensors and the
size before and after. (import --quantize does the same and also measures label agreement.)`;

export const quantizeCommand = defineCommand({
  name: "quantize",
  summary: "int8 MatMul/Gemm weights (per output channel, DequantizeLinear) of one ONNX file",
  usage: "npm run model -- quantize --in FILE.onnx --out FILE.onnx",
  description: DESCRIPTION,
  flags: {
    in: { type: "string", placeholder: "FILE.onnx", required: true, help: "the FP32 model" },
    out: { type: "string", placeholder: "FILE.onnx", required: true, help: "where the int8 model goes" },
  },
  async run(values, _args, out) {
    const bytes = new Uint8Array(
      await readFile(values.in).catch((err: Error) => {
        throw new RefusedError(`--in: cannot read ${values.in} (${err.message})`);
      }),
    );
    let result: ReturnType<typeof quantizeWeights>;
    try {
      result = quantizeWeights(decodeModel(bytes));
    } catch (err) {
      if (err instanceof QuantizeError || (err as Error).message.startsWith("not an ONNX model")) {
        throw new RefusedError(`--in ${values.in}: ${(err as Error).message}`);
      }
      throw err;
    }
    const quantized = encodeModel(result.model);
    // The quantized graph must still be a servable classifier.
    inspectCandidate(quantized, `--out ${values.out}`);
    await writeFile(values.out, quantized);
    for (const t of result.tensors) out.log(`  ${t.name} [${t.dims.join(", ")}] per-channel axis ${t.axis}`);
    out.log(
      `${values.in}: ${bytes.byteLength} bytes -> ${values.out}: ${quantized.byteLength} bytes (${(bytes.byteLength / quantized.byteLength).toFixed(1)}x smaller), ${result.tensors.length} tensors`,
    );
    return 0;
  },
});
