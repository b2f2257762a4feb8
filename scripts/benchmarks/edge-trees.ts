import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RefusedError } from "../../tools/cli/errors.ts";
import { MODELS_DIR, ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { parseImportOptions } from "../../tools/model/import/options.ts";
import { importModel } from "../../tools/model/import/run.ts";

/** The tree counts `bench:models` cuts edge variants at. */
export const EDGE_TREE_COUNTS = [4, 8, 16] as const;

/** Tree ensembles measured: the sample forest and a LightGBM-style booster, both on the breast-cancer rows. */
const ENSEMBLES = [
  {
    name: "breast-cancer forest (100 trees)",
    full: join(MODELS_DIR, "breast-cancer", "1", "model.onnx"),
  },
  {
    name: "LightGBM-style booster (48 trees, LOGISTIC)",
    full: join(ROOT, "test", "fixtures", "converters", "gbdt-binary.onnx"),
  },
];
/** The rows neither model was trained on (the sample's split: stratified, seed 0). */
const DATA = join(ROOT, "test", "fixtures", "converters", "breast-cancer.csv");
const AGREEMENT = 0.97;

export interface EdgeTreesFigures {
  ensemble: string;
  trees: number;
  kept: number;
  /** The edge variant's file, for timing it. */
  edgeFile?: string;
  edgeBytes?: number;
  fullBytes?: number;
  threshold?: number;
  /** On the held-out rows. */
  edgeShare?: number;
  /** Of the rows the edge answers, the share where its label is the full model's. */
  edgeAgreement?: number;
  /** Of all rows, the share where the cascade's label is the full model's. */
  cascadeAgreement?: number;
  cascadeAccuracy?: number;
  fullAccuracy?: number;
  /** When the import refused (no threshold reaches the agreement target). */
  refused?: string;
}

/**
 * Edge variants of K trees (`import --edge-trees K`, agreement target 0.97, what 170 calibration rows can prove), imported into a scratch
 * repository, with the figures the import measured on the held-out rows. `dir` keeps the files for timing;
 * the caller removes it.
 */
export async function measureEdgeTrees(): Promise<{ figures: EdgeTreesFigures[]; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-edge-trees-"));
  const figures: EdgeTreesFigures[] = [];
  for (const [e, ensemble] of ENSEMBLES.entries()) {
    for (const k of EDGE_TREE_COUNTS) {
      const name = `e${e}-k${k}`;
      const argv = ["--name", name, "--full", ensemble.full, "--edge-trees", String(k), "--data", DATA];
      argv.push("--labels", "malignant,benign", "--agreement", String(AGREEMENT), "--models", dir);
      try {
        const { facts } = await importModel(parseImportOptions(argv), () => {});
        const edge = facts.edge!;
        const t = edge.figures.test;
        figures.push({
          ensemble: ensemble.name,
          trees: edge.trees!.of,
          kept: k,
          edgeFile: join(dir, `${name}-edge`, "1", "model.onnx"),
          edgeBytes: edge.file.bytes,
          fullBytes: facts.full.file.bytes,
          threshold: edge.threshold,
          edgeShare: t.edgeShare,
          edgeAgreement: t.agreement,
          cascadeAgreement: 1 - t.edgeShare * (1 - t.agreement),
          cascadeAccuracy: t.cascadeAccuracy,
          fullAccuracy: facts.full.accuracy.test,
        });
      } catch (err) {
        if (!(err instanceof RefusedError)) throw err;
        figures.push({ ensemble: ensemble.name, trees: 0, kept: k, refused: err.message });
      }
    }
  }
  return { figures, dir };
}

/** The section of bench/models.md. */
export function edgeTreesMarkdown(figures: readonly (EdgeTreesFigures & { webUs?: string })[]): string[] {
  const pct = (x: number | undefined) => (x === undefined ? "–" : `${(x * 100).toFixed(2)}%`);
  const lines = [
    "",
    "## Edge variants of tree ensembles: `import --edge-trees K`",
    "",
    `The first K trees of each ensemble as its edge variant, calibrated for agreement ${AGREEMENT} on the calibration`,
    `rows, figures on the held-out rows of \`${DATA.slice(ROOT.length + 1)}\` (the rows the models were not trained on).`,
    "Edge agreement: of the rows the edge answers, the share labelled as the full model labels them; cascade agreement:",
    "the same over all rows (forwarded rows are the full model's). web µs/row: onnxruntime-web, batch 1, the edge",
    "variant and in brackets its share of the full model's time in the same round. Shares and agreements are exact",
    "(seeded split, deterministic runtimes); times vary with the machine's load.",
    "",
    "| ensemble | K | bytes | threshold | edge share | edge agreement | cascade agreement | cascade accuracy | full model accuracy | web µs/row |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const f of figures) {
    lines.push(
      f.refused
        ? `| ${f.ensemble} | ${f.kept} | refused: ${f.refused.replaceAll("|", "/")} | | | | | | | |`
        : `| ${f.ensemble} | ${f.kept} | ${f.edgeBytes!.toLocaleString("en")} | ${f.threshold} | ${pct(f.edgeShare)} | ` +
            `${pct(f.edgeAgreement)} | ${pct(f.cascadeAgreement)} | ${pct(f.cascadeAccuracy)} | ${pct(f.fullAccuracy)} | ${f.webUs ?? "–"} |`,
    );
  }
  return lines;
}

/** The bytes of a file measured. */
export const readBytes = (file: string) => new Uint8Array(readFileSync(file));
export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });
