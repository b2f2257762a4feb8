/** A labelled data set read from CSV: features then the label in the last column. */
export interface LabelledRows {
  /** Feature names from the header row, when the file has one. */
  header?: string[];
  /** Row-major `[rows, width]`. */
  features: Float32Array;
  /** The same values as written (float64), for measuring what FP32 changes in a model exported with an FP64 input. */
  values: Float64Array;
  labels: number[];
  width: number;
}

export interface CsvExpectations {
  /** Features per row (the model's input width); each line has one more cell, the label. */
  width: number;
  /** Classes of the model: labels are class indices `0..classes-1`. */
  classes: number;
  /** Class names; a label cell may also be one of these. */
  labels?: readonly string[];
  /** Named in messages. Default "data". */
  source?: string;
}

/** The data does not fit the model; the message names the file, the line and what to fix. */
export class DataError extends Error {}

/** Cells of one line: comma-separated, optionally double-quoted (`""` inside quotes is a quote). */
export function splitCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell.trim() === "") {
      quoted = true;
      cell = "";
    } else if (ch === ",") {
      cells.push(cell.trim());
      cell = "";
    } else cell += ch;
  }
  cells.push(cell.trim());
  return cells;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Parse a CSV of features and a label (last column). The first line is a header when none of its feature
 * cells is a number; every other line must have `width + 1` cells, finite numbers that fit float32, and a label
 * that is a class index below `classes` (or one of `labels`). Blank lines are skipped.
 */
export function parseLabelledCsv(text: string, expect: CsvExpectations): LabelledRows {
  const source = expect.source ?? "data";
  const columns = expect.width + 1;
  const lines = text.split(/\r?\n/);
  const rows: number[][] = [];
  const labels: number[] = [];
  let header: string[] | undefined;
  const byName = new Map((expect.labels ?? []).map((name, index) => [name, index]));
  for (let l = 0; l < lines.length; l++) {
    if (lines[l]!.trim() === "") continue;
    const where = `${source} line ${l + 1}`;
    const cells = splitCsvLine(lines[l]!);
    // The first line is a header when none of its feature cells is a number (one bad cell is a data error).
    if (rows.length === 0 && header === undefined && cells.slice(0, expect.width).every((c) => !NUMBER.test(c))) {
      if (cells.length !== columns) {
        throw new DataError(
          `${where} (header) has ${cells.length} columns; the model takes ${expect.width} features, so the file needs ${columns} (features, then the label)`,
        );
      }
      header = cells.slice(0, expect.width);
      continue;
    }
    if (cells.length !== columns) {
      throw new DataError(
        `${where} has ${cells.length} values; the model takes ${expect.width} features, so each line needs ${columns} (features, then the label)`,
      );
    }
    const row = new Array<number>(expect.width);
    for (let c = 0; c < expect.width; c++) {
      const cell = cells[c]!;
      const value = NUMBER.test(cell) ? Number(cell) : Number.NaN;
      if (!Number.isFinite(value) || !Number.isFinite(Math.fround(value))) {
        throw new DataError(`${where}, column ${c + 1}: "${cell}" is not a number that fits float32`);
      }
      row[c] = value;
    }
    const labelCell = cells[expect.width]!;
    const label = byName.get(labelCell) ?? (/^\d+$/.test(labelCell) ? Number(labelCell) : Number.NaN);
    if (!Number.isInteger(label) || label >= expect.classes) {
      const names = expect.labels ? ` or one of ${expect.labels.join(", ")}` : "";
      throw new DataError(
        `${where}: label "${labelCell}" is not a class of the model; labels are class indices 0 to ${expect.classes - 1}${names}`,
      );
    }
    rows.push(row);
    labels.push(label);
  }
  if (rows.length === 0) throw new DataError(`${source} has no data rows`);
  const values = new Float64Array(rows.length * expect.width);
  for (const [r, row] of rows.entries()) values.set(row, r * expect.width);
  return { ...(header ? { header } : {}), features: Float32Array.from(values), values, labels, width: expect.width };
}
