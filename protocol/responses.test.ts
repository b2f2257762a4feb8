import { describe, expect, it } from "vitest";
import {
  classifyAnswerJson,
  float32Data,
  predictionsJson,
  toInferResponse,
  toPredictions,
  topClass,
} from "./responses.ts";
import type { ClassifyResponse } from "./types.ts";

const labels = ["a", "b", "c"];
const probs = new Float32Array([0.1, 0.7, 0.2, 0.5, 0.25, 0.25]);

describe("responses", () => {
  it("picks the top class per row (first wins ties)", () => {
    expect(topClass(probs, 0, 3)).toEqual({ index: 1, confidence: probs[1] });
    expect(topClass([0.4, 0.4, 0.2], 0, 3).index).toBe(0);
  });

  it("builds predictions with every class's score", () => {
    const predictions = toPredictions(probs, 2, labels);
    expect(predictions.map((p) => [p.class, p.label])).toEqual([
      [1, "b"],
      [0, "a"],
    ]);
    expect(predictions[1]!.scores).toEqual([0.5, 0.25, 0.25]);
  });

  it("writes each FP32 score as its shortest decimal, which reads back to the same float32", () => {
    const [first, second] = toPredictions(probs, 2, labels);
    expect(JSON.stringify(first)).toBe('{"class":1,"label":"b","confidence":0.7,"scores":[0.1,0.7,0.2]}');
    expect(JSON.stringify(second)).toBe('{"class":0,"label":"a","confidence":0.5,"scores":[0.5,0.25,0.25]}');
    expect(Float32Array.from([...first!.scores, ...second!.scores])).toEqual(probs);
    expect(Math.fround(first!.confidence)).toBe(probs[1]);
  });

  it("builds a v2 response with the id only when given", () => {
    const response = toInferResponse({ model: "digits", version: "1", outputName: "p", probs, batch: 2, classes: 3 });
    expect(response).toEqual({
      model_name: "digits",
      model_version: "1",
      outputs: [{ name: "p", shape: [2, 3], datatype: "FP32", data: [0.1, 0.7, 0.2, 0.5, 0.25, 0.25] }],
    });
    expect(JSON.stringify(response.outputs[0]!.data)).toBe("[0.1,0.7,0.2,0.5,0.25,0.25]");
    expect(Float32Array.from(response.outputs[0]!.data as number[])).toEqual(probs);
    expect(
      toInferResponse({ model: "m", version: "1", id: "x", outputName: "p", probs, batch: 2, classes: 3 }).id,
    ).toBe("x");
  });

  it("joins a classify answer's text in exactly the bytes JSON.stringify writes for the same object", () => {
    const ids = [
      undefined,
      "",
      "r-1",
      'quote " and \\ back',
      "line\nbreak\ttab\u0000",
      "é ☃ 😀",
      "\ud800 lone",
      "</script>",
    ];
    const batches = [new Float32Array([0.1, 0.7, 0.2]), probs, Float32Array.from({ length: 30 }, (_, i) => i / 29)];
    for (const id of ids) {
      for (const [b, rows] of batches.entries()) {
        const batch = rows.length / labels.length;
        const servedBy = b === 2 ? "regional:eu-west" : "cache";
        const before: ClassifyResponse = {
          model: "digits",
          version: "3",
          ...(id !== undefined ? { id } : {}),
          predictions: toPredictions(rows, batch, labels),
          servedBy,
        };
        const text = classifyAnswerJson(
          { model: "digits", version: "3", id, servedBy },
          predictionsJson(rows, batch, labels),
        );
        expect(text).toBe(JSON.stringify(before));
      }
    }
  });

  it("writes the same predictions from the probabilities and from the cache's copy of them (float32Data)", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const rows = Float32Array.from({ length: 3000 }, () => random() ** 3);
    expect(predictionsJson(float32Data(rows), 1000, labels)).toBe(predictionsJson(rows, 1000, labels));
  });
});
