import type { Subcommand } from "../cli.ts";
import { UsageError } from "../cli.ts";
import { readCandidate } from "./load.ts";

export const inspectCommand: Subcommand = {
  name: "inspect",
  summary: "print what edgecascade would serve of an ONNX file (input, probabilities, label output), or why not",
  usage:
    "Usage: npm run model -- inspect FILE.onnx\n\nChecks the file as import does and prints its serving signature.",
  async run(argv, out) {
    if (argv.length !== 1 || argv[0]!.startsWith("-")) throw new UsageError("expects one file");
    const { signature, bytes } = await readCandidate(argv[0]!, argv[0]!);
    const { input, probabilities, label } = signature;
    out.log(
      `${argv[0]}: ${bytes.byteLength} bytes, opset ${signature.opset}, weights ${signature.int8 ? "int8" : "fp32"}`,
    );
    out.log(`  input          "${input.name}" FP32 [-1, ${input.width}]`);
    out.log(`  probabilities  "${probabilities.name}" FP32 [-1, ${probabilities.classes ?? "?"}]`);
    if (label) out.log(`  labels         "${label.name}" (not served: the classes come from the probabilities)`);
    return 0;
  },
};
