import { describe, expect, it } from "vitest";
import type { ServedModel } from "../models/served-model.ts";
import { servedHeaders } from "../routes/served-headers.ts";
import type { Served } from "../serve.ts";
import { AnswerHeaders } from "./answer-headers.ts";

// servedHeaders reads only the edge variant's label of a model.
const model = { name: "digits", edge: { label: "digits-edge v1" } } as unknown as ServedModel;
const edge: Served = {
  probs: [],
  batch: 1,
  version: "v1",
  servedBy: "edge",
  trace: { cache: { tier: "bypass", ms: 0 }, edge: true },
};
const hit: Served = {
  probs: [],
  batch: 1,
  version: "v1",
  servedBy: "cache",
  trace: { cache: { tier: "l1", ms: 0 }, edge: false },
};
const noOrigin = { vary: "Origin" };
const entries = (h: HeadersInit) => [...new Headers(h)].sort();
const expected = (served: Served, cors: Record<string, string>) =>
  entries({ "content-type": "application/json", ...servedHeaders(model, served), ...cors });

describe("AnswerHeaders", () => {
  it("hands every edge answer and every cache hit of a version the same headers, built once", () => {
    const memo = new AnswerHeaders();
    const first = memo.for(model, edge, noOrigin, false);
    expect(entries(first)).toEqual(expected(edge, noOrigin));
    expect(memo.for(model, { ...edge }, noOrigin, false)).toBe(first);
    const cached = memo.for(model, hit, noOrigin, false);
    expect(cached).not.toBe(first);
    expect(entries(cached)).toEqual(expected(hit, noOrigin));
    expect(memo.for(model, { ...hit, version: "v2" }, noOrigin, false)).not.toBe(cached);
    expect(memo.size).toBe(3);
  });

  it("builds per answer what varies per request: regional timing, degradation, a browser's CORS", () => {
    const memo = new AnswerHeaders();
    const regional: Served = {
      ...edge,
      servedBy: "regional:eu",
      trace: { cache: { tier: "miss", ms: 0 }, edge: true, regional: { region: "eu", ms: 7, hedged: false } },
    };
    const degraded: Served = { ...edge, servedBy: "degraded", degraded: "deadline" };
    const browser = { vary: "Origin", "access-control-allow-origin": "*", "timing-allow-origin": "*" };
    expect(entries(memo.for(model, regional, noOrigin, false))).toEqual(expected(regional, noOrigin));
    expect(entries(memo.for(model, degraded, noOrigin, false))).toEqual(expected(degraded, noOrigin));
    expect(entries(memo.for(model, edge, browser, true))).toEqual(expected(edge, browser));
    expect(memo.size).toBe(0);
  });

  it("is copied by each Response: changing one answer's headers changes no other", () => {
    const memo = new AnswerHeaders();
    const a = new Response("{}", { headers: memo.for(model, edge, noOrigin, false) });
    a.headers.set("x-served-by", "changed");
    const b = new Response("{}", { headers: memo.for(model, edge, noOrigin, false) });
    expect(b.headers.get("x-served-by")).toBe("edge");
  });

  it("keeps at most 64 sets, the popular ones among them, however many others come and go", () => {
    const memo = new AnswerHeaders();
    const popular = memo.for(model, edge, noOrigin, false);
    for (let v = 0; v < 200; v++) {
      memo.for(model, { ...edge, version: `tail-${v}` }, noOrigin, false);
      if (v % 10 === 0) expect(memo.for(model, edge, noOrigin, false)).toBe(popular);
    }
    expect(memo.size).toBe(64);
    // Used since the last 63 of the tail, the popular set is still the one built first.
    expect(memo.for(model, edge, noOrigin, false)).toBe(popular);
    // The least recently used went: the tail's first set is built again, right.
    const rebuilt = memo.for(model, { ...edge, version: "tail-0" }, noOrigin, false);
    expect(entries(rebuilt)).toEqual(expected({ ...edge, version: "tail-0" }, noOrigin));
    expect(memo.size).toBe(64);
  });
});
