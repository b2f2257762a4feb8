import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../options.ts";
import { tracingConfig } from "./tracing-config.ts";

const configOf = (env: Record<string, string>) => {
  const parsed = parseCommandLine([], env);
  if (parsed.help) throw new Error("help");
  return tracingConfig(parsed.options);
};

describe("tracingConfig", () => {
  it("is off without a collector, whatever else is set", () => {
    expect(configOf({})).toEqual({
      on: false,
      reason: "no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    });
    expect(configOf({ OTEL_TRACES_SAMPLER: "always_on" }).on).toBe(false);
  });

  it("joins the base endpoint and v1/traces as the spec does; the traces endpoint is used as given and wins", () => {
    const base = configOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" });
    expect(base).toMatchObject({ on: true, config: { url: "http://collector:4318/v1/traces" } });
    const both = configOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:4318/custom",
    });
    expect(both).toMatchObject({ on: true, config: { url: "http://other:4318/custom" } });
  });

  it("carries the sampler, its ratio and the batch settings; OTEL_SDK_DISABLED and exporter none turn it off", () => {
    const on = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.01",
      OTEL_BSP_SCHEDULE_DELAY: "50",
    };
    expect(configOf(on)).toEqual({
      on: true,
      config: {
        url: "http://c:4318/v1/traces",
        sampler: "parentbased_traceidratio",
        ratio: 0.01,
        serviceName: "edgecascade-regional",
        exportDelayMs: 50,
        queueSize: 2048,
      },
    });
    expect(configOf({ ...on, OTEL_SDK_DISABLED: "true" })).toEqual({ on: false, reason: "OTEL_SDK_DISABLED=true" });
    expect(configOf({ ...on, OTEL_TRACES_EXPORTER: "none" })).toEqual({
      on: false,
      reason: "OTEL_TRACES_EXPORTER=none",
    });
  });
});
