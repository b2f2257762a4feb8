import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argmax, edgeConfidence } from "../../protocol/heldout.ts";
import { calibrationOf } from "../../protocol/model-config.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../../scripts/otlp/receiver.ts";
import { heldout, heldoutOf, modelConfig } from "../support/heldout.ts";
import { type LocalStack, startLocalStack } from "../support/local-stack.ts";
import { codeBlocks } from "../support/markdown-blocks.ts";
import { isRunning } from "../support/processes.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const threshold = calibrationOf(modelConfig("digits-edge")).threshold;

let stack: LocalStack;
let receiver: OtlpReceiver;
let edgeUrl = "";
let browser: Browser;
const tmp = mkdtempSync(join(tmpdir(), "edgecascade-e2e-"));
const output = () => stack.output();

async function classify(inputs: number[], headers: Record<string, string> = {}) {
  const res = await fetch(`${edgeUrl}/v1/classify`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "digits", inputs }),
  });
  return { status: res.status, body: (await res.json()) as { servedBy: string; predictions: { label: string }[] } };
}

beforeAll(async () => {
  // Routing is what these tests look at: a budget that a loaded CI machine's first calls cannot miss, and no
  // hedges, so that the nearest region is the one that answers.
  // The pools trace to a receiver in this process, as docs/observability.md's "Following a trace locally" does
  // with `npm run traces`; every edge answer is audited, so that /status has the audit's figures.
  receiver = await startOtlpReceiver();
  stack = await startLocalStack({
    EDGE_SLO_BUDGET_MS: "5000",
    EDGE_HEDGE_BUDGET_RATIO: "0",
    EDGE_HEDGE_BUDGET_BURST: "0",
    EDGE_AUDIT_SHARE: "1",
    EDGE_AUDIT_MAX_PER_SECOND: "1000",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: "100",
  });
  edgeUrl = stack.edgeUrl;
  // Which tier answers is asserted below: a warm isolate (a cold one forwards its first requests, docs/edge.md).
  expect((await fetch(`${edgeUrl}/v2/health/ready`)).status).toBe(200);
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await receiver?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("npm start", () => {
  it("prints the URLs and one status line per tier", () => {
    expect(output()).toContain(`edge      ready  ${edgeUrl}/`);
    expect(output()).toMatch(/regional {2}ready {2}us http:\/\/127\.0\.0\.1:\d+ \(Ashburn\) · eu .* · ap /);
    expect(output()).toContain("models    breast-cancer (edge: breast-cancer-edge) · digits (edge: digits-edge)");
    // Warmed before ready: every request of the warm-up answered (a slow machine may cut it short, never refuse).
    expect(output()).toMatch(/warm-up {3}\d+ requests through every tier in [\d.]+ s/);
    expect(output()).not.toMatch(/warm-up .*refused/);
    expect(output()).toContain(
      `observed  edge share, degraded answers, latency per colo, audit agreement, drift: ${edgeUrl}/status`,
    );
    expect(output()).toMatch(
      /traces {4}the pools export spans to http:\/\/127\.0\.0\.1:\d+; every answer names its trace/,
    );
    // The three pools and the Worker's runtime run as child processes.
    expect(stack.pids.length).toBeGreaterThanOrEqual(4);
  });

  it("has run the region status check, as the cron trigger would, and shows its results", async () => {
    const status = (await (await fetch(`${edgeUrl}/status/regions`)).json()) as {
      regionStatus: { regions: { name: string; ready: boolean; versions: Record<string, string> }[] } | null;
    };
    const versions = { "breast-cancer": "1", digits: "1" };
    expect(status.regionStatus?.regions.map((r) => [r.name, r.ready, r.versions])).toEqual([
      ["us", true, versions],
      ["eu", true, versions],
      ["ap", true, versions],
    ]);
  });

  it("routes an unsure row to the region nearest the simulated location", async () => {
    const unsure = heldout.rows.findIndex((r) => edgeConfidence(r, "digits-edge") < threshold);
    const row = heldout.rows[unsure]!.input;
    const cases: [string, string][] = [
      ["35.68,139.69", "regional:ap"],
      ["48.86,2.35", "regional:eu"],
      ["40.71,-74.01", "regional:us"],
    ];
    for (const [location, region] of cases) {
      // A distinct offset per call keeps the cache out of it.
      const inputs = row.map((v, i) => (i === 0 ? v + cases.findIndex((c) => c[0] === location) * 1e-3 : v));
      const { status, body } = await classify(inputs, { "x-edgecascade-location": location });
      expect(status).toBe(200);
      expect(body.servedBy).toBe(region);
      expect(body.predictions[0]!.label).toBe(String(argmax(heldout.rows[unsure]!.expected.digits!)));
    }
  });
});

/**
 * README's quick start, run against this stack: its banner lines as `npm start` prints them, and each command block
 * (`sh quickstart`) printing what the output block after it (`text output`) shows: the same status, headers and
 * JSON, with the stack's own port for 8787, durations, trace ids and Content-Length aside (scores within 1e-6). The stack's
 * 5 s budget and no hedges only keep a loaded machine from cutting the forward short; the answers are the same.
 */
describe("README's quick start against npm start", () => {
  const blocks = codeBlocks(readFileSync(join(ROOT, "README.md"), "utf8")).filter((b) => b.heading === "Quick start");
  const runs = blocks.flatMap((b, i) =>
    b.lang === "sh" && b.info === "quickstart" && blocks[i + 1]?.info === "output"
      ? [{ command: b.text, expected: blocks[i + 1]!.text, line: b.line }]
      : [],
  );
  const masked = (text: string) =>
    text
      .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT")
      .replace(/ready in [\d.]+ s/, "ready in N s")
      .replace(/ from \S+$/m, " from DIR");

  it("shows the banner's first lines as npm start prints them", () => {
    const banner = blocks.find((b) => b.info === "banner")!;
    const printed = output().split("\n");
    for (const line of banner.text.trimEnd().split("\n")) {
      expect(printed.map(masked), line).toContain(masked(line));
    }
  });

  it("has three commands, each with its output: an edge answer, a forward, the full model from Tokyo", () => {
    expect(runs.map((r) => r.expected.match(/^x-served-by: (.*)$/m)?.[1])).toEqual([
      "edge",
      "regional:us",
      "regional:ap",
    ]);
  });

  /** Status line and headers (durations and Content-Length masked), and the parsed body. */
  const parse = (text: string) => {
    const [head, body = ""] = text.replace(/\r\n/g, "\n").split("\n\n");
    const headers = head!
      .split("\n")
      .filter((h) => !/^content-length:/i.test(h))
      .map((h) => h.replace(/dur=[\d.]+/g, "dur=N").replace(/"00-[0-9a-f]{32}-[0-9a-f]{16}-/g, '"00-TRACE-SPAN-'));
    return { headers, body: JSON.parse(body) as unknown };
  };
  const close = (actual: unknown, expected: unknown): void => {
    if (typeof expected === "number") expect(Math.abs((actual as number) - expected)).toBeLessThanOrEqual(1e-6);
    else if (expected !== null && typeof expected === "object") {
      expect(Object.keys(actual as object).sort()).toEqual(Object.keys(expected).sort());
      for (const [k, v] of Object.entries(expected)) close((actual as Record<string, unknown>)[k], v);
    } else expect(actual).toEqual(expected);
  };

  it.each(runs.map((r) => [r.line, r] as const))("README line %i prints what the README shows", async (_, run) => {
    const command = run.command.replaceAll("localhost:8787", edgeUrl.replace("http://", ""));
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
      execFile("bash", ["-c", command], { cwd: ROOT, timeout: 30_000 }, (err, out) =>
        err ? reject(err) : resolve({ stdout: out }),
      ),
    );
    const actual = parse(stdout);
    const expected = parse(run.expected);
    expect(actual.headers).toEqual(expected.headers);
    close(actual.body, expected.body);
  });
});

describe("npm start shows what the cascade does", () => {
  it("every answer names its trace, and a forwarded one is followed into the pool", async () => {
    const unsure = heldout.rows.findIndex((r) => edgeConfidence(r, "digits-edge") < threshold);
    const res = await fetch(`${edgeUrl}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "digits",
        inputs: heldout.rows[unsure]!.input,
        parameters: { cascade: "regional" },
      }),
    });
    expect(res.status).toBe(200);
    const timing = res.headers.get("server-timing") ?? "";
    const [, traceId] = /traceparent;desc="00-([0-9a-f]{32})-[0-9a-f]{16}-01"/.exec(timing) ?? [];
    expect(traceId, timing).toBeDefined();
    // What `curl localhost:4318/traces/<trace id>` shows with `npm run traces`: the pool's spans of this request.
    await expect
      .poll(
        async () => {
          const spans = (await (await fetch(`${receiver.url}/traces/${traceId}`)).json()) as {
            spans: { name: string }[];
          };
          return spans.spans.map((s) => s.name).sort();
        },
        { timeout: 10_000 },
      )
      .toEqual(["POST /v1/classify", "batch", "compute", "queue"]);
  });

  it("GET /status shows edge share, degraded answers, audit agreement and drift", async () => {
    const confident = heldout.rows.filter((r) => edgeConfidence(r, "digits-edge") >= threshold).slice(0, 5);
    for (const row of confident) expect((await classify(row.input.map((v) => v + 1e-3))).status).toBe(200);
    await expect
      .poll(
        async () => {
          const { observed } = (await (await fetch(`${edgeUrl}/status`)).json()) as {
            observed: {
              models: Record<string, { answered: number; edgeShare: number; degradedRate: number }>;
              audits: Record<string, { rows: number; agreement: number; interval: { lower: number; upper: number } }>;
              drift: Record<string, Record<string, { predictions: number; predicted: number[] }>>;
            };
          };
          const digits = observed.models.digits!;
          return {
            answered: digits.answered > 0,
            edgeShare: digits.edgeShare > 0 && digits.edgeShare <= 1,
            degradedRate: digits.degradedRate >= 0,
            audited: (observed.audits.digits?.rows ?? 0) >= confident.length,
            agreement: observed.audits.digits?.agreement,
            drift: (observed.drift.digits?.["1"]?.predictions ?? 0) > 0,
          };
        },
        { timeout: 10_000 },
      )
      .toEqual({ answered: true, edgeShare: true, degradedRate: true, audited: true, agreement: 1, drift: true });
  });
});

describe("demo page in headless Chromium", () => {
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    page.on("pageerror", (e) => errors.push(String(e)));
    // Fix the page's "random" sample, so the test knows which held-out row it sends.
    await page.addInitScript(() => {
      Math.random = () => 0.5;
    });
    await page.goto(`${edgeUrl}/`);
  });

  it("fits a phone-sized viewport", async () => {
    const width = await page.evaluate<number>("document.documentElement.scrollWidth");
    expect(width).toBeLessThanOrEqual(390);
    await expect(page.locator("#pad").isVisible()).resolves.toBe(true);
  });

  it("sends a fixture row and shows the correct label, who answered and the Server-Timing", async () => {
    // The fixed Math.random picks the middle of the bundled samples (the fixture's first 100 rows).
    const row = Math.floor(0.5 * Math.min(100, heldout.rows.length));
    await page.click("#sample");
    await page.waitForSelector("#result:not([hidden])");
    const servedBy = await page.locator("#served-by").textContent();
    expect(["cache", "edge"]).toContain(servedBy);
    const model = edgeConfidence(heldout.rows[row]!, "digits-edge") >= threshold ? "digits-edge" : "digits";
    const expected = String(argmax(heldout.rows[row]!.expected[model]!));
    expect(await page.locator("#label").textContent()).toBe(expected);
    expect(await page.locator("#true-label").textContent()).toBe(`true label: ${heldout.rows[row]!.label}`);
    const timing = await page.locator("#timing li").allTextContents();
    expect(timing.some((t) => t.startsWith("edge"))).toBe(true);
    expect(timing.at(-1)).toMatch(/^round trip \(browser\): [\d.]+ ms$/);
    // Sending the same row again is answered from the cache.
    await page.click("#sample");
    await expect.poll(() => page.locator("#served-by").textContent()).toBe("cache");
  });

  it("classifies a digit drawn with a finger (touch events) on the canvas", async () => {
    const box = (await page.locator("#pad").boundingBox())!;
    const x = box.x + box.width * 0.5;
    // A "1": one vertical stroke down the middle, as raw touch events (they reach the page as pointer events
    // of type "touch", the path phones take).
    const touch = await page.context().newCDPSession(page);
    const point = (y: number) => [{ x, y: box.y + box.height * y }];
    await touch.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: point(0.1) });
    for (let i = 1; i <= 12; i++) {
      await touch.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: point(0.1 + (0.8 * i) / 12) });
    }
    await touch.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
    await expect.poll(() => page.locator("#true-label").textContent()).toBe("");
    await expect.poll(() => page.locator("#label").textContent()).toBe("1");
    expect(["edge", "cache", "regional:us", "regional:eu", "regional:ap"]).toContain(
      await page.locator("#served-by").textContent(),
    );
  });

  it("classifies a digit drawn with the mouse", async () => {
    await page.click("#clear");
    const box = (await page.locator("#pad").boundingBox())!;
    // A "0": an ellipse.
    const at = (t: number) =>
      [box.x + box.width * (0.5 + 0.25 * Math.cos(t)), box.y + box.height * (0.5 + 0.38 * Math.sin(t))] as const;
    await page.mouse.move(...at(0));
    await page.mouse.down();
    for (let i = 1; i <= 40; i++) await page.mouse.move(...at((2 * Math.PI * i) / 40));
    await page.mouse.up();
    await expect.poll(() => page.locator("#label").textContent()).toBe("0");
    expect(errors).toEqual([]);
  });

  it("switches to the tree model: a form of its 30 named features, filled by a sample and sent as typed", async () => {
    const cancer = heldoutOf("breast-cancer");
    const cancerThreshold = calibrationOf(modelConfig("breast-cancer-edge")).threshold;
    await page.selectOption("#model", "breast-cancer");
    await expect(page.locator("#pad").isVisible()).resolves.toBe(false);
    const fields = page.locator("#form input");
    await expect(fields.count()).resolves.toBe(30);
    await expect(page.locator("#form label").first().textContent()).resolves.toBe("mean_radius");
    // The sample row: the fixed Math.random picks the middle of the bundled samples (the fixture's first 100).
    const row = cancer.rows[Math.floor(0.5 * Math.min(100, cancer.rows.length))]!;
    await page.click("#sample");
    await expect
      .poll(() => page.locator("#true-label").textContent())
      .toBe(`true label: ${modelConfig("breast-cancer").labels[row.label]}`);
    await expect(fields.first().inputValue()).resolves.toBe(String(row.input[0]));
    const answeredBy =
      edgeConfidence(row, "breast-cancer-edge") >= cancerThreshold ? "breast-cancer-edge" : "breast-cancer";
    const label = modelConfig("breast-cancer").labels[argmax(row.expected[answeredBy]!)];
    await expect.poll(() => page.locator("#label").textContent()).toBe(label);
    expect(await page.locator("#confidence").textContent()).toContain("breast-cancer version 1");
    // The form itself: a value typed in is what is sent (an empty field is refused before sending).
    await fields.nth(3).fill("");
    await page.click("#numbers button[type=submit]");
    await expect.poll(() => page.locator("#error").textContent()).toBe("feature mean_area needs a number");
    await fields.nth(3).fill(String(row.input[3]! * 1.0001));
    await page.click("#numbers button[type=submit]");
    await expect.poll(() => page.locator("#error").textContent()).toBe("");
    await expect.poll(() => page.locator("#served-by").textContent()).not.toBe("cache");
    expect(errors).toEqual([]);
  });
});

/**
 * `npm run probe` with `args`: its JSON summary, after checking that its exit code is its verdict's (0 when the p95
 * target held, 1 when this machine's load made it miss: the counts asserted here do not depend on which).
 */
async function probeJson(args: string[]) {
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve, reject) => {
    execFile(process.execPath, ["tools/probe.ts", ...args, "--json"], { cwd: ROOT, timeout: 60_000 }, (err, out) => {
      const exit = err ? (err as { code?: unknown }).code : 0;
      if (typeof exit === "number") resolve({ code: exit, stdout: out });
      else reject(err);
    });
  });
  const summary = JSON.parse(stdout);
  expect(code).toBe(summary.target.holds ? 0 : 1);
  expect(summary.verdict.exitCode).toBe(code);
  return summary;
}

// Both probes at once: each checks its own counts, and neither depends on the other's traffic.
describe.concurrent("synthetic probes against the local stack", () => {
  it("probe the tree model with its own fixture", async () => {
    const summary = await probeJson([
      ...["--url", edgeUrl, "--model", "breast-cancer"],
      ...["--duration", "2", "--rate", "30", "--report", join(tmp, "cancer.html")],
    ]);
    expect(summary.sent).toBe(60);
    expect(summary.errors).toBe(0);
    expect(summary.mismatches).toBe(0);
    expect(summary.paths.cache.count + summary.paths.edge.count).toBeGreaterThan(0);
  });

  it("report counts that match the requests sent", async () => {
    const report = join(tmp, "probe.html");
    const summary = await probeJson(["--url", edgeUrl, "--duration", "3", "--rate", "40", "--report", report]);
    expect(summary.sent).toBe(120);
    const pathCounts = Object.values(summary.paths as Record<string, { count: number }>).reduce(
      (s, p) => s + p.count,
      0,
    );
    expect(pathCounts).toBe(120);
    expect(summary.completed + summary.errors).toBe(120);
    expect(summary.errors).toBe(0);
    expect(summary.mismatches).toBe(0);
    expect(summary.paths.cache.count).toBeGreaterThan(0);
    expect(summary.paths.edge.count).toBeGreaterThan(0);
    // The probe's own floor: the same 120 requests against its no-op server.
    expect(summary.floor.count).toBe(120);
    expect(summary.floor.p50Ms).toBeGreaterThan(0);
    const html = readFileSync(report, "utf8");
    expect(html).toContain(`sent ${summary.sent}`);
    const bars = [...html.matchAll(/<title>(\w+): (\d+)<\/title>/g)].reduce((s, m) => s + Number(m[2]), 0);
    expect(bars).toBe(120);
  });
});

describe("Ctrl-C", () => {
  it("stops every process of the stack", async () => {
    const closed = new Promise<void>((resolve) => stack.process.once("close", () => resolve()));
    process.kill(-stack.process.pid!, "SIGINT");
    // "close": the process exited and its output has been read to the end.
    await closed;
    await expect.poll(() => stack.pids.filter(isRunning), { timeout: 20_000 }).toEqual([]);
    expect(output()).toContain("stopped");
  });
});
