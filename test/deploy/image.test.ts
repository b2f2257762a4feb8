import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signatureHeaders } from "../../protocol/signing.ts";
import { grpcToken } from "../../regional/grpc/auth.ts";
import { parseCommandLine } from "../../regional/options.ts";
import { ROOT } from "../../scripts/stack/build-edge.ts";
import {
  APT,
  commandOf,
  dockerignorePatterns,
  envPairs,
  isIgnored,
  parseDockerfile,
  replay,
  type Stage,
} from "../support/dockerfile.ts";
import { fromRawFloat32, grpcClient, rawFloat32 } from "../support/grpc-client.ts";
import { heldout } from "../support/heldout.ts";
import { freePort } from "../support/processes.ts";
import { until } from "../support/regional-process.ts";

const dockerfile = parseDockerfile(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
const ignore = dockerignorePatterns(readFileSync(join(ROOT, ".dockerignore"), "utf8"));
const stage = (name: string): Stage => {
  const found = dockerfile.stages.find((s) => s.name === name);
  if (!found) throw new Error(`Dockerfile has no stage ${name}`);
  return found;
};
const ops = (s: Stage, op: string) => s.instructions.filter((i) => i.op === op);
const last = (s: Stage, op: string) => ops(s, op).at(-1)?.args;

function installed(pkg: string): boolean {
  try {
    // dpkg-query's own format syntax, not a template placeholder.
    const format = "-f=$" + "{Status}";
    return execFileSync("dpkg-query", ["-W", format, pkg], { encoding: "utf8" }).includes("ok installed");
  } catch {
    return false;
  }
}

const tmp = mkdtempSync(join(tmpdir(), "edgecascade-image-"));
chmodSync(tmp, 0o755);
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(tmp, { recursive: true, force: true });
});

