import { describe, expect, it } from "vitest";
import { DEMO_PAGE } from "./page.ts";
import { demoRoutes } from "./routes.ts";

describe("demo page", () => {
  it("is served self-contained, with a CSP that forbids other origins", async () => {
    const res = await demoRoutes.request("/");
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

  it("serves the held-out rows without their expected outputs", async () => {
    const res = await demoRoutes.request("/demo/samples");
    const body = (await res.json()) as { rows: { input: number[]; label: number; expected?: unknown }[] };
    expect(body.rows).toHaveLength(360);
    expect(body.rows[0]!.input).toHaveLength(64);
    expect(body.rows.every((r) => r.expected === undefined && r.label >= 0 && r.label <= 9)).toBe(true);
  });
});
