import { type ModelConfig, parseModelConfig } from "../../../protocol/model-config.ts";
import type { ModelFileSignature, SignedFile } from "../../../protocol/model-signature.ts";
import type { CascadeFigures } from "../calibrate.ts";
import type { Conversion } from "../onnx/convert.ts";

/** A config.json as read from disk: what this code does not know about stays as it was. */
export type RawConfig = Record<string, unknown>;

/** A model file as written into a version directory. */
export interface FileEntry {
  file: string;
  sha256: string;
  bytes: number;
}

export interface Tensors {
  inputName: string;
  width: number;
  outputName: string;
  classes: number;
  /** The batch the file's graph was exported with, when it is fixed (served in runs of that many rows). */
  fixedBatch?: number;
}

export interface VariantFacts {
  file: FileEntry;
  /** What was changed in the file as exported to serve it (`tools/model/onnx/convert.ts`). */
  conversions?: Conversion[];
  tensors: Tensors;
  weights: "fp32" | "int8";
  accuracy: { validation: number; test: number };
}

export interface EdgeFacts extends VariantFacts {
  threshold: number;
  agreementTarget: number;
  /**
   * What the calibration rows prove at the threshold: the agreement's Clopper–Pearson lower bound at `confidence`
   * (at least the target), on `rows` answered rows with `disagreements`.
   */
  proof: { confidence: number; provenAgreement: number; rows: number; disagreements: number };
  figures: { validation: CascadeFigures; test: CascadeFigures };
  /** Set when the edge variant was cut from the full tree ensemble by `--edge-trees`. */
  trees?: { kept: number; of: number; kind: "boosted" | "forest"; postTransform: string };
  /** Set when the edge variant was made from the full model by `--quantize`. */
  quantization?: { tensors: number; bytesBefore: number; labelAgreement: number };
}

export interface ImportFacts {
  name: string;
  labels: string[];
  features?: string[];
  demo?: "drawing-8x8" | "numbers";
  description?: string;
  /** Where the data set comes from, credited in the configs. */
  source?: string;
  /** How the data was split, e.g. "stratified, seed 0: 360 calibration / 360 held-out of digits.csv". */
  split: string;
  full: VariantFacts;
  edge?: EdgeFacts;
}

/** What is on disk for the name already: configs (raw) and the version directories present. */
export interface Existing {
  full?: RawConfig;
  edge?: RawConfig;
  fullDirs: string[];
  edgeDirs: string[];
}

export interface ImportPlan {
  fullVersion: string;
  edgeVersion?: string;
  fullConfig: RawConfig;
  edgeConfig?: RawConfig;
  /** True when the name was new: the imported version serves. Otherwise the served version is unchanged. */
  serves: boolean;
}

/** The import does not fit what the repository holds for this name; the message says what to do. */
export class ImportConflict extends Error {}

/** Every model name ends up a directory name and a URL path segment; `-edge` names the edge variant. */
export const MODEL_NAME = /^[A-Za-z0-9][\w.-]{0,62}$/;
export const EDGE_SUFFIX = "-edge";

function nextVersion(config: RawConfig | undefined, dirs: readonly string[]): string {
  const versions = Object.keys((config?.versions as Record<string, unknown> | undefined) ?? {});
  const numbers = [...versions, ...dirs].filter((v) => /^\d+$/.test(v)).map(Number);
  return String(numbers.length === 0 ? 1 : Math.max(...numbers) + 1);
}

function tensorsOf(t: Tensors) {
  return {
    inputs: [{ name: t.inputName, datatype: "FP32", shape: [-1, t.width] }],
    outputs: [{ name: t.outputName, datatype: "FP32", shape: [-1, t.classes] }],
  };
}

/** An existing config must describe the same tensors and labels: they are shared by all its versions. */
function checkCompatible(raw: RawConfig, source: string, facts: ImportFacts, tensors: Tensors): ModelConfig {
  const config = parseModelConfig(raw, source);
  const input = config.inputs[0]!;
  const output = config.outputs[0]!;
  const mismatch = (what: string, theirs: unknown, ours: unknown) =>
    new ImportConflict(
      `${source} has ${what} ${JSON.stringify(theirs)} and the new files have ${JSON.stringify(ours)}; ` +
        "every version of a model shares its tensors and labels, so import this one under a new --name",
    );
  if (input.name !== tensors.inputName || input.shape[1] !== tensors.width) {
    throw mismatch("input", [input.name, input.shape[1]], [tensors.inputName, tensors.width]);
  }
  if (output.name !== tensors.outputName || output.shape[1] !== tensors.classes) {
    throw mismatch("output", [output.name, output.shape[1]], [tensors.outputName, tensors.classes]);
  }
  if (config.labels.join("\u0000") !== facts.labels.join("\u0000"))
    throw mismatch("labels", config.labels, facts.labels);
  return config;
}