describe("Dockerfile", () => {
  it("builds cpu by default (the last stage) and gpu as a target, both running the pool under tini", () => {
    expect(dockerfile.stages.at(-1)!.name).toBe("cpu");
    for (const target of ["cpu", "gpu"]) {
      const s = stage(target);
      expect(commandOf(last(s, "ENTRYPOINT")!)).toEqual(["/usr/bin/tini", "--", "node", "regional/main.ts"]);
      expect(ops(s, "RUN").some((r) => APT.exec(r.args)?.[1]?.split(/\s+/).includes("tini"))).toBe(true);
      // Numeric and not root, so that runAsNonRoot can check it.
      expect(last(s, "USER")).toMatch(/^[1-9]\d*:[1-9]\d*$/);
      expect(envPairs(last(s, "ENV")!).NODE_ENV).toBe("production");
      const defaults = parseOptions([]);
      expect(last(s, "EXPOSE")).toBe(`${defaults.port} ${defaults.grpcPort}`);
      expect(ops(s, "COPY").map((c) => `${c.flags.from} ${c.args}`)).toEqual(
        expect.arrayContaining([
          `deps${target === "gpu" ? "-gpu" : ""} /app/node_modules ./node_modules`,
          "app /app ./",
        ]),
      );
    }
    expect(dockerfile.globalArgs.NODE_IMAGE).toMatch(/^node:24-/);
  });

  it("gives the gpu target onnxruntime-node's CUDA provider and --ep cuda, and otherwise the same install", () => {
    const cpuRuns = ops(stage("deps"), "RUN").map((r) => r.args);
    const gpuRuns = ops(stage("deps-gpu"), "RUN").map((r) => r.args);
    expect(gpuRuns[0]).toBe(`ONNXRUNTIME_NODE_INSTALL=cuda12 ${cpuRuns[0]}`);
    expect(gpuRuns[1]).toMatch(/test -f .*libonnxruntime_providers_cuda\.so$/);
    expect(gpuRuns.slice(2)).toEqual(cpuRuns.slice(1));
    expect(parseOptions(commandOf(last(stage("gpu"), "CMD")!)).ep).toBe("cuda");
    expect(dockerfile.globalArgs.CUDA_IMAGE).toMatch(/^nvidia\/cuda:12\.[\d.]+-cudnn-runtime-/);
  });

  it("sends only what the image needs: no tests, secrets, node_modules or git", () => {
    for (const path of ["regional/main.ts", "protocol/signing.ts", "models/digits/config.json", "package-lock.json"]) {
      expect(isIgnored(path, ignore), path).toBe(false);
    }
    for (const path of [
      "regional/options.test.ts",
      ".dev.vars",
      ".env",
      "node_modules/hono/package.json",
      ".git/HEAD",
    ]) {
      expect(isIgnored(path, ignore), path).toBe(true);
    }
  });

  it("replayed here (production install, then start as the image's user): ready, answers, drains on SIGTERM", async () => {
    const image = replay(dockerfile, "cpu", { context: ROOT, ignore, into: tmp });
    const app = join(image.root, image.workdir);
    for (const pkg of image.systemPackages) {
      expect(installed(pkg), `Debian package ${pkg} (the image installs it; .ci/run does here)`).toBe(true);
    }

    // Production dependencies only, and none of the pruned binaries.
    const modules = new Set(readdirSync(join(app, "node_modules")));
    for (const dep of ["onnxruntime-node", "hono", "@hono", "prom-client", "valibot"]) expect(modules).toContain(dep);
    // (typescript is there: valibot declares it as a peer dependency.)
    for (const dev of ["vitest", "wrangler", "tsx", "@biomejs", "miniflare", "@install-binary", "onnxruntime-web"]) {
      expect(modules).not.toContain(dev);
    }
    expect(readdirSync(join(app, "node_modules/onnxruntime-node/bin/napi-v6"))).toEqual(["linux"]);
    expect(readdirSync(app).sort()).toEqual(["models", "node_modules", "package.json", "protocol", "regional"]);
    expect(readdirSync(join(app, "regional")).filter((f) => f.endsWith(".test.ts"))).toEqual([]);

    const port = await freePort();
    const grpcPort = await freePort();
    const secret = "image-test-secret";
    const [uid, gid] = image.user!.split(":").map(Number);
    const [program, ...args] = [...image.entrypoint, ...image.cmd];
    // The image's node (its base image's /usr/local/bin/node) is the one running this test: a copy, as the
    // test's own may sit where the image's user cannot reach it (root's cache of scripts/node-toolchain.sh),
    // and a PATH lookup would then quietly find another (the system's older) node.
    const nodeDir = join(image.root, "usr/local/bin");
    mkdirSync(nodeDir, { recursive: true });
    copyFileSync(process.execPath, join(nodeDir, "node"));
    chmodSync(join(nodeDir, "node"), 0o755);
    // As the container would run: the image's user (when this test may switch to it), no flags but the ones
    // a Deployment passes, the secret from the environment.
    const pool = spawn(
      program!,
      [
        ...args,
        ...["--port", String(port), "--grpc-port", String(grpcPort), "--host", "127.0.0.1"],
        ...["--workers", "2", "--region", "image"],
      ],
      {
        cwd: app,
        env: { PATH: `${nodeDir}:${process.env.PATH}`, ...image.env, REGIONAL_SHARED_SECRET: secret },
        stdio: ["ignore", "pipe", "pipe"],
        ...(process.getuid?.() === 0 ? { uid, gid } : {}),
      },
    );
    children.push(pool);
    let log = "";
    pool.stdout!.on("data", (d) => {
      log += d;
    });
    pool.stderr!.on("data", (d) => {
      log += d;
    });
    const base = `http://127.0.0.1:${port}`;
    // Ready as docs/regional.md defines it: the primary's "ready" line (every worker ready), and the endpoint.
    await until(
      "the pool to be ready",
      () =>
        pool.exitCode === null
          ? /"msg":"ready"/.test(log) &&
            fetch(`${base}/v2/health/ready`).then(
              (r) => r.status === 200,
              () => false,
            )
          : Promise.reject(new Error(`the pool exited ${pool.exitCode}:\n${log}`)),
      90_000,
    );

    const row = heldout.rows.find((r) => r.label === 7)!;
    const body = JSON.stringify({ model: "digits", inputs: row.input });
    const answer = await fetch(`${base}/v1/classify`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(await signatureHeaders(secret, { method: "POST", path: "/v1/classify", body })),
      },
      body,
    });
    expect(answer.status).toBe(200);
    const json = (await answer.json()) as { predictions: { class: number }[]; servedBy: string };
    expect(json.predictions[0]!.class).toBe(row.label);
    expect(json.servedBy).toBe("regional:image");
    // The secret from the environment is enforced.
    const unsigned = await fetch(`${base}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(unsigned.status).toBe(401);
    // The gRPC service, from both workers on their shared port, with the token derived from the secret.
    const grpc = grpcClient(grpcPort);
    const request = {
      model_name: "digits",
      inputs: [{ name: "pixels", datatype: "FP32", shape: [1, 64] }],
      raw_input_contents: [rawFloat32(row.input)],
    };
    const inferred = await grpc.call("ModelInfer", request, {
      metadata: { authorization: `Bearer ${grpcToken(secret)}` },
    });
    grpc.close();
    expect(inferred.ok).toBe(true);
    if (inferred.ok) {
      const probs = fromRawFloat32(inferred.value.raw_output_contents[0]);
      expect(probs.indexOf(Math.max(...probs))).toBe(row.label);
    }

    // tini passes SIGTERM to Node, which drains (readiness false, requests answered) and exits 0.
    const exited = new Promise<number | null>((resolve) => pool.once("exit", (code) => resolve(code)));
    pool.kill("SIGTERM");
    expect(await exited, log).toBe(0);
    expect(log).toMatch(/"msg":"drained/);
  });
});

function parseOptions(argv: string[]) {
  const parsed = parseCommandLine(argv, {});
  if (parsed.help) throw new Error("--help");
  return parsed.options;
}

describe("Dockerfile reader", () => {
  it("joins continuations, drops comments, substitutes global ARGs and reads flags", () => {
    const file = parseDockerfile(
      [
        "# syntax=docker/dockerfile:1",
        "ARG BASE=node:24-slim",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile syntax, not a template
        "FROM ${BASE} AS build",
        "RUN apt-get update \\",
        "    # a comment inside a continuation",
        "    && apt-get install -y tini",
        "COPY --from=build --chown=1000:1000 /app/x ./y",
        'ENV A=1 B="two words"',
        "FROM build",
        'CMD ["--ep", "cuda"]',
      ].join("\n"),
    );
    expect(file.globalArgs).toEqual({ BASE: "node:24-slim" });
    expect(file.stages.map((s) => [s.name, s.from])).toEqual([
      ["build", "node:24-slim"],
      ["1", "build"],
    ]);
    const [run, copy, env] = file.stages[0]!.instructions;
    expect(run).toEqual({ op: "RUN", args: "apt-get update && apt-get install -y tini", flags: {} });
    expect(copy).toEqual({ op: "COPY", args: "/app/x ./y", flags: { from: "build", chown: "1000:1000" } });
    expect(envPairs(env!.args)).toEqual({ A: "1", B: "two words" });
    expect(commandOf(file.stages[1]!.instructions[0]!.args)).toEqual(["--ep", "cuda"]);
    expect(commandOf("npm ci")).toEqual(["/bin/sh", "-c", "npm ci"]);
    expect(() => parseDockerfile("RUN true")).toThrow(/RUN before the first FROM/);
  });

  it("matches .dockerignore patterns as Docker does: last match wins, parents count, dot files too", () => {
    const patterns = ["**", "!src", "!src/**", "**/*.test.ts", "src/tmp?", "!src/tmp1"];
    expect(isIgnored("src/a.ts", patterns)).toBe(false);
    expect(isIgnored("src/deep/a.ts", patterns)).toBe(false);
    expect(isIgnored("src/deep/a.test.ts", patterns)).toBe(true);
    expect(isIgnored("src/tmp2/file", patterns)).toBe(true);
    expect(isIgnored("src/tmp1/file", patterns)).toBe(false);
    expect(isIgnored(".env", patterns)).toBe(true);
    expect(isIgnored("other/a.ts", patterns)).toBe(true);
    expect(isIgnored("a.ts", ["*.ts"])).toBe(true);
    expect(isIgnored("dir/a.ts", ["*.ts"])).toBe(false);
  });
});
