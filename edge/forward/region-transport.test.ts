import { afterEach, describe, expect, it, vi } from "vitest";
import type { Region } from "../regions/region.ts";
import { missingBindings, regionTransport } from "./region-transport.ts";

const region = (name: string, binding?: string): Region => ({
  name,
  url: `http://${name}.example`,
  latitude: 0,
  longitude: 0,
  ...(binding ? { binding } : {}),
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("regionTransport", () => {
  it("sends a region's calls through its binding, as a method call, and the others through global fetch", async () => {
    const viaBinding: [string, RequestInit | undefined][] = [];
    const binding = {
      calls: viaBinding,
      fetch(this: { calls: typeof viaBinding }, url: string, init?: RequestInit) {
        this.calls.push([url, init]);
        return Promise.resolve(new Response("bound"));
      },
    };
    const global = vi.fn(async () => new Response("internet"));
    vi.stubGlobal("fetch", global);
    const send = regionTransport([region("us", "REGION_US"), region("eu")], { REGION_US: binding });
    const init = { method: "POST", body: "{}" };
    expect(await (await send(region("us", "REGION_US"), "http://us.example/v1/classify", init)).text()).toBe("bound");
    expect(viaBinding).toEqual([["http://us.example/v1/classify", init]]);
    expect(await (await send(region("eu"), "http://eu.example/v1/classify", init)).text()).toBe("internet");
    expect(global).toHaveBeenCalledWith("http://eu.example/v1/classify", init);
  });
});

describe("missingBindings", () => {
  it("names bindings a region asks for that the Worker lacks or that cannot fetch", () => {
    const regions = [region("us", "REGION_US"), region("eu", "REGION_EU"), region("ap", "REGION_AP"), region("sa")];
    const env = { REGION_US: { fetch: () => undefined }, REGION_EU: "not a fetcher" };
    expect(missingBindings(regions, env)).toEqual(["REGION_EU", "REGION_AP"]);
    expect(missingBindings([region("sa")], {})).toEqual([]);
  });
});
