import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import cancerConfig from "../../models/breast-cancer/config.json";
import digitsConfig from "../../models/digits/config.json";
import { parseModelConfig } from "../../protocol/model-config.ts";
import type { AppEnv } from "../app-env.ts";
import { ModelCatalog } from "../models/catalog.ts";
import type { EdgeRuntime } from "../runtime.ts";
import { DEMO_PAGE } from "./page.ts";
import { demoRoutes } from "./routes.ts";

const configs = { "breast-cancer": parseModelConfig(cancerConfig, "c"), digits: parseModelConfig(digitsConfig, "d") };
const modelConfig = (name: keyof typeof configs) => configs[name];
const samples = (name: keyof typeof configs) =>
  [0, 1, 2].map((i) => ({
    input: Array.from({ length: configs[name].inputs[0]!.shape[1]! }, (_, f) => i + f),
    label: i % 2,
  }));
const models = new ModelCatalog(
  (["breast-cancer", "digits"] as const).map((name) => ({
    config: modelConfig(name),
    edge: undefined,
    samples: () => samples(name),
  })),
);
const app = new Hono<AppEnv>();
app.use(async (c, next) => {
  c.set("runtime", { models } as EdgeRuntime);
  await next();
});
app.route("/", demoRoutes);

describe("demo page", () => {
  it("is served self-contained, with a CSP that forbids other origins", async () => {
    const res = await app.request("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toBe(DEMO_PAGE);
    expect(html).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(html).toContain('fetch("/v1/classify"');
    expect(html).toContain("const toFeatures = (function drawingToFeatures(");
    expect(html).toContain('name="viewport"');
  });

  it("lists every served model with how to collect its rows, its names and samples without expected outputs", async () => {
    const res = await app.request("/demo/models");
    const body = (await res.json()) as ReturnType<typeof import("./routes.ts").demoModel>[];
    expect(body.map((m) => m.name)).toEqual(["breast-cancer", "digits"]);
    const [cancer, digits] = body;
    expect(digits).toMatchObject({ width: 64, demo: "drawing-8x8", labels: modelConfig("digits").labels });
    expect(digits!.features[0]).toBe("feature 1");
    expect(cancer).toMatchObject({ width: 30, demo: "numbers", labels: ["malignant", "benign"] });
    expect(cancer!.features).toEqual(modelConfig("breast-cancer").features);
    expect(cancer!.samples).toEqual(samples("breast-cancer"));
    expect(cancer!.samples.every((s) => s.input.length === 30 && !("expected" in s))).toBe(true);
  });
});
