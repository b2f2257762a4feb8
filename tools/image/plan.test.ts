import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { UsageError } from "../cli/errors.ts";
import {
  budArgs,
  chooseBase,
  debianTarballName,
  dockerfileArgs,
  gpuStage,
  isoWeek,
  localBaseTag,
  parseImageArgs,
  registryHost,
  transientBuildFailure,
} from "./plan.ts";

const ROOT = "/repo/";

describe("parseImageArgs", () => {
  it("defaults to the cpu target on an automatically chosen base, named after the target", () => {
    expect(parseImageArgs([], ROOT)).toEqual({
      target: "cpu",
      base: "auto",
      tag: "localhost/edgecascade/regional:cpu",
      context: ROOT,
      noCache: false,
    });
  });

  it("reads every flag, with a space or =", () => {
    const parsed = parseImageArgs(
      ["--target=gpu", "--base", "local", "--tag", "x/y:z", "--no-cache", "--context", "/ctx"],
      ROOT,
    );
    expect(parsed).toEqual({ target: "gpu", base: "local", tag: "x/y:z", context: "/ctx", noCache: true });
    expect(parseImageArgs(["--target", "gpu"], ROOT)).toMatchObject({ tag: "localhost/edgecascade/regional:gpu" });
  });

  it.each([
    [["--target", "tpu"], '--target must be cpu or gpu, got "tpu"'],
    [["--base"], "--base needs a value"],
    [["--tag", "--no-cache"], "--tag needs a value"],
    [["--push"], "unknown flag --push"],
  ])("refuses %j, naming the flag", (argv, message) => {
    expect(() => parseImageArgs(argv, ROOT)).toThrow(new UsageError(message));
  });
});

describe("registryHost", () => {
  it("resolves references as Docker does", () => {
    expect(registryHost("node:24-bookworm-slim")).toBe("registry-1.docker.io");
    expect(registryHost("nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04")).toBe("registry-1.docker.io");
    expect(registryHost("docker.io/library/node:24")).toBe("registry-1.docker.io");
    expect(registryHost("registry.example.com/base/node:24")).toBe("registry.example.com");
    expect(registryHost("nvcr.io:443/nvidia/cuda:12")).toBe("nvcr.io:443");
    expect(registryHost("localhost/edgecascade/base:x")).toBeNull();
    expect(registryHost("localhost:5000/edgecascade/base:x")).toBeNull();
  });
});

describe("chooseBase", () => {
  it("auto takes the public base when its registry answers, the local one otherwise; explicit choices stand", () => {
    expect(chooseBase("auto", "node:24", true)).toEqual({ kind: "image", ref: "node:24" });
    expect(chooseBase("auto", "node:24", false)).toEqual({ kind: "local" });
    expect(chooseBase("local", "node:24", true)).toEqual({ kind: "local" });
    expect(chooseBase("my/base:1", "node:24", false)).toEqual({ kind: "image", ref: "my/base:1" });
  });
});

describe("the local base's keys", () => {
  it("isoWeek follows ISO 8601: weeks start on Monday and belong to the year of their Thursday", () => {
    expect(isoWeek(new Date("2026-12-01T22:00:00Z"))).toBe("2026w49");
    expect(isoWeek(new Date("2026-11-30T00:00:00Z"))).toBe("2026w49");
    expect(isoWeek(new Date("2026-11-29T23:59:59Z"))).toBe("2026w48");
    expect(isoWeek(new Date("2027-01-01T12:00:00Z"))).toBe("2026w53");
    expect(isoWeek(new Date("2024-12-30T12:00:00Z"))).toBe("2025w01");
  });

  it("names the tarball by suite and week, and the image by every input", () => {
    const spec = { suite: "bookworm", week: "2026w49", node: "24.22.3", npm: "11.19.1" };
    expect(debianTarballName(spec)).toBe("bookworm-minbase-2026w49.tar");
    expect(localBaseTag(spec, "ded29fe69b2c0123456789")).toBe(
      "localhost/edgecascade/base:bookworm-2026w49-ded29fe69b2c-node24.22.3-npm11.19.1",
    );
    expect(localBaseTag({ ...spec, node: "24.23.0" }, "ded29fe69b2c")).not.toBe(localBaseTag(spec, "ded29fe69b2c"));
  });
});

describe("budArgs", () => {
  it("builds the stage in chroot isolation with cached layers, the base as a build argument", () => {
    expect(budArgs({ stage: "cpu", baseRef: "localhost/b:1", tag: "t:1", context: "/ctx", noCache: false })).toEqual([
      "bud",
      "--isolation",
      "chroot",
      "--layers",
      "--force-rm",
      "--target",
      "cpu",
      "--build-arg",
      "BASE=localhost/b:1",
      "--tag",
      "t:1",
      "/ctx",
    ]);
  });

  it("passes --no-cache and the CA bundle as the secret `ca` when given", () => {
    const args = budArgs({ stage: "deps-gpu", baseRef: "b", tag: "t", context: ".", noCache: true, caFile: "/ca.pem" });
    expect(args).toContain("--no-cache");
    expect(args.slice(args.indexOf("--secret"), args.indexOf("--secret") + 2)).toEqual([
      "--secret",
      "id=ca,src=/ca.pem",
    ]);
  });
});

describe("the Dockerfile", () => {
  const text = readFileSync(new URL("../../Dockerfile", import.meta.url), "utf8");

  it("takes its base as ARG BASE, the public Node 24 image by default, and the CUDA image as CUDA_IMAGE", () => {
    const args = dockerfileArgs(text);
    expect(args.BASE).toMatch(/^node:24-bookworm-slim$/);
    expect(args.CUDA_IMAGE).toMatch(/^nvidia\/cuda:12\.[\d.]+-cudnn-runtime-/);
    expect(text).toMatch(/^FROM \$\{BASE\} AS node$/m);
  });

  it("starts the gpu target with --ep cuda (exit rather than serve from the CPU), on the CUDA image", () => {
    const gpu = text.slice(text.indexOf("AS gpu\n"), text.indexOf("AS cpu\n"));
    expect(text).toMatch(/^FROM \$\{CUDA_IMAGE\} AS gpu$/m);
    expect(gpu).toMatch(/^COPY --from=deps-gpu \/app\/node_modules \.\/node_modules$/m);
    expect(gpu).toMatch(/^CMD \["--ep", "cuda"\]$/m);
  });

  it("reads only the ARGs before the first FROM", () => {
    expect(dockerfileArgs("ARG A=1\nFROM x\nARG B=2\n")).toEqual({ A: "1" });
  });

  it("stops a gpu build at deps-gpu, and says why, when the CUDA base's registry does not answer", () => {
    expect(gpuStage(true)).toEqual({ stage: "gpu" });
    expect(gpuStage(false).stage).toBe("deps-gpu");
    expect(gpuStage(false).note).toMatch(/cannot reach/);
    expect(text).toMatch(/^FROM deps AS deps-gpu$/m);
  });
});

describe("transientBuildFailure", () => {
  it("retries only buildah's EBUSY on its memfd copy, never a failed step", () => {
    expect(transientBuildFailure("  build Close_Fd sealing memfd copy: Device or resource busy\n")).toMatch(/EBUSY/);
    expect(transientBuildFailure('Error: building at STEP "RUN npm ci": exit status 1')).toBeNull();
    expect(transientBuildFailure("deps-gpu: could not download onnxruntime-node's CUDA 12 provider")).toBeNull();
  });
});
