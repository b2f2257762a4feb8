import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowLatency } from "./measure.ts";

describe("rowLatency", () => {
  // Another thread of the same process burning CPU the whole time, as an idle runtime pool or a GC helper can.
  let spinner: Worker;
  beforeAll(async () => {
    spinner = new Worker("for (;;) {}", { eval: true });
    await new Promise((resolve) => spinner.once("online", resolve));
  });
  afterAll(() => spinner.terminate());

  it("counts only the CPU time of the thread that runs the rows, whatever else the process burns", async () => {
    // Each "row" waits 2 ms and computes nothing: the process spends up to ~2 ms of the spinner's CPU per row
    // (2,072 µs measured with the process's figure), the measuring thread next to none. The energy gate is
    // computed from this figure.
    const idle = () => new Promise((resolve) => setTimeout(resolve, 2));
    const measured = await rowLatency(idle, [new Float32Array(1)], 50);
    expect(measured.samples).toBe(50);
    expect(measured.p50Ms).toBeGreaterThanOrEqual(1.5);
    expect(measured.cpuUsPerRow).toBeLessThan(500);
  });
});
