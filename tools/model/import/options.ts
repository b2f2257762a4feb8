import { DEMO_INPUTS } from "../../../protocol/model-config.ts";
import { UsageError } from "../../cli/errors.ts";
import { type FlagTable, type FlagValues, parseFlags } from "../../cli/flags.ts";
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
  /**
   * Agreement with the full model the edge's answers must reach, proven on the calibration rows at `confidence`
   * (Clopper–Pearson lower bound) and met on the held-out rows. Default 0.995.
   */
  agreement: number;
  /** Confidence of that proof. Default 0.95. */
  confidence: number;
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

/** The flags of `import`, for the parser and `--help`. */
export const IMPORT_FLAGS = {
  name: {
    type: "string",
    placeholder: "NAME",
    required: true,
    help: "model name clients will call (letters, digits, '.', '_', '-'; not ending in -edge)",
  },
  full: {
    type: "string",
    placeholder: "FILE.onnx",
    required: true,
    help: "full model for the regional pools: one FP32 input [-1, N], probabilities [-1, C]",
  },
  edge: { type: "string", placeholder: "FILE.onnx", help: "edge variant for the Worker (same N and C)" },
  quantize: { type: "boolean", help: "make the edge variant from the full model: int8 MatMul/Gemm weights" },
  "edge-trees": {
    type: "string",
    placeholder: "K",
    help:
      "make the edge variant from a tree ensemble's first K trees (boosted: base values and\n" +
      "post-transform kept; forest: votes rescaled to K trees)\n" +
      "(none of the three: no edge variant; the edge forwards every request)",
  },
  softmax: { type: "boolean", help: "the model ends in logits or margins: append a Softmax (stated in config.json)" },
  data: {
    type: "string",
    placeholder: "FILE.csv",
    required: true,
    help: "N feature columns, then the label (class index 0..C-1, or a name from --labels);\na header line is optional",
  },
  labels: {
    type: "string",
    placeholder: "a,b,...",
    defaultText: "the model's, else the existing config's, else 0..C-1",
    help: "class names in the model's column order, C of them; refused when they contradict\nthe names the model carries",
  },
  agreement: {
    type: "string",
    placeholder: "X",
    defaultText: "0.995",
    help:
      "agreement with the full model the edge must reach where it answers: proven on the\n" +
      "calibration rows at --confidence (Clopper–Pearson lower bound) and met on the held-out\n" +
      "rows. Proving 0.995 takes at least 598 calibration rows the edge answers, 0.99 299,\n" +
      "0.98 149, 0.95 59 (95%, none disagreeing)",
  },
  confidence: {
    type: "string",
    placeholder: "X",
    defaultText: "0.95",
    help: "confidence with which the calibration rows must prove --agreement",
  },
  "heldout-fraction": {
    type: "string",
    placeholder: "X",
    defaultText: "0.5",
    help: "share of rows held out for the figures and the fixture",
  },
  seed: { type: "string", placeholder: "N", defaultText: "0", help: "seed of the stratified split" },
  models: { type: "string", placeholder: "DIR", defaultText: "this repository's models/", help: "model repository" },
  description: { type: "string", placeholder: "TEXT", help: "the full model's description in config.json" },
  source: { type: "string", placeholder: "TEXT", help: "where the data comes from (credited in config.json)" },
  demo: {
    type: "string",
    choices: DEMO_INPUTS,
    defaultText: "numbers: a form",
    help: "how the demo page collects a row",
  },
  "signing-key": {
    type: "string",
    placeholder: "FILE",
    defaultText: "$MODEL_SIGNING_KEY; unset: the files are not signed",
    help: "sign each written file with this Ed25519 private key (make a key with keygen)",
  },
} as const satisfies FlagTable;

export const IMPORT_USAGE =
  "npm run model -- import --name NAME --full FILE.onnx [--edge FILE.onnx | --quantize] --data FILE.csv [options]";

export const IMPORT_DESCRIPTION = `Validates the ONNX files, splits the data into calibration and held-out rows, calibrates the edge
variant's confidence threshold, measures accuracy, edge share and cascade accuracy on the held-out rows,
and writes models/NAME/ and models/NAME-edge/ with the held-out fixture. An existing NAME gets a new
version; the served version does not change.`;

function fraction(flag: string, raw: string | undefined, fallback: number, inclusiveOne: boolean): number {
  if (raw === undefined) return fallback;
  const x = Number(raw);
  if (!(Number.isFinite(x) && x > 0 && (inclusiveOne ? x <= 1 : x < 1))) {
    throw new UsageError(`--${flag} must be a number in (0, 1${inclusiveOne ? "]" : ")"}, got "${raw}"`);
  }
  return x;
}

/** Options of `import` from its command line, checked once; the error names the flag. */
export function parseImportOptions(argv: readonly string[]): ImportOptions {
  return importOptions(parseFlags(IMPORT_FLAGS, argv).values);
}

/** The parsed flags of `import` checked together; the error names the flag. */
export function importOptions(values: FlagValues<typeof IMPORT_FLAGS>): ImportOptions {
  const text = (flag: Exclude<keyof typeof IMPORT_FLAGS, "quantize" | "softmax">) => values[flag] || undefined;
  const name = values.name;
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
  const demo = values.demo;
  return {
    name,
    full: values.full,
    edge: edgeFile
      ? { file: edgeFile }
      : values.quantize
        ? { quantize: true }
        : treesRaw
          ? { trees: Number(treesRaw) }
          : undefined,
    softmax: values.softmax === true,
    data: values.data,
    ...(labels ? { labels } : {}),
    // 1 itself: no number of rows proves it.
    agreement: fraction("agreement", text("agreement"), 0.995, false),
    confidence: fraction("confidence", text("confidence"), 0.95, false),
    heldoutFraction: fraction("heldout-fraction", text("heldout-fraction"), 0.5, false),
    seed: seedRaw === undefined ? 0 : Number(seedRaw),
    modelsDir: text("models") ?? REPO_MODELS,
    ...(text("description") ? { description: text("description") } : {}),
    ...(text("source") ? { source: text("source") } : {}),
    ...(demo ? { demo } : {}),
    ...(text("signing-key") ? { signingKey: text("signing-key") } : {}),
  };
}
