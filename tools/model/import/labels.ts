import type { ModelLabels } from "../onnx/convert.ts";

/** The labels contradict the model or the data; the message says which and what to do. */
export class LabelError extends Error {}

export interface LabelSources {
  /** Columns of the probabilities output. */
  classes: number;
  /** What the model carries (a ZipMap's or classifier's `classlabels_*`). */
  model?: ModelLabels;
  /** `--labels`. */
  flag?: readonly string[];
  /** The existing config's labels (a new version of a model). */
  existing?: readonly string[];
}

/**
 * The class names, one per output column, and where they come from. Names the model carries win: `--labels`
 * that differ from them are refused (the columns follow the model's classes, scikit-learn's sorted
 * `classes_`). Integer labels may be named by `--labels` (the names follow the integers' column order); without
 * it they are the integers themselves. A model that carries none takes `--labels`, else the existing
 * config's, else `0..C-1`.
 */
export function resolveLabels(sources: LabelSources): { labels: string[]; from: string } {
  const { classes, model, flag, existing } = sources;
  if (flag && flag.length !== classes) {
    throw new LabelError(`--labels names ${flag.length} classes; the model outputs ${classes}`);
  }
  if (model && model.labels.length !== classes) {
    throw new LabelError(
      `the model's ${model.source} lists ${model.labels.length} classes but its probabilities have ${classes} columns`,
    );
  }
  if (model?.kind === "names") {
    if (flag && flag.join("\u0000") !== model.labels.join("\u0000")) {
      const permuted = [...flag].sort().join("\u0000") === [...model.labels].sort().join("\u0000");
      throw new LabelError(
        `--labels ${flag.join(",")} contradict the model: its output columns are ${model.labels.join(", ")} ` +
          `(${model.source})${permuted ? ", the same names in another order" : ""}. The columns follow the ` +
          "classes the model was trained on (scikit-learn: sorted classes_); drop --labels to use the model's",
      );
    }
    return { labels: [...model.labels], from: `the model's ${model.source}` };
  }
  if (flag) {
    return {
      labels: [...flag],
      from: model ? `--labels, naming the model's classes ${model.labels.join(", ")} in column order` : "--labels",
    };
  }
  if (model) return { labels: [...model.labels], from: `the model's ${model.source}` };
  if (existing) return { labels: [...existing], from: "the existing config.json" };
  return { labels: Array.from({ length: classes }, (_, i) => String(i)), from: "column indices (no labels given)" };
}

export interface ChanceCheck {
  accuracy: number;
  /** 1 / C: what guessing uniformly scores. */
  chance: number;
  /** The column that each data label matches best (data label -> column), and the accuracy with it. */
  bestColumns: number[];
  bestAccuracy: number;
}

/**
 * Accuracy against chance on held-out rows: below chance, the labels almost certainly do not follow the
 * model's output columns (a swapped `--labels`, a label column encoded in another order). `bestColumns` is
 * the column each data label agrees with most, greedily, for the message.
 */
export function chanceCheck(predicted: readonly number[], labels: readonly number[], classes: number): ChanceCheck {
  const counts = Array.from({ length: classes }, () => new Array<number>(classes).fill(0));
  let correct = 0;
  predicted.forEach((p, i) => {
    counts[labels[i]!]![p]!++;
    if (p === labels[i]) correct++;
  });
  const pairs = counts.flatMap((row, label) => row.map((n, column) => ({ n, label, column })));
  pairs.sort((a, b) => b.n - a.n);
  const bestColumns = new Array<number>(classes).fill(-1);
  const usedColumns = new Set<number>();
  for (const { label, column } of pairs) {
    if (bestColumns[label] !== -1 || usedColumns.has(column)) continue;
    bestColumns[label] = column;
    usedColumns.add(column);
  }
  const matched = bestColumns.reduce((sum, column, label) => sum + counts[label]![column]!, 0);
  const rows = Math.max(1, predicted.length);
  return { accuracy: correct / rows, chance: 1 / classes, bestColumns, bestAccuracy: matched / rows };
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** The refusal for a below-chance accuracy, naming the likely cause; undefined at or above chance. */
export function belowChanceProblem(check: ChanceCheck, labels: readonly string[], what: string): string | undefined {
  if (check.accuracy >= check.chance) return undefined;
  const order = labels.map((_, column) => labels[check.bestColumns.indexOf(column)] ?? "?");
  return (
    `${what}: held-out accuracy ${pct(check.accuracy)} is below chance (${pct(check.chance)} for ${labels.length} classes), ` +
    `so the data's labels do not follow the model's output columns (${labels.join(", ")}). ` +
    `Read as ${order.join(", ")}, the columns would score ${pct(check.bestAccuracy)}: check --labels and the label column's ` +
    "encoding against the model's classes (scikit-learn orders the columns by sorted classes_). Nothing was written"
  );
}
