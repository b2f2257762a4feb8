import { parseArgs } from "node:util";
import { DEMO_INPUTS } from "../../../protocol/model-config.ts";
import { UsageError } from "../cli.ts";
import { REPO_MODELS } from "../repository-flags.ts";
import { EDGE_SUFFIX, MODEL_NAME } from "./configs.ts";

/** `npm run model -- import ...`, validated. */
export interface ImportOptions {
  name: string;
  /** The full model (`.onnx`), served by the regional pools. */
  full: string;
  /**
   * The edge variant: from a file, quantized from the full model, or the full tree ensemble's first K trees;
   * none: the model is always forwarded.
   */
  edge: { file: string } | { quantize: true } | { trees: number } | undefined;
  /** Append a Softmax to the full model's (and `--edge` file's) logits or margins. Default false. */
  softmax: boolean;
  /** CSV: features, then the label (class index or name) in the last column; header optional. */
  data: string;
  /** Class names; default: the existing config's, else "0".."C-1". */
  labels?: string[];
  /** Agreement with the full model the edge's answers must reach on the calibration rows. Default 0.995. */
  agreement: number;
  /** Share of the data held out for the figures and the fixture. Default 0.5. */
  heldoutFraction: number;
  /** Seed of the stratified split. Default 0. */
  seed: number;
  /** Model repository. Default: the repository's `models/`. */
  modelsDir: string;
  description?: string;
  source?: string;
  demo?: (typeof DEMO_INPUTS)[number];
  /** Private key file signing the written files; default: MODEL_SIGNING_KEY, else no signatures. */
  signingKey?: string;
}

export const IMPORT_USAGE = `Usage: npm run model -- import --name NAME --full FILE.onnx [--edge FILE.onnx | --quantize]
                              --data FILE.csv [options]

Validates the ONNX files, splits the data into calibration and held-out rows, calibrates the edge
variant's confidence threshold, measures accuracy, edge share and cascade accuracy on the held-out rows,
and writes models/NAME/ and models/NAME-edge/ with the held-out fixture. An existing NAME gets a new
version; the served version does not change.

  --name NAME             model name clients will call (letters, digits, '.', '_', '-'; not ending in -edge)
  --full FILE.onnx        full model for the regional pools: one FP32 input [-1, N], probabilities [-1, C]
  --edge FILE.onnx        edge variant for the Worker (same N and C)
  --quantize              make the edge variant from the full model: int8 MatMul/Gemm weights
  --edge-trees K          make the edge variant from a tree ensemble's first K trees (boosted: base values and
                          post-transform kept; forest: votes rescaled to K trees)
                          (none of the three: no edge variant; the edge forwards every request)
  --softmax               the model ends in logits or margins: append a Softmax (stated in config.json)
  --data FILE.csv         N feature columns, then the label (class index 0..C-1, or a name from --labels);
                          a header line is optional
  --labels a,b,...        class names in the model's column order, C of them; refused when they contradict
                          the names the model carries (default: the model's, else the existing config's, else 0..C-1)
  --agreement X           agreement with the full model the edge must reach where it answers (default 0.995)
  --heldout-fraction X    share of rows held out for the figures and the fixture (default 0.5)
  --seed N                seed of the stratified split (default 0)
  --models DIR            model repository (default: this repository's models/)
  --description TEXT      the full model's description in config.json
  --source TEXT           where the data comes from (credited in config.json)
  --demo drawing-8x8|numbers  how the demo page collects a row (default numbers: a form)
  --signing-key FILE      sign each written file with this Ed25519 private key (default: $MODEL_SIGNING_KEY;
                          unset: the files are not signed; make a key with keygen)`;

function fraction(flag: string, raw: string | undefined, fallback: number, inclusiveOne: boolean): number {
  if (raw === undefined) return fallback;
  const x = Number(raw);
  if (!(Number.isFinite(x) && x > 0 && (inclusiveOne ? x <= 1 : x < 1))) {
    throw new UsageError(`--${flag} must be a number in (0, 1${inclusiveOne ? "]" : ")"}, got "${raw}"`);
  }
  return x;
}

/** Options of `import`, checked once; the error names the flag. */
export function parseImportOptions(argv: readonly string[]): ImportOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        name: { type: "string" },
        full: { type: "string" },
        edge: { type: "string" },
        quantize: { type: "boolean" },
        "edge-trees": { type: "string" },
        softmax: { type: "boolean" },
        data: { type: "string" },
        labels: { type: "string" },
        agreement: { type: "string" },
        "heldout-fraction": { type: "string" },
        seed: { type: "string" },
        models: { type: "string" },
        description: { type: "string" },
        source: { type: "string" },
        demo: { type: "string" },
        "signing-key": { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const text = (flag: string) => (typeof values[flag] === "string" ? (values[flag] as string) : undefined);
  const required = (flag: string) => {
    const value = text(flag);
    if (!value) throw new UsageError(`--${flag} is required`);
    return value;
  };
  const name = required("name");
  if (!MODEL_NAME.test(name) || name.endsWith(EDGE_SUFFIX)) {
    throw new UsageError(
      `--name "${name}" must be 1-63 letters, digits, '.', '_' or '-', start with a letter or digit, and not end in "${EDGE_SUFFIX}" (that names the edge variant)`,
    );
  }
  const edgeFile = text("edge");
  const treesRaw = text("edge-trees");
  if ([edgeFile, values.quantize, treesRaw].filter(Boolean).length > 1) {
    throw new UsageError("--edge, --quantize and --edge-trees exclude each other: pass one");
  }
  if (treesRaw !== undefined && !/^[1-9]\d{0,5}$/.test(treesRaw)) {
    throw new UsageError(`--edge-trees must be a positive integer (trees to keep), got "${treesRaw}"`);
  }
  const labels = text("labels")
    ?.split(",")
    .map((l) => l.trim());
  if (labels && (labels.some((l) => l === "") || new Set(labels).size !== labels.length)) {
    throw new UsageError(`--labels must be distinct, non-empty names separated by commas, got "${text("labels")}"`);
  }
  const seedRaw = text("seed");
  if (seedRaw !== undefined && !/^\d{1,9}$/.test(seedRaw)) {
    throw new UsageError(`--seed must be a non-negative integer, got "${seedRaw}"`);
  }
  const demo = text("demo");
  if (demo !== undefined && !(DEMO_INPUTS as readonly string[]).includes(demo)) {
    throw new UsageError(`--demo must be one of ${DEMO_INPUTS.join(", ")}, got "${demo}"`);
  }
  return {
    name,
    full: required("full"),
    edge: edgeFile
      ? { file: edgeFile }
      : values.quantize
        ? { quantize: true }
        : treesRaw
          ? { trees: Number(treesRaw) }
          : undefined,
    softmax: values.softmax === true,
    data: required("data"),
    ...(labels ? { labels } : {}),
    agreement: fraction("agreement", text("agreement"), 0.995, true),
    heldoutFraction: fraction("heldout-fraction", text("heldout-fraction"), 0.5, false),
    seed: seedRaw === undefined ? 0 : Number(seedRaw),
    modelsDir: text("models") ?? REPO_MODELS,
    ...(text("description") ? { description: text("description") } : {}),
    ...(text("source") ? { source: text("source") } : {}),
    ...(demo ? { demo: demo as ImportOptions["demo"] } : {}),
    ...(text("signing-key") ? { signingKey: text("signing-key") } : {}),
  };
}
