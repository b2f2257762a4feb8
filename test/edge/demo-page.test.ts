import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";

/**
 * The demo page in headless Chromium against a Worker that requires API keys (no regions: the edge answers or
 * degrades): the key a newcomer types is sent with each request and kept nowhere but the page, and the tree
 * model's class names ("malignant", "benign") are drawn whole beside their bars. The screenshot of the scores
 * is left in $TMPDIR/edgecascade-demo/ for a person to look at.
 */
const KEY = "demo-key-1";
let worker: EdgeWorker;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [worker, browser] = await Promise.all([
    startEdgeWorker({ vars: { REGIONS: "[]", API_KEYS: KEY } }),
    chromium.launch({
      executablePath: "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    }),
  ]);
  page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.addInitScript(() => {
    Math.random = () => 0.5;
  });
  await page.goto(`${worker.url}/`);
  await page.waitForFunction("document.getElementById('model').options.length > 0");
});

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
});

describe("demo page, API keys and the tree model's labels", () => {
  it("asks for a key on a 401, sends the one typed in, and stores it nowhere", async () => {
    await expect(page.locator("#key-row").isVisible()).resolves.toBe(false);
    await page.click("#sample");
    await expect.poll(() => page.locator("#error").textContent()).toMatch(/^401: .*this edge requires an API key/);
    await expect(page.locator("#key-row").isVisible()).resolves.toBe(true);
    await page.fill("#api-key", KEY);
    await page.click("#sample");
    await expect.poll(() => page.locator("#error").textContent()).toBe("");
    await expect.poll(() => page.locator("#result").isVisible()).toBe(true);
    const stored = await page.evaluate("[localStorage.length, sessionStorage.length, document.cookie]");
    expect(stored).toEqual([0, 0, ""]);
  });

  it("draws breast-cancer's class names whole, none over another or over a bar", async () => {
    await page.selectOption("#model", "breast-cancer");
    await page.click("#sample");
    await expect.poll(() => page.locator("#scores .bar").count()).toBe(2);
    const labels = page.locator("#scores .bar span");
    await expect(labels.allTextContents()).resolves.toEqual(expect.arrayContaining(["malignant", "benign"]));
    // Each name fits its box (nothing clipped), and no name, bar or percentage overlaps another.
    type Box = { text: string; x: number; y: number; w: number; h: number; clipped: boolean };
    const boxes = await page.evaluate<Box[]>(`[...document.querySelectorAll("#scores .bar > *")].map((el) => {
      const r = el.getBoundingClientRect();
      return { text: el.textContent, x: r.x, y: r.y, w: r.width, h: r.height, clipped: el.scrollWidth > el.clientWidth };
    })`);
    expect(boxes.filter((b) => b.clipped)).toEqual([]);
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        const overlap =
          a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;
        expect(overlap, `${a.text} over ${b.text}`).toBe(false);
      }
    }
    // The label column is as wide as "malignant" needs, in the 390 px viewport.
    const malignant = boxes.find((b) => b.text === "malignant")!;
    expect(malignant.w).toBeGreaterThan(40);
    expect(Math.max(...boxes.map((b) => b.x + b.w))).toBeLessThanOrEqual(390);
    const dir = join(tmpdir(), "edgecascade-demo");
    mkdirSync(dir, { recursive: true });
    await page.locator("section[aria-live]").screenshot({ path: join(dir, "breast-cancer-scores.png") });
  });
});
