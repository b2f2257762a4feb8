import { describe, expect, it } from "vitest";
import type { HeldoutRow } from "../../protocol/heldout.ts";
import type { LoadResponse } from "./load-response.ts";
import { readProbeAnswer } from "./read-answer.ts";

const row: HeldoutRow = { input: [0], label: 1, expected: { digits: [0.1, 0.9], "digits-edge": [0.8, 0.2] } };
const answer = (body: object | string, status = 200): LoadResponse => ({
  dueMs: 0,
  latencyMs: 1.5,
  sendLagMs: 0,
  status,
  headers: {},
  body: typeof body === "string" ? body : JSON.stringify(body),
});
const read = (r: LoadResponse) => readProbeAnswer(r, row, "digits", "digits-edge");

describe("readProbeAnswer", () => {
  it("checks a regional answer against the full model and an edge or cache answer against the edge variant", () => {
    expect(read(answer({ servedBy: "regional:eu", predictions: [{ class: 1 }] }))).toEqual({
      path: "regional",
      latencyMs: 1.5,
      status: 200,
      region: "eu",
      correct: true,
    });
    expect(read(answer({ servedBy: "edge", predictions: [{ class: 0 }] }))).toMatchObject({
      path: "edge",
      correct: true,
    });
    expect(read(answer({ servedBy: "cache", predictions: [{ class: 1 }] }))).toMatchObject({ correct: false });
    const noEdge = readProbeAnswer(
      answer({ servedBy: "cache", predictions: [{ class: 1 }] }),
      row,
      "digits",
      undefined,
    );
    expect(noEdge.correct).toBe(true);
  });

  it("marks an answer the edge served without checking the tenant's quota", () => {
    const unmetered = {
      ...answer({ servedBy: "edge", predictions: [{ class: 0 }] }),
      headers: { "x-edgecascade-quota": "unmetered" },
    };
    expect(read(unmetered)).toMatchObject({ path: "edge", unmetered: true });
    expect(read(answer({ servedBy: "edge", predictions: [{ class: 0 }] }))).not.toHaveProperty("unmetered");
  });

  it("reads failures, refusals, non-JSON and unknown tiers as errors that say what came", () => {
    expect(read({ ...answer(""), status: 0, error: "ECONNRESET socket hang up" })).toEqual({
      path: "error",
      latencyMs: 1.5,
      status: 0,
      error: "ECONNRESET socket hang up",
    });
    expect(read(answer({ error: "slow down" }, 429)).error).toBe('HTTP 429: {"error":"slow down"}');
    expect(read(answer("<html>"))).toMatchObject({ path: "error", status: 200, error: "not JSON: <html>" });
    expect(read(answer({ servedBy: "elsewhere" })).error).toBe('unexpected servedBy "elsewhere"');
  });
});
