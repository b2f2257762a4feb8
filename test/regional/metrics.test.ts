import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { heldoutOf } from "../support/heldout.ts";
import { classifyRows, counted, get, metric, post, serverForFile, testOptions } from "../support/regional-server.ts";

const cancer = heldoutOf("breast-cancer");

const server = serverForFile(testOptions(["--region", "ap"]));
let text: string;
const labels = { model: "digits", version: "1" };

beforeAll(async () => {
  // Known traffic: 4 single-row successes and one 3-row success, one expired, one invalid.
  await Promise.all([0, 1, 2, 3].map((i) => post(`${server.url}/v1/classify`, classifyRows(i))));
  await post(`${server.url}/v1/classify`, classifyRows(10, 3));
  await post(`${server.url}/v1/classify`, classifyRows(0), { [DEADLINE_HEADER]: "0" });
  await post(`${server.url}/v1/classify`, { model: "digits", inputs: [1, 2, 3] });
  // And two rows of the tree model, one call.
  await post(`${server.url}/v1/classify`, {
    model: "breast-cancer",
    inputs: cancer.rows.slice(0, 2).map((r) => r.input),
  });
  const res = await get(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  text = res.body;
});

describe("GET /metrics", () => {
  it("is read strictly: a series that is not there throws, never reads as 0", () => {
    expect(() => metric(text, "edgecascade_inference_row_total", labels)).toThrow(
      /no series edgecascade_inference_row_total/,
    );
    expect(() => metric(text, "edgecascade_inference_rows_total", { ...labels, model: "digit" })).toThrow(/no series/);
    expect(() => counted(text, "edgecascade_inference_row_total", labels)).toThrow(/no counter/);
    // A counter the pool declares, not yet counted for these labels: 0.
    expect(counted(text, "edgecascade_inference_requests_total", { ...labels, outcome: "rejected" })).toBe(0);
  });

  it("labels every model's series with its name: each served model counts its own traffic", () => {
    const cancerLabels = { model: "breast-cancer", version: "1" };
    expect(metric(text, "edgecascade_inference_requests_total", { ...cancerLabels, outcome: "success" })).toBe(1);
    expect(metric(text, "edgecascade_inference_rows_total", cancerLabels)).toBe(2);
    expect(metric(text, "edgecascade_inference_requests_total", { ...labels, outcome: "success" })).toBe(5);
    for (const model of ["digits", "digits-edge", "breast-cancer", "breast-cancer-edge"]) {
      expect(metric(text, "edgecascade_model_ready", { model, version: "1" }), model).toBe(1);
    }
  });

  it("passes promtool check metrics", () => {
    const promtool = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(promtool.error, "promtool must be installed (Debian package prometheus)").toBeUndefined();
    expect(promtool.stdout + promtool.stderr).toBe("");
    expect(promtool.status).toBe(0);
  });

  it.each([
    ["edgecascade_inference_requests_total", "counter"],
    ["edgecascade_inference_rows_total", "counter"],
    ["edgecascade_inference_executions_total", "counter"],
    ["edgecascade_inference_request_duration_seconds", "histogram"],
    ["edgecascade_inference_queue_duration_seconds", "histogram"],
    ["edgecascade_inference_compute_duration_seconds", "histogram"],
    ["edgecascade_inference_batch_size", "histogram"],
    ["edgecascade_inference_queue_depth", "gauge"],
    ["edgecascade_inference_pending_requests", "gauge"],
    ["edgecascade_model_ready", "gauge"],
    ["edgecascade_model_loads_total", "counter"],
    ["edgecascade_execution_provider", "gauge"],
    ["edgecascade_http_responses_total", "counter"],
    ["process_cpu_seconds_total", "counter"],
    ["nodejs_eventloop_lag_p99_seconds", "gauge"],
  ])("%s is a %s with help text", (name, type) => {
    expect(text).toContain(`# TYPE ${name} ${type}\n`);
    expect(text).toMatch(new RegExp(`# HELP ${name} \\S`));
  });

  it("counts requests by model, version and outcome, and rows and executions like Triton", () => {
    expect(metric(text, "edgecascade_inference_requests_total", { ...labels, outcome: "success" })).toBe(5);
    expect(metric(text, "edgecascade_inference_requests_total", { ...labels, outcome: "expired" })).toBe(1);
    expect(metric(text, "edgecascade_inference_rows_total", labels)).toBe(7);
    const executions = metric(text, "edgecascade_inference_executions_total", labels);
    expect(executions).toBeGreaterThanOrEqual(2);
    expect(executions).toBeLessThanOrEqual(5);
    expect(metric(text, "edgecascade_inference_batch_size_count", labels)).toBe(executions);
    expect(metric(text, "edgecascade_inference_batch_size_sum", labels)).toBe(7);
    expect(metric(text, "edgecascade_inference_compute_duration_seconds_count", labels)).toBe(executions);
    expect(metric(text, "edgecascade_inference_queue_duration_seconds_count", labels)).toBe(5);
    // Every request that reached the model, the expired one included.
    expect(metric(text, "edgecascade_inference_request_duration_seconds_count", labels)).toBe(6);
  });

  it("reports queue depth and pending requests back at zero when idle", () => {
    expect(text).toContain('edgecascade_inference_queue_depth{model="digits",version="1"} 0\n');
    expect(text).toContain('edgecascade_inference_pending_requests{model="digits",version="1"} 0\n');
  });

  it("reports model readiness, loads and the execution provider", () => {
    expect(metric(text, "edgecascade_model_ready", labels)).toBe(1);
    expect(metric(text, "edgecascade_model_ready", { model: "digits-edge", version: "1" })).toBe(1);
    expect(metric(text, "edgecascade_model_loads_total", { model: "digits", outcome: "success" })).toBe(1);
    expect(text).toContain('edgecascade_execution_provider{provider="cpu"} 1\n');
  });

  it("counts HTTP responses by route pattern and status", () => {
    const route = { method: "POST", route: "/v1/classify" };
    expect(metric(text, "edgecascade_http_responses_total", { ...route, status: "200" })).toBe(6); // 5 digits, 1 breast-cancer
    expect(metric(text, "edgecascade_http_responses_total", { ...route, status: "504" })).toBe(1);
    expect(metric(text, "edgecascade_http_responses_total", { ...route, status: "400" })).toBe(1);
  });
});
