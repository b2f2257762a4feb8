import type { Runner } from "./edge-variant.ts";

/**
 * `run` one call at a time: each call starts after the previous one settled. onnxruntime-web's `session.run`
 * keeps per-call scratch on one shared wasm stack across awaits, so overlapping calls could overwrite each
 * other's buffers; a run of an edge model takes tens of µs, so the queue costs nothing measurable.
 */
export function serialRuns(run: Runner): Runner & { idle(): Promise<void> } {
  let tail: Promise<unknown> = Promise.resolve();
  const serial = (data: Float32Array, batch: number) => {
    const result = tail.then(() => run(data, batch));
    tail = result.catch(() => undefined);
    return result;
  };
  /** Resolves once every run asked for so far has ended (a session is released only then). */
  const idle = () => tail.then(() => undefined);
  return Object.assign(serial, { idle });
}
