import { describe, expect, it } from "vitest";
import type { RegionAnswer, RegionCall } from "./types.ts";
import { warmProbe } from "./warm-probe.ts";

const region = { name: "us", url: "http://us.test", latitude: 39.04, longitude: -77.49 };

/** A warm probe against a region whose classify answers are `answers`, in turn; the calls it made. */
async function probe(answers: Partial<RegionAnswer>[]): Promise<RegionCall[]> {
  const calls: RegionCall[] = [];
  await warmProbe(region, {
    timeoutMs: 1000,
    sharedSecret: undefined,
    send: async () => new Response("{}"),
    call: async (call) => {
      calls.push(call);
      return { region: "us", version: "1", probs: new Float32Array(2), ms: 3, ...answers[calls.length - 1] };
    },
    model: { name: "digits-0421", width: 64, classes: 10 },
  });
  return calls;
}

describe("warmProbe", () => {
  it("classifies one row of the model, as a warm probe", async () => {
    const calls = await probe([{}]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ path: "/v1/classify", batch: 1, classes: 10, warmProbe: true });
  });

  it("sends it once more when the answer waited for the model to load on demand, to time the answer path", async () => {
    expect(await probe([{ loadMs: 30 }, {}])).toHaveLength(2);
  });
});
