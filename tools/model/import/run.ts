import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { HELDOUT_FILE, type HeldoutSet } from "../../../protocol/heldout.ts";
import { parseModelConfig } from "../../../protocol/model-config.ts";
import { RefusedError } from "../../cli/errors.ts";
import {
  accuracy,
  type CascadeFigures,
  calibrateThreshold,
  cascadeFigures,
  labelAgreement,
  type ProbabilityMatrix,
} from "../calibrate.ts";
import { readIfPresent, subdirectories, writeConfig } from "../config-file.ts";
import { DataError, type LabelledRows, parseLabelledCsv } from "../data/csv.ts";
import { stratifiedSplit } from "../data/split.ts";
import { versionFigures, withFigures } from "../figures/version-figures.ts";
import type { Conversion } from "../onnx/convert.ts";
import {
  type Candidate,
  checkProbabilities,
  inspectCandidate,
  openSession,
  readCandidate,
  runFp64Reference,
  runRows,
} from "../onnx/load.ts";
import { encodeModel } from "../onnx/proto.ts";
import { QuantizeError, quantizeWeights } from "../quantize/graph.ts";
import type { ModelSigner } from "../signing/keys.ts";
import { EdgeTreesError, edgeTrees } from "../trees/edge-trees.ts";
import {
  EDGE_SUFFIX,
  type EdgeFacts,
  type Existing,
  ImportConflict,
  type ImportFacts,
  type ImportPlan,
  planImport,
  type RawConfig,
  type VariantFacts,
} from "./configs.ts";
import { heldoutFixture } from "./fixture.ts";
import { belowChanceProblem, chanceCheck, LabelError, resolveLabels } from "./labels.ts";
import type { ImportOptions } from "./options.ts";
import { brokenPromise, unprovenMessage } from "./promise.ts";

export interface ImportResult {
  plan: ImportPlan;
  facts: ImportFacts;
  rows: { total: number; calibration: number; heldout: number };
  /** Where the files went. */
  written: string[];
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A path that is there but cannot be read (config-file.ts names it), as a refusal. */
const refuse = (err: Error): never => {
  throw new RefusedError(err.message);
};

/** `dir`'s config.json, undefined when there is none (an unreadable one is refused, naming it). */
async function readRawConfig(dir: string): Promise<RawConfig | undefined> {
  const text = await readIfPresent(join(dir, "config.json")).catch(refuse);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as RawConfig;
  } catch (err) {
    throw new RefusedError(
      `${join(dir, "config.json")} is not valid JSON (${(err as Error).message}); fix or remove it`,
    );
  }
}

/** The column of the highest probability of each row. */
function argmaxRows(probs: ArrayLike<number>, classes: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < probs.length / classes; r++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (probs[r * classes + c]! > probs[r * classes + best]!) best = c;
    out.push(best);
  }
  return out;
}

/** An FP64 input cast to FP32, measured: label agreement and the largest probability change over all rows. */
function measuredCast(
  conversion: Conversion,
  fp32: ArrayLike<number>,
  fp64: ArrayLike<number>,
  classes: number,
): Conversion {
  const a = argmaxRows(fp32, classes);
  const b = argmaxRows(fp64, classes);
  let maxDifference = 0;
  for (let i = 0; i < fp32.length; i++) maxDifference = Math.max(maxDifference, Math.abs(fp32[i]! - fp64[i]!));
  const agreement = a.filter((x, i) => x === b[i]).length / a.length;
  return {
    ...conversion,
    detail: `${conversion.detail}; on the ${a.length} rows of the data, labels agree with the FP64 model on ${(agreement * 100).toFixed(2)}%, probabilities differ by at most ${maxDifference.toExponential(2)}`,
    measured: {
      rows: a.length,
      labelAgreement: agreement,
      maxProbabilityDifference: Number(maxDifference.toPrecision(3)),
    },
  };
}

/** Rows `indices` of a probability matrix. */
function part(probs: Float32Array, classes: number, indices: readonly number[]): ProbabilityMatrix {
  const out = new Float32Array(indices.length * classes);
  indices.forEach((r, i) => {
    out.set(probs.subarray(r * classes, (r + 1) * classes), i * classes);
  });
  return { probs: out, rows: indices.length, classes };
}

