import { Hono } from "hono";
import heldout from "../../models/digits-heldout.json";
import { DEMO_PAGE } from "./page.ts";

/** Held-out rows for the page's "Random sample" button: inputs and true labels only. */
const SAMPLES = JSON.stringify({ rows: heldout.rows.map(({ input, label }) => ({ input, label })) });

/** The page may load nothing from elsewhere: inline script and style only, requests to this origin only. */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:",
  "cache-control": "no-cache",
};

/** `GET /` (the demo page) and `GET /demo/samples`. */
export const demoRoutes = new Hono();
demoRoutes.get("/", (c) => c.html(DEMO_PAGE, 200, PAGE_HEADERS));
demoRoutes.get("/demo/samples", (c) =>
  c.body(SAMPLES, 200, { "content-type": "application/json", "cache-control": "public, max-age=3600" }),
);
