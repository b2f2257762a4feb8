import * as v from "valibot";
import { parseOrDescribe } from "./schema-message.ts";
import { DATATYPES, type ModelMetadata } from "./types.ts";

const tensorSpec = v.strictObject({
  name: v.pipe(v.string(), v.nonEmpty("must not be empty")),
  datatype: v.picklist(DATATYPES),
  shape: v.array(v.pipe(v.number(), v.integer("must hold integers"), v.minValue(-1, "must be -1 or more"))),
});

const calibration = v.object({
  against: v.object({ model: v.string(), version: v.string() }),
  threshold: v.pipe(v.number(), v.minValue(0, "must be in [0, 1]"), v.maxValue(1, "must be in [0, 1]")),
  agreementTarget: v.number(),
  calibratedOn: v.string(),
  validation: v.optional(v.record(v.string(), v.number())),
  test: v.object({ edgeShare: v.number(), agreement: v.number(), cascadeAccuracy: v.number() }),
});

/** How an edge variant was made from its full model by `npm run model -- import --quantize`. */
const quantization = v.object({
  from: v.object({ model: v.string(), version: v.string() }),
  method: v.string(),
  tensors: v.number(),
  bytesBefore: v.number(),
  labelAgreement: v.number(),
});

/** An Ed25519 signature of the version's file (protocol/model-signature.ts), next to its sha256. */
const fileSignature = v.object({
  key: v.pipe(v.string(), v.regex(/^[0-9a-f]{16}$/, "must be a key id: 16 lowercase hex digits")),
  ed25519: v.pipe(v.string(), v.regex(/^[A-Za-z0-9+/]{86}==$/, "must be base64 of 64 bytes")),
});

/**
 * The result `npm run model -- check` recorded for a version: for which file (its sha256), against which
 * served version, and whether every gate passed. A rollout starts only for a file with a passing record.
 */
/** What a version did on its held-out rows (protocol/heldout.ts, `HeldoutFigures`). */
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const heldoutFigures = v.object({
  rows: v.pipe(v.number(), v.integer(), v.minValue(1)),
  classCounts: v.array(count),
  edgeAnswered: v.optional(count),
  edgeAgreeing: v.optional(count),
});

const gatesRecord = v.object({
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits")),
  passed: v.boolean(),
  against: v.string(),
  checkedAt: v.string(),
});

