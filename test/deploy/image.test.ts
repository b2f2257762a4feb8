// The container image, built for real (buildah, chroot isolation, from a local Debian base, as
// `npm run image -- --base local` builds it where no registry is reachable) and run as Kubernetes runs it:
// uid 1000, read-only root filesystem, tmpfs /tmp, tini as PID 1. Needs root (buildah, namespaces); CI runs
// as root, and `npm test` installs buildah and debootstrap there (scripts/prerequisites/plan.ts).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argmax } from "../../protocol/heldout.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import { grpcToken } from "../../regional/grpc/auth.ts";
import { parseCommandLine } from "../../regional/options.ts";
import { onPath } from "../../scripts/prerequisites/on-path.ts";
import { PREREQUISITES, rootSuitePlan } from "../../scripts/prerequisites/plan.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { imageConfig, runReadOnly } from "../support/container.ts";
import { fromRawFloat32, grpcClient, rawFloat32 } from "../support/grpc-client.ts";
import { heldoutOf } from "../support/heldout.ts";
import { childPids, freePort } from "../support/processes.ts";
import { until } from "../support/regional-process.ts";
import { metric } from "../support/regional-server.ts";
import { type TestRegistry, testRegistry } from "../support/registry.ts";

/**
 * Root with buildah and debootstrap: the suite runs. Root without them: it fails, naming them. Not root: skipped,
 * saying so; in CI (which runs as root) that fails too (scripts/prerequisites/plan.ts `rootSuitePlan`).
 */
const plan = rootSuitePlan(
  "the image suite",
  PREREQUISITES.test.filter((p) => !onPath(p.command)),
  { isRoot: process.getuid?.() === 0, ci: !!process.env.CI },
);
if (plan.action === "skip") console.warn(`test/deploy/image.test.ts: SKIPPED: ${plan.reason}`);
/** What the Dockerfile's COPY lines take from the context, with the build files. */
const CONTEXT = [
  "Dockerfile",
  ".dockerignore",
  "package.json",
  "package-lock.json",
  ".npmrc",
  "protocol",
  "hono-shared",
  "tools/cli",
  "regional",
  "registry",
];
const SECRET = "image-test-secret";
const DELAY_MS = 1500;

interface Build {
  code: number;
  output: string;
  seconds: number;
}

/** `npm run image` itself, as a user runs it. */
function image(args: string[]): Promise<Build> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "tools/image.ts"), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, output, seconds: (Date.now() - started) / 1000 }));
  });
}

/** Every image ID a build printed (`--> 1a2b…`, `--> Using cache 1a2b…`): the layers it made or reused. */
function layerIds(output: string): string[] {
  return [...output.matchAll(/^\s*build --> (?:Using cache )?([0-9a-f]{11,64})$/gm)].map((m) => m[1]!);
}

/** For each buildah STEP line, whether the next `-->` line says it came from the cache. */
function steps(output: string): { step: string; cached: boolean }[] {
  const lines = output.split("\n").map((l) => l.replace(/^\s*build /, ""));
  const found: { step: string; cached: boolean }[] = [];
  for (const line of lines) {
    const step = line.match(/STEP \d+\/\d+: (.*)$/)?.[1];
    if (step) found.push({ step, cached: false });
    else if (/^--> Using cache /.test(line) && found.length) found.at(-1)!.cached = true;
  }
  return found;
}

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: "utf8" }).trim();

describe("what the image suite needs", () => {
  if (plan.action === "skip") it.skip(`SKIPPED: ${plan.reason}`, () => {});
  else
    it("root, buildah and debootstrap", () => {
      if (plan.action === "fail") throw new Error(plan.reason);
    });
});

