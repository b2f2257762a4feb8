import { readFile } from "node:fs/promises";
import type { HeldoutSet } from "../protocol/heldout.ts";

/** A held-out fixture as the load checks use it: the inputs as one float32 matrix, and the labels. */
export interface Fixture {
  matrix: Float32Array;
  width: number;
  labels: number[];
}

async function readFixture(path: string): Promise<Fixture> {
  const set = JSON.parse(await readFile(path, "utf8")) as HeldoutSet;
  const rows = Array.isArray(set?.rows) ? set.rows : [];
  const width = rows[0]?.input?.length ?? 0;
  if (rows.length === 0 || width === 0) throw new Error("no rows with inputs");
  const matrix = new Float32Array(rows.length * width);
  const labels: number[] = [];
  rows.forEach((row, r) => {
    if (!Array.isArray(row.input) || row.input.length !== width || !Number.isInteger(row.label)) {
      throw new Error(`row ${r} needs ${width} inputs and an integer label`);
    }
    matrix.set(row.input, r * width);
    labels.push(row.label);
  });
  return { matrix, width, labels };
}

/**
 * The fixtures of a repository as loads read them: loads of one path at the same time (a model and its edge
 * variant) share one read, and nothing is kept once the reads end: a repository of a thousand models would
 * otherwise hold every fixture for as long as the pool runs (a load that passed does not read it again:
 * version-check.ts `checkedBefore`).
 */
export class FixtureCache {
  readonly #reads = new Map<string, Promise<Fixture>>();

  read(path: string): Promise<Fixture> {
    let read = this.#reads.get(path);
    if (!read) {
      const started = readFixture(path).catch((err: Error) => {
        throw new Error(`fixture ${path}: ${err.message}`);
      });
      read = started;
      this.#reads.set(path, started);
      const forget = () => {
        if (this.#reads.get(path) === started) this.#reads.delete(path);
      };
      started.then(forget, forget);
    }
    return read;
  }
}
