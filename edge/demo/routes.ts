import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { ServedModel } from "../models/served-model.ts";
import { DEMO_PAGE } from "./page.ts";

/** The page may load nothing from elsewhere: inline script and style only, requests to this origin only. */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:",
  "cache-control": "no-cache",
};

/** What the page needs of a model: how to collect a row, the names of its features and classes, samples. */
export function demoModel(model: ServedModel) {
  const { config, io } = model;
  return {
    name: model.name,
    width: io.width,
    labels: io.labels,
    features: config.features ?? Array.from({ length: io.width }, (_, i) => `feature ${i + 1}`),
    demo: config.demo ?? "numbers",
    samples: model.samples(),
  };
}

/** `GET /` (the demo page) and `GET /demo/models` (the served models, each with held-out sample rows). */
export const demoRoutes = new Hono<AppEnv>();
demoRoutes.get("/", (c) => c.html(DEMO_PAGE, 200, PAGE_HEADERS));
let listing: string | undefined;
demoRoutes.get("/demo/models", (c) => {
  listing ??= JSON.stringify(c.get("runtime").models.all().map(demoModel));
  return c.body(listing, 200, { "content-type": "application/json", "cache-control": "public, max-age=3600" });
});
