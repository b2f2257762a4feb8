import { describe, expect, it } from "vitest";
import { modelsLine } from "./models-banner.ts";

const model = (name: string, edge = true) => ({
  config: { name } as never,
  ...(edge ? { edge: { config: { name: `${name}-edge` } as never, file: "" } } : {}),
});

describe("modelsLine", () => {
  it("names every model and its edge variant in a small repository", () => {
    expect(modelsLine([model("breast-cancer"), model("digits"), model("iris", false)], "/m")).toBe(
      "breast-cancer (edge: breast-cancer-edge) · digits (edge: digits-edge) · iris (no edge variant)  from /m",
    );
  });

  it("summarises a large one: counts, then the first few", () => {
    const many = Array.from({ length: 1000 }, (_, i) => model(`m${String(i).padStart(4, "0")}`, i % 4 !== 0));
    expect(modelsLine(many, "/big")).toBe(
      "1000 models, 750 with an edge variant: m0000 · m0001 · m0002 · m0003 · m0004 · … and 995 more  from /big",
    );
  });
});