// Objects are not strict: a version entry may carry more figures (the gates' measurements) than this code
// reads, and tools that rewrite config.json keep them.
const versionEntry = v.object({
  file: v.pipe(v.string(), v.regex(/^[\w.-]+$/, "must be a plain file name")),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits")),
  bytes: v.pipe(v.number(), v.integer(), v.minValue(1)),
  signature: v.optional(fileSignature),
  gates: v.optional(gatesRecord),
  weights: v.optional(v.picklist(["fp32", "int8"])),
  accuracy: v.object({ test: v.number(), validation: v.optional(v.number()) }),
  cascade: v.optional(calibration),
  quantization: v.optional(quantization),
  heldout: v.optional(heldoutFigures),
  /**
   * The file's batch dimension is fixed (an export without a dynamic batch): every run takes exactly this many
   * rows (protocol/fixed-batch.ts), as Triton serves a model with `max_batch_size: 0`.
   */
  fixedBatch: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

const positive = v.pipe(v.number(), v.minValue(0, "must be 0 or more"));
const share = v.pipe(v.number(), v.minValue(0, "must be in [0, 1]"), v.maxValue(1, "must be in [0, 1]"));

/**
 * Release budgets the gates (`npm run model -- check`) hold every new version to; each field is optional,
 * the defaults are in tools/model/check/budgets.ts and docs/model-tool.md.
 */
const budgets = v.strictObject({
  maxBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  p50Ms: v.optional(positive),
  p99Ms: v.optional(positive),
  webP50Ms: v.optional(positive),
  webP99Ms: v.optional(positive),
  accuracyTolerance: v.optional(share),
  minAgreement: v.optional(share),
  maxEnergyMj: v.optional(positive),
  wattsPerCore: v.optional(positive),
});

/** How the demo page collects a row: a drawing reduced to the UCI digits' 8x8 features, or (default) a form of numbers. */
export const DEMO_INPUTS = ["drawing-8x8", "numbers"] as const;

const modelConfig = v.object({
  name: v.pipe(v.string(), v.regex(/^[\w.-]+$/, "must be letters, digits, '.', '_' or '-'")),
  platform: v.literal("onnxruntime_onnx"),
  description: v.optional(v.string()),
  standsFor: v.optional(v.string()),
  inputs: v.pipe(v.array(tensorSpec), v.length(1, "must list exactly one input")),
  outputs: v.pipe(v.array(tensorSpec), v.length(1, "must list exactly one output")),
  labels: v.array(v.string()),
  /** Names of the input's features, in order (from the imported CSV's header); the demo's form shows them. */
  features: v.optional(v.array(v.string())),
  demo: v.optional(v.picklist(DEMO_INPUTS)),
  maxBatchSize: v.pipe(v.number(), v.integer(), v.minValue(1)),
  budgets: v.optional(budgets),
  version: v.string(),
  versions: v.record(v.pipe(v.string(), v.regex(/^\d+$/, "must be a positive integer")), versionEntry),
  dataset: v.optional(v.record(v.string(), v.string())),
});

/** `models/<name>/config.json`: tensors, labels, the served version and every version's checksum. */
export type ModelConfig = v.InferOutput<typeof modelConfig>;
export type ModelVersionEntry = v.InferOutput<typeof versionEntry>;
export type CascadeCalibration = v.InferOutput<typeof calibration>;
export type ModelBudgets = v.InferOutput<typeof budgets>;
export type GatesRecord = v.InferOutput<typeof gatesRecord>;

/** A model's inputs and outputs as the servers use them (its I/O, not its file's Ed25519 signature): one FP32 input `[N, width]`, one FP32 output `[N, classes]`. */
export interface ModelIo {
  name: string;
  inputName: string;
  width: number;
  outputName: string;
  classes: number;
  labels: string[];
  maxBatchSize: number;
  /** Rows every run of the version's graph takes, when its batch dimension is fixed; undefined: any number. */
  fixedBatch?: number;
}

/** Parse and check a config.json; the error names the file and the field. */
export function parseModelConfig(raw: unknown, source: string): ModelConfig {
  const parsed = parseOrDescribe(modelConfig, raw);
  if (!parsed.ok) throw new Error(`${source}: ${parsed.message}`);
  const config = parsed.value;
  const [input] = config.inputs;
  const [output] = config.outputs;
  for (const [role, t] of [
    ["input", input!],
    ["output", output!],
  ] as const) {
    if (t.datatype !== "FP32" || t.shape.length !== 2 || t.shape[0] !== -1 || !(t.shape[1]! > 0)) {
      throw new Error(`${source}: the ${role} must be FP32 with shape [-1, n]`);
    }
  }
  if (config.labels.length !== output!.shape[1]) {
    throw new Error(
      `${source}: "labels" has ${config.labels.length} entries; the output has ${output!.shape[1]} classes`,
    );
  }
  if (config.features && config.features.length !== input!.shape[1]) {
    throw new Error(
      `${source}: "features" has ${config.features.length} names; the input has ${input!.shape[1]} features`,
    );
  }
  for (const [version, entry] of Object.entries(config.versions)) {
    const figures = entry.heldout;
    if (!figures) continue;
    const counted = figures.classCounts.reduce((a, b) => a + b, 0);
    if (figures.classCounts.length !== config.labels.length || counted !== figures.rows) {
      throw new Error(
        `${source}: version ${version}'s "heldout.classCounts" must hold one count per class (${config.labels.length}) summing to "rows" (${figures.rows})`,
      );
    }
    if ((figures.edgeAgreeing ?? 0) > (figures.edgeAnswered ?? 0) || (figures.edgeAnswered ?? 0) > figures.rows) {
      throw new Error(`${source}: version ${version}'s "heldout" needs edgeAgreeing <= edgeAnswered <= rows`);
    }
  }
  if (!config.versions[config.version]) {
    throw new Error(`${source}: "version" ${config.version} is not listed in "versions"`);
  }
  return config;
}

/** The inputs and outputs the validators and sessions need. */
export function modelIoOf(config: ModelConfig, version = config.version): ModelIo {
  const input = config.inputs[0]!;
  const output = config.outputs[0]!;
  const fixedBatch = config.versions[version]?.fixedBatch;
  return {
    name: config.name,
    inputName: input.name,
    width: input.shape[1]!,
    outputName: output.name,
    classes: output.shape[1]!,
    labels: config.labels,
    maxBatchSize: config.maxBatchSize,
    ...(fixedBatch === undefined ? {} : { fixedBatch }),
  };
}

/** The cascade calibration of an edge model's version; throws if the config has none. */
export function calibrationOf(config: ModelConfig, version = config.version): CascadeCalibration {
  const cascade = config.versions[version]?.cascade;
  if (!cascade) throw new Error(`model ${config.name} version ${version} has no cascade calibration`);
  return cascade;
}

/** v2 model metadata of a config, under `name` (an edge variant is described as the model it stands for). */
export function describeModel(config: ModelConfig, versions: string[], name = config.name): ModelMetadata {
  return {
    name,
    versions,
    platform: config.platform,
    inputs: config.inputs.map((t) => ({ ...t, shape: [...t.shape] })),
    outputs: config.outputs.map((t) => ({ ...t, shape: [...t.shape] })),
    labels: [...config.labels],
    ...(config.features ? { features: [...config.features] } : {}),
  };
}