/** Signs a model file as it will be listed; import passes one when given a private key. */
export type SignFile = (file: SignedFile) => ModelFileSignature;

/** A version's entry: the file, its signature next to its sha256 (when signing), weights and accuracy. */
function versionEntry(model: string, version: string, v: VariantFacts, sign?: SignFile): Record<string, unknown> {
  const signature = sign?.({ model, version, sha256: v.file.sha256, bytes: v.file.bytes });
  return {
    ...v.file,
    ...(signature ? { signature } : {}),
    weights: v.weights,
    accuracy: v.accuracy,
    ...(v.conversions ? { conversions: v.conversions } : {}),
    ...(v.tensors.fixedBatch === undefined ? {} : { fixedBatch: v.tensors.fixedBatch }),
  };
}

/**
 * The configs an import writes. A new name gets version 1 of its full model (and of its edge variant), which
 * serves. An existing name gets the next free version of each, added to `versions`; `version` (the served
 * one) stays, so that nothing changes for clients until the new version is loaded (see docs/model-tool.md).
 * Unknown fields of existing configs and versions are kept. With `sign`, each file's entry carries its
 * Ed25519 signature next to its sha256.
 */
export function planImport(facts: ImportFacts, existing: Existing, sign?: SignFile): ImportPlan {
  const { name } = facts;
  const edgeName = `${name}${EDGE_SUFFIX}`;
  const fullVersion = nextVersion(existing.full, existing.fullDirs);
  const serves = existing.full === undefined;
  if (existing.full) checkCompatible(existing.full, `${name}/config.json`, facts, facts.full.tensors);
  const dataset = facts.source
    ? { dataset: { source: facts.source, split: facts.split } }
    : { dataset: { split: facts.split } };
  const common = {
    labels: facts.labels,
    ...(facts.features ? { features: facts.features } : {}),
    ...(facts.demo ? { demo: facts.demo } : {}),
  };

  const fullEntry = versionEntry(name, fullVersion, facts.full, sign);
  const fullConfig: RawConfig = existing.full
    ? {
        ...existing.full,
        versions: { ...(existing.full.versions as RawConfig), [fullVersion]: fullEntry },
      }
    : {
        name,
        platform: "onnxruntime_onnx",
        description: facts.description ?? `${name}: full model, for the regional pools`,
        ...tensorsOf(facts.full.tensors),
        ...common,
        maxBatchSize: 256,
        version: fullVersion,
        versions: { [fullVersion]: fullEntry },
        ...dataset,
      };
  if (!facts.edge) return { fullVersion, fullConfig, serves };

  const { edge } = facts;
  if (existing.edge) checkCompatible(existing.edge, `${edgeName}/config.json`, facts, edge.tensors);
  const edgeVersion = nextVersion(existing.edge, existing.edgeDirs);
  const edgeEntry = {
    ...versionEntry(edgeName, edgeVersion, edge, sign),
    cascade: {
      against: { model: name, version: fullVersion },
      threshold: edge.threshold,
      agreementTarget: edge.agreementTarget,
      confidence: edge.proof.confidence,
      provenAgreement: edge.proof.provenAgreement,
      calibratedOn: "validation",
      validation: edge.figures.validation,
      test: edge.figures.test,
    },
    ...(edge.trees ? { trees: { from: { model: name, version: fullVersion }, ...edge.trees } } : {}),
    ...(edge.quantization
      ? {
          quantization: {
            from: { model: name, version: fullVersion },
            method: "weight-only int8, per output channel, symmetric (DequantizeLinear)",
            ...edge.quantization,
          },
        }
      : {}),
  };
  const edgeConfig: RawConfig = existing.edge
    ? { ...existing.edge, versions: { ...(existing.edge.versions as RawConfig), [edgeVersion]: edgeEntry } }
    : {
        name: edgeName,
        platform: "onnxruntime_onnx",
        description: `${name}: edge variant, run by the Worker`,
        standsFor: name,
        ...tensorsOf(edge.tensors),
        ...common,
        maxBatchSize: 64,
        // A new edge variant of an existing model serves at once: the edge has had none, so nothing changes
        // for the answers the regions give; it stands in for whichever version they serve.
        version: edgeVersion,
        versions: { [edgeVersion]: edgeEntry },
        ...dataset,
      };
  // Both configs must parse as the servers will read them.
  parseModelConfig(fullConfig, `${name}/config.json`);
  parseModelConfig(edgeConfig, `${edgeName}/config.json`);
  return { fullVersion, edgeVersion, fullConfig, edgeConfig, serves };
}
