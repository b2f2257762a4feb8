/**
 * Rows through a graph whose batch dimension is fixed: an export without a dynamic batch (torch.onnx.export
 * without `dynamic_axes`, skl2onnx with `initial_types` of `[1, N]`) takes exactly `fixed` rows per run, as Triton
 * runs a model with `max_batch_size: 0`. Any number of rows runs in turn in runs of `fixed`, the last one padded
 * with rows of zeros whose outputs are dropped. Both tiers and the model tool run such models through this.
 */

/** Runs `batch` rows (row-major float32) and returns `[batch, classes]`; sync or not. */
export type RowRun = (data: Float32Array, batch: number) => Float32Array | Promise<Float32Array>;

/** `run` of a graph taking exactly `fixed` rows, as a run of any number of rows. */
export function inFixedBatches(run: RowRun, fixed: number, width: number, classes: number): RowRun {
  return async (data, batch) => {
    if (batch === fixed) return run(data, batch);
    const out = new Float32Array(batch * classes);
    for (let start = 0; start < batch; start += fixed) {
      const n = Math.min(fixed, batch - start);
      let rows = data.subarray(start * width, (start + n) * width);
      if (n < fixed) {
        const padded = new Float32Array(fixed * width);
        padded.set(rows);
        rows = padded;
      }
      const probs = await run(rows, fixed);
      if (probs.length !== fixed * classes) {
        throw new Error(`the model returned ${probs.length} values for its fixed batch of ${fixed} rows`);
      }
      out.set(probs.subarray(0, n * classes), start * classes);
    }
    return out;
  };
}