/** Write a version directory whole: files go to a temporary directory that is renamed into place. */
async function writeVersion(dir: string, files: Record<string, string | Uint8Array>): Promise<void> {
  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(join(tmp, name), content);
  await rename(tmp, dir);
}

/**
 * `import`: validate, (quantize,) run both models over the data, split, calibrate, measure and write the entries,
 * signed by `signer` if given. A refusal is a `RefusedError` saying what to fix; nothing is written before all pass.
 */
export async function importModel(
  options: ImportOptions,
  note: (line: string) => void,
  signer?: ModelSigner,
): Promise<ImportResult> {
  const { name } = options;
  const edgeName = `${name}${EDGE_SUFFIX}`;
  const convert = { softmax: options.softmax };
  const full = await readCandidate(options.full, `--full ${basename(options.full)}`, convert);
  let edge: Candidate | undefined;
  let quantized: { tensors: number } | undefined;
  let trees: EdgeFacts["trees"];
  if (options.edge && "file" in options.edge) {
    edge = await readCandidate(options.edge.file, `--edge ${basename(options.edge.file)}`, convert);
  } else if (options.edge && "trees" in options.edge) {
    try {
      const cut = edgeTrees(full.model, options.edge.trees);
      edge = inspectCandidate(encodeModel(cut.model), `--edge-trees ${cut.kept} (of ${basename(options.full)})`);
      trees = { kept: cut.kept, of: cut.trees, kind: cut.kind, postTransform: cut.postTransform };
      note(
        `edge variant: the first ${cut.kept} of ${cut.trees} trees (${cut.kind === "boosted" ? `boosted, post-transform ${cut.postTransform} and base values kept` : `forest, votes scaled by ${cut.trees}/${cut.kept}`})`,
      );
    } catch (err) {
      if (err instanceof EdgeTreesError) throw new RefusedError(err.message);
      throw err;
    }
  } else if (options.edge) {
    try {
      const q = quantizeWeights(full.model);
      edge = inspectCandidate(encodeModel(q.model), `--quantize (of ${basename(options.full)})`);
      quantized = { tensors: q.tensors.length };
      note(
        `quantized ${q.tensors.length} weight tensors: ${q.tensors.map((t) => `${t.name} [${t.dims.join(", ")}]`).join(", ")}`,
      );
    } catch (err) {
      if (err instanceof QuantizeError) throw new RefusedError(`--quantize: ${err.message}`);
      throw err;
    }
  }

  const width = full.signature.input.width;
  if (edge && edge.signature.input.width !== width) {
    throw new RefusedError(
      `${full.label} takes ${width} features and ${edge.label} takes ${edge.signature.input.width}; both must take the same input`,
    );
  }
  const fullSession = await openSession(full, full.signature.probabilities.classes ?? 0);
  try {
    // A symbolic class dimension: one run of a zero row tells it.
    const classes = full.signature.probabilities.classes ?? (await fullSession.run(new Float32Array(width), 1)).length;
    const edgeClasses = edge?.signature.probabilities.classes;
    if (edge && edgeClasses !== undefined && edgeClasses !== classes) {
      throw new RefusedError(
        `${full.label} outputs ${classes} classes and ${edge.label} outputs ${edgeClasses}; both must classify into the same classes`,
      );
    }
    if (edge?.labels && full.labels && edge.labels.labels.join("\u0000") !== full.labels.labels.join("\u0000")) {
      throw new RefusedError(
        `${full.label} has the classes ${full.labels.labels.join(", ")} and ${edge.label} ${edge.labels.labels.join(", ")}; both must have the same classes in the same order`,
      );
    }

    const fullDir = join(options.modelsDir, name);
    const edgeDir = join(options.modelsDir, edgeName);
    const existing: Existing = {
      full: await readRawConfig(fullDir),
      edge: await readRawConfig(edgeDir),
      fullDirs: await subdirectories(fullDir).catch(refuse),
      edgeDirs: await subdirectories(edgeDir).catch(refuse),
    };
    let labels: string[];
    try {
      ({ labels } = resolveLabels({
        classes,
        ...(full.labels ? { model: full.labels } : {}),
        ...(options.labels ? { flag: options.labels } : {}),
        ...(existing.full?.labels ? { existing: existing.full.labels as string[] } : {}),
      }));
    } catch (err) {
      if (err instanceof LabelError) throw new RefusedError(`${full.label}: ${err.message}`);
      throw err;
    }

    const text = await readFile(options.data, "utf8").catch((err: Error) => {
      throw new RefusedError(`--data: cannot read ${options.data} (${err.message})`);
    });
    let data: LabelledRows;
    try {
      data = parseLabelledCsv(text, { width, classes, labels, source: basename(options.data) });
    } catch (err) {
      if (err instanceof DataError) throw new RefusedError(err.message);
      throw err;
    }
    const rows = data.labels.length;
    const split = stratifiedSplit(data.labels, options.heldoutFraction, options.seed);
    if (split.calibration.length < 10 || split.heldout.length < 10) {
      throw new RefusedError(
        `${basename(options.data)} has ${rows} rows: ${split.calibration.length} for calibration and ${split.heldout.length} held out; each part needs at least 10`,
      );
    }
    const splitText = `stratified, seed ${options.seed}: ${split.calibration.length} calibration / ${split.heldout.length} held-out rows of ${basename(options.data)}`;

    const fullProbs = await runRows(fullSession, full.label, data.features, rows, classes);
    checkProbabilities(fullProbs, classes, full.label);
    const fullConversions = await Promise.all(
      full.conversions.map(async (c) => {
        if (c.step !== "input-cast") return c;
        const fp64 = await runFp64Reference(full, data.values, rows, classes);
        return measuredCast(c, fullProbs, fp64, classes);
      }),
    );
    const heldoutLabels = split.heldout.map((r) => data.labels[r]!);
    const chance = chanceCheck(
      argmaxRows(part(fullProbs, classes, split.heldout).probs, classes),
      heldoutLabels,
      classes,
    );
    const problem = belowChanceProblem(chance, labels, full.label);
    if (problem) throw new RefusedError(problem);
    let edgeProbs: Float32Array | undefined;
    if (edge) {
      const edgeSession = await openSession(edge, classes);
      try {
        edgeProbs = await runRows(edgeSession, edge.label, data.features, rows, classes);
      } finally {
        await edgeSession.release();
      }
      checkProbabilities(edgeProbs, classes, edge.label);
    }

    const labelsOf = (indices: readonly number[]) => indices.map((r) => data.labels[r]!);
    const variant = (candidate: Candidate, probs: Float32Array, conversions: Conversion[]): VariantFacts => ({
      file: { file: "model.onnx", sha256: sha256(candidate.bytes), bytes: candidate.bytes.byteLength },
      ...(conversions.length > 0 ? { conversions } : {}),
      tensors: {
        inputName: candidate.signature.input.name,
        width,
        outputName: candidate.signature.probabilities.name,
        classes,
        ...(candidate.signature.input.fixedBatch && { fixedBatch: candidate.signature.input.fixedBatch }),
      },
      weights: candidate.signature.int8 ? "int8" : "fp32",
      accuracy: {
        validation: accuracy(part(probs, classes, split.calibration), labelsOf(split.calibration)),
        test: accuracy(part(probs, classes, split.heldout), labelsOf(split.heldout)),
      },
    });
    const fullFacts = variant(full, fullProbs, fullConversions);

    let edgeFacts: EdgeFacts | undefined;
    if (edge && edgeProbs) {
      const calibration = calibrateThreshold(
        part(edgeProbs, classes, split.calibration),
        part(fullProbs, classes, split.calibration),
        options.agreement,
        options.confidence,
      );
      if (!calibration.ok) {
        throw new RefusedError(unprovenMessage(calibration, edge.label, options.heldoutFraction));
      }
      const { chosen } = calibration;
      const figures = (indices: readonly number[]): CascadeFigures =>
        cascadeFigures(
          chosen.threshold,
          part(edgeProbs!, classes, indices),
          part(fullProbs, classes, indices),
          labelsOf(indices),
        );
      const test = figures(split.heldout);
      const broken = brokenPromise(calibration, test, split.heldout.length, edge.label);
      if (broken) throw new RefusedError(broken);
      edgeFacts = {
        ...variant(edge, edgeProbs, edge.conversions),
        ...(trees ? { trees } : {}),
        threshold: chosen.threshold,
        agreementTarget: options.agreement,
        proof: {
          confidence: options.confidence,
          provenAgreement: chosen.provenAgreement,
          rows: chosen.answered,
          disagreements: chosen.disagreements,
        },
        figures: { validation: figures(split.calibration), test },
        ...(quantized
          ? {
              quantization: {
                tensors: quantized.tensors,
                bytesBefore: full.bytes.byteLength,
                labelAgreement: labelAgreement(
                  { probs: edgeProbs, rows, classes },
                  { probs: fullProbs, rows, classes },
                ),
              },
            }
          : {}),
      };
    }

    const facts: ImportFacts = {
      name,
      labels,
      ...(data.header ? { features: data.header } : {}),
      ...(options.demo ? { demo: options.demo } : {}),
      ...(options.description ? { description: options.description } : {}),
      ...(options.source ? { source: options.source } : {}),
      split: splitText,
      full: fullFacts,
      ...(edgeFacts ? { edge: edgeFacts } : {}),
    };
    let plan: ImportPlan;
    try {
      plan = planImport(facts, existing, signer?.sign);
    } catch (err) {
      if (err instanceof ImportConflict) throw new RefusedError(err.message);
      throw err;
    }

    const fixture = heldoutFixture({
      features: data.features,
      width,
      labels: data.labels,
      classes,
      rows: split.heldout,
      split: splitText,
      models: [
        { name, version: plan.fullVersion, probs: fullProbs },
        ...(edgeProbs && plan.edgeVersion ? [{ name: edgeName, version: plan.edgeVersion, probs: edgeProbs }] : []),
      ],
    });
    // What each new version predicted on the held-out rows: the drift baseline, and the edge variant's
    // agreement as counts for the live audit (docs/observability.md).
    plan.fullConfig = recordFigures(plan.fullConfig, plan.fullVersion, fixture, name);
    if (plan.edgeConfig && plan.edgeVersion)
      plan.edgeConfig = recordFigures(plan.edgeConfig, plan.edgeVersion, fixture, edgeName);
    const written: string[] = [];
    const fullVersionDir = join(fullDir, plan.fullVersion);
    await writeVersion(fullVersionDir, { "model.onnx": full.bytes, [HELDOUT_FILE]: JSON.stringify(fixture) });
    written.push(fullVersionDir);
    if (edge && plan.edgeVersion && plan.edgeConfig) {
      const edgeVersionDir = join(edgeDir, plan.edgeVersion);
      await writeVersion(edgeVersionDir, { "model.onnx": edge.bytes });
      written.push(edgeVersionDir);
    }
    // Configs last, each whole: until they list the new versions, the servers do not know the directories exist.
    await writeConfig(join(fullDir, "config.json"), plan.fullConfig);
    written.push(join(fullDir, "config.json"));
    if (plan.edgeConfig) {
      await writeConfig(join(edgeDir, "config.json"), plan.edgeConfig);
      written.push(join(edgeDir, "config.json"));
    }
    return {
      plan,
      facts,
      rows: { total: rows, calibration: split.calibration.length, heldout: split.heldout.length },
      written,
    };
  } finally {
    await fullSession.release();
  }
}

/** `raw` with `version`'s held-out figures from the fixture just made for it. */
function recordFigures(raw: RawConfig, version: string, fixture: HeldoutSet, source: string): RawConfig {
  const config = parseModelConfig(raw, `${source}/config.json`);
  const figures = versionFigures(config, version, fixture);
  if (!figures) throw new Error(`the held-out fixture has no outputs of ${source} version ${version}`);
  return withFigures(raw, version, figures);
}