describe.runIf(plan.action === "run")("the cpu image, built with buildah and run read-only as uid 1000", () => {
  let context = "";
  const tag = `localhost/edgecascade-test/regional:${process.pid}`;
  const gpuTag = `${tag}-gpu`;
  let fresh: Build;
  let rebuilt: Build;
  let container = "";
  let rootfs = "";
  let pool: ChildProcess | undefined;
  let reg: TestRegistry;
  let exited: Promise<number | null>;
  let log = "";
  let base = "";
  let readySeconds = 0;

  beforeAll(async () => {
    context = mkdtempSync(join(tmpdir(), "edgecascade-image-context-"));
    for (const entry of CONTEXT) cpSync(join(ROOT, entry), join(context, entry), { recursive: true });
    fresh = await image(["--base", "local", "--no-cache", "--context", context, "--tag", tag]);
    if (fresh.code !== 0) throw new Error(`npm run image failed:\n${fresh.output}`);
    // A code-only change: the next build must take every dependency layer from the cache.
    appendFileSync(join(context, "regional/main.ts"), "// changed by test/deploy/image.test.ts\n");
    rebuilt = await image(["--base", "local", "--context", context, "--tag", tag]);
    if (rebuilt.code !== 0) throw new Error(`the rebuild failed:\n${rebuilt.output}`);

    container = sh("buildah", ["from", tag]);
    rootfs = sh("buildah", ["mount", container]);
    // The image holds no models: the pool reads them from a registry (the local S3 server, on the host's loopback).
    reg = await testRegistry();
    const port = await freePort();
    grpcPort = await freePort();
    const started = Date.now();
    // A Deployment's flags, plus a simulated delay so that requests are in flight when SIGTERM comes.
    pool = runReadOnly(
      rootfs,
      imageConfig(tag),
      [
        "--port",
        String(port),
        "--grpc-port",
        String(grpcPort),
        "--host",
        "127.0.0.1",
        "--workers",
        "2",
        "--region",
        "image",
        "--delay-ms",
        String(DELAY_MS),
        "--registry",
        reg.registry.url,
      ],
      { REGIONAL_SHARED_SECRET: SECRET, MODEL_PUBLIC_KEY: reg.signer.publicKey, ...reg.registry.env },
    );
    exited = new Promise((resolve) => pool!.once("exit", (code) => resolve(code)));
    pool.stdout!.on("data", (d) => {
      log += d;
    });
    pool.stderr!.on("data", (d) => {
      log += d;
    });
    url = `http://127.0.0.1:${port}`;
    await until(
      "the pool in the image to be ready",
      () =>
        pool!.exitCode === null
          ? /"msg":"ready"/.test(log) &&
            fetch(`${url}/v2/health/ready`).then(
              (r) => r.status === 200,
              () => false,
            )
          : Promise.reject(new Error(`the container exited ${pool!.exitCode}:\n${log}`)),
      120_000,
    );
    readySeconds = (Date.now() - started) / 1000;
    base = fresh.output.match(/base (localhost\/edgecascade\/base:\S+),/)?.[1] ?? "";
  }, 900_000);

  let url = "";
  let grpcPort = 0;

  afterAll(async () => {
    if (pool && pool.exitCode === null) {
      for (const pid of childPids(pool.pid!)) process.kill(pid, "SIGKILL");
    }
    await reg?.close();
    if (container) execFileSync("buildah", ["rm", container], { stdio: "ignore" });
    // The tags, then the intermediate layers this test's builds made that no tag holds any more: never a tagged
    // image such as the local base (the next run's), whose ID the builds print too.
    const rmi = (ref: string) => {
      try {
        execFileSync("buildah", ["rmi", ref], { stdio: "ignore" });
      } catch {
        // Not built, or already gone with its tag.
      }
    };
    rmi(tag);
    rmi(gpuTag);
    const layers = [...new Set([fresh, rebuilt].flatMap((b) => (b ? layerIds(b.output) : [])))].reverse();
    const untagged = sh("buildah", ["images", "--all", "--no-trunc", "--format", "{{.ID}}|{{.Name}}"])
      .split("\n")
      .filter((line) => line.endsWith("|<none>"))
      .map((line) => line.replace(/^sha256:/, "").split("|")[0]!);
    for (const id of layers) if (untagged.some((full) => full.startsWith(id))) rmi(id);
    if (context) rmSync(context, { recursive: true, force: true });
  });

  it("builds from scratch on the local base, and a code-only change rebuilds only the code's layers", () => {
    const size = sh("buildah", ["images", "--format", "{{.Size}}", tag]);
    const buildSeconds = (b: Build) => b.output.match(/^image: built .* in ([\d.]+) s \(/m)?.[1];
    console.log(
      `image: ${tag} ${size}; from scratch ${buildSeconds(fresh)} s (${fresh.seconds.toFixed(1)} s with the base ` +
        `${base}), code-only rebuild ${buildSeconds(rebuilt)} s, start to ready ${readySeconds.toFixed(1)} s`,
    );
    expect(base).not.toBe("");
    expect(steps(fresh.output).filter((s) => s.cached)).toEqual([]);
    const again = steps(rebuilt.output);
    const cached = (pattern: RegExp) => again.filter((s) => pattern.test(s.step)).map((s) => s.cached);
    expect(cached(/npm ci --omit=dev/)).toEqual([true]);
    expect(cached(/apt-get install -y --no-install-recommends tini/)).toEqual([true]);
    expect(cached(/^COPY --from=deps /)).toEqual([true]);
    expect(cached(/^COPY regional /)).toEqual([false]);
    expect(cached(/^COPY --from=app /)).toEqual([false]);
  });

  it("holds production dependencies only, the code without tests, and is owned so that uid 1000 can read it", () => {
    const app = join(rootfs, "app");
    const modules = new Set(readdirSync(join(app, "node_modules")));
    for (const dep of ["onnxruntime-node", "hono", "@hono", "prom-client", "valibot"]) expect(modules).toContain(dep);
    for (const dev of ["vitest", "wrangler", "@biomejs", "miniflare", "onnxruntime-web"])
      expect(modules).not.toContain(dev);
    expect(readdirSync(join(app, "node_modules/onnxruntime-node/bin/napi-v6"))).toEqual(["linux"]);
    expect(readdirSync(app).sort()).toEqual([
      "hono-shared",
      "node_modules",
      "package.json",
      "protocol",
      "regional",
      "registry",
      "tools",
    ]);
    expect(readdirSync(join(app, "tools"))).toEqual(["cli"]);
    expect(readdirSync(join(app, "regional")).filter((f) => f.endsWith(".test.ts"))).toEqual([]);
    // The changed file is the one in the image.
    expect(readFileSync(join(app, "regional/main.ts"), "utf8")).toMatch(/changed by test\/deploy\/image\.test\.ts\n$/);
    for (const path of [".dev.vars", ".env", ".git", "node_modules/.bin/vitest"]) {
      expect(existsSync(join(app, path)), path).toBe(false);
    }
  });

  it("declares what a Deployment relies on: tini, uid 1000, NODE_ENV=production, the pool's default port", () => {
    const config = imageConfig(tag);
    expect(config.entrypoint).toEqual(["/usr/bin/tini", "--", "node", "regional/main.ts"]);
    expect(config.user).toBe("1000:1000");
    expect(config.workdir).toBe("/app");
    expect(config.env).toContain("NODE_ENV=production");
    const defaults = parseCommandLine([], {});
    if (defaults.help) throw new Error("no options parsed");
    expect(config.exposedPorts).toContain(`${defaults.options.port}/tcp`);
  });

  it("runs tini as PID 1 and Node as uid 1000 on a read-only root", () => {
    const [init] = childPids(pool!.pid!);
    expect(readFileSync(`/proc/${init}/cmdline`, "utf8").split("\0").slice(0, 3)).toEqual([
      "/usr/bin/tini",
      "--",
      "node",
    ]);
    expect(readFileSync(`/proc/${init}/status`, "utf8")).toMatch(/^NSpid:\s+\d+\s+1$/m);
    expect(readFileSync(`/proc/${init}/status`, "utf8")).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
    const root = readFileSync(`/proc/${init}/mountinfo`, "utf8")
      .split("\n")
      .map((l) => l.split(" "))
      .filter((f) => f[4] === "/");
    expect(root.length).toBeGreaterThan(0);
    expect(root.at(-1)![5]!.split(",")).toContain("ro");
  });

  it("answers a held-out row of every model of its registry correctly, signed with the secret from its environment", async () => {
    const models = readdirSync(reg.models.dir).filter((m) => existsSync(join(reg.models.dir, m, "config.json")));
    expect(models.sort()).toEqual(["breast-cancer", "breast-cancer-edge", "digits", "digits-edge"]);
    const answers = models.map(async (model) => {
      const row = heldoutOf(model, `${reg.models.dir}/`).rows.find((r) => argmax(r.expected[model]!) === r.label)!;
      const body = JSON.stringify({ model, inputs: row.input });
      const res = await request(`${url}/v1/classify`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(await signatureHeaders(SECRET, { method: "POST", path: "/v1/classify", body })),
        },
        body,
      });
      const json = (await res.body.json()) as { predictions: { class: number }[]; servedBy: string };
      return {
        model,
        status: res.statusCode,
        class: json.predictions?.[0]?.class,
        label: row.label,
        by: json.servedBy,
      };
    });
    for (const a of await Promise.all(answers)) {
      expect(a, a.model).toEqual({ ...a, status: 200, class: a.label, by: "regional:image" });
    }
    const unsigned = await request(`${url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "digits", inputs: heldoutOf("digits").rows[0]!.input }),
    });
    expect(unsigned.statusCode).toBe(401);
    await unsigned.body.dump();
  });

  it("serves the gRPC service from both workers, with the token derived from the secret in its environment", async () => {
    const row = heldoutOf("digits", `${reg.models.dir}/`).rows.find((r) => argmax(r.expected.digits!) === r.label)!;
    const grpc = grpcClient(grpcPort);
    try {
      const request = {
        model_name: "digits",
        inputs: [{ name: "pixels", datatype: "FP32", shape: [1, 64] }],
        raw_input_contents: [rawFloat32(row.input)],
      };
      const refused = await grpc.call("ModelInfer", request);
      expect(refused.ok).toBe(false);
      const inferred = await grpc.call("ModelInfer", request, {
        metadata: { authorization: `Bearer ${grpcToken(SECRET)}` },
      });
      if (!inferred.ok) throw new Error(`ModelInfer failed: ${JSON.stringify(inferred.error)}`);
      const probs = fromRawFloat32(inferred.value.raw_output_contents[0]);
      expect(probs.indexOf(Math.max(...probs))).toBe(row.label);
    } finally {
      grpc.close();
    }
  });

  it("exposes /metrics in Prometheus' text format", async () => {
    const res = await request(`${url}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const text = await res.body.text();
    expect(metric(text, "edgecascade_execution_provider", { provider: "cpu" })).toBeGreaterThan(0);
    expect(text).toMatch(/^edgecascade_\w+\{[^}]*model="breast-cancer"/m);
  });

  it("drains on SIGTERM to PID 1: every request in flight is answered, then exit 0", async () => {
    const agent = new Agent({ connections: 8 });
    const rows = heldoutOf("digits").rows.slice(0, 6);
    const inFlight = rows.map(async (row) => {
      const body = JSON.stringify({ model: "digits", inputs: row.input });
      const res = await request(`${url}/v1/classify`, {
        method: "POST",
        dispatcher: agent,
        headers: {
          "content-type": "application/json",
          ...(await signatureHeaders(SECRET, { method: "POST", path: "/v1/classify", body })),
        },
        body,
      });
      return { status: res.statusCode, body: (await res.body.json()) as { predictions: { class: number }[] } };
    });
    const pending = async () =>
      metric(await request(`${url}/metrics`).then((r) => r.body.text()), "edgecascade_inference_pending_requests", {
        model: "digits",
      });
    await until(`${rows.length} requests in flight`, async () => (await pending()) === rows.length, 30_000);
    const [init] = childPids(pool!.pid!);
    process.kill(init!, "SIGTERM");
    const answers = await Promise.all(inFlight);
    expect(answers.map((a) => a.status)).toEqual(rows.map(() => 200));
    expect(answers.map((a) => a.body.predictions[0]!.class)).toEqual(rows.map((r) => argmax(r.expected.digits!)));
    expect(await exited, log).toBe(0);
    expect(log).toMatch(/"msg":"drained/);
    await agent.close();
  });

  it("gpu: builds up to onnxruntime-node's CUDA download, and says what it fetches when NuGet is out of reach", async () => {
    const nuget = await fetch("https://api.nuget.org/v3/index.json", { signal: AbortSignal.timeout(5000) }).then(
      () => true,
      () => false,
    );
    const gpu = await image(["--target", "gpu", "--base", "local", "--context", context, "--tag", gpuTag]);
    console.log(
      `image (gpu, NuGet ${nuget ? "reachable" : "unreachable"}):\n${gpu.output.trim().split("\n").slice(-4).join("\n")}`,
    );
    const ran = steps(gpu.output);
    // The production install is the cpu image's, from the cache: only the CUDA step is new.
    expect(ran.filter((s) => /npm ci --omit=dev/.test(s.step)).map((s) => s.cached)).toEqual([true]);
    expect(ran.some((s) => /script\/install\.js/.test(s.step))).toBe(true);
    if (nuget) {
      expect(gpu.output).toMatch(/Extracting runtimes\/linux-x64\/native\/libonnxruntime_providers_cuda\.so/);
    } else {
      expect(gpu.code).toBe(1);
      const version = JSON.parse(
        readFileSync(join(ROOT, "node_modules/onnxruntime-node/package.json"), "utf8"),
      ).version;
      expect(gpu.output).toContain(
        `deps-gpu: could not download onnxruntime-node's CUDA 12 provider from NuGet: this step fetches https://api.nuget.org/v3/index.json and https://api.nuget.org/v3-flatcontainer/microsoft.ml.onnxruntime.gpu.linux/${version}/microsoft.ml.onnxruntime.gpu.linux.${version}.nupkg`,
      );
      expect(gpu.output).toMatch(/image: the build failed/);
    }
  });
});
