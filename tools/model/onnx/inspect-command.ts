import { defineCommand } from "../../cli/command.ts";
import { checkProbabilities, openSession, readCandidate } from "./load.ts";

export const inspectCommand = defineCommand({
  name: "inspect",
  summary: "print what edgecascade would serve of an ONNX file (input, probabilities, labels, conversions), or why not",
  usage: "npm run model -- inspect FILE.onnx [--softmax]",
  description:
    "Reads, converts and checks the file as import does (external data inlined, ZipMap removed, FP64 cast,\n" +
    "with --softmax a Softmax appended), loads it in onnxruntime-node and runs one row of zeros through it:\n" +
    "what inspect accepts, import accepts (given data the model classifies).",
  flags: { softmax: { type: "boolean", help: "append a Softmax to the file's logits or margins" } },
  parse: { positionals: { min: 1, max: 1 } },
  async run({ softmax }, { positionals: [file] }, out) {
    const candidate = await readCandidate(file!, file!, { softmax });
    const { signature, bytes, conversions, labels } = candidate;
    const { input, probabilities, label } = signature;
    const classes = probabilities.classes ?? labels?.labels.length ?? 0;
    const session = await openSession(candidate, classes);
    try {
      const row = await session.run(new Float32Array(input.width), 1);
      checkProbabilities(row, row.length, file!);
    } finally {
      await session.release();
    }
    out.log(
      `${file}: ${bytes.byteLength} bytes as served, opset ${signature.opset}, weights ${signature.int8 ? "int8" : "fp32"}; loads in onnxruntime-node`,
    );
    out.log(`  input          "${input.name}" FP32 [${input.fixedBatch ?? -1}, ${input.width}]`);
    if (input.fixedBatch !== undefined) {
      out.log(
        `  fixed batch    ${input.fixedBatch}: served ${input.fixedBatch} row${input.fixedBatch === 1 ? "" : "s"} per run (as Triton serves max_batch_size 0); a dynamic batch runs a request's rows together`,
      );
    }
    out.log(`  probabilities  "${probabilities.name}" FP32 [-1, ${probabilities.classes ?? "?"}]`);
    if (label) out.log(`  labels         "${label.name}" (not served: the classes come from the probabilities)`);
    if (labels) out.log(`  classes        ${labels.labels.join(", ")} (${labels.source}), in column order`);
    for (const c of conversions) out.log(`  converted      ${c.detail}`);
    return 0;
  },
});
