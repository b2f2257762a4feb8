// `npm run image -- [--target cpu|gpu] [--base auto|local|IMAGE] [--tag NAME] [--no-cache] [--context DIR]`:
// builds the regional pool's image with buildah (chroot isolation: no Docker engine, no daemon), on the
// Dockerfile's public base when its registry answers and on a base made here otherwise
// (tools/image/local-base.ts). The decisions are tools/image/plan.ts; this file runs them.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineCommand, runMain } from "./cli/command.ts";
import { localBase } from "./image/local-base.ts";
import {
  budArgs,
  chooseBase,
  dockerfileArgs,
  gpuStage,
  IMAGE_DESCRIPTION,
  IMAGE_EPILOG,
  IMAGE_FLAGS,
  IMAGE_USAGE,
  type ImageOptions,
  imageOptions,
  registryHost,
  transientBuildFailure,
} from "./image/plan.ts";
import { runStreaming } from "./image/run.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Whether an image registry answers HTTPS at all (any status: 401 is its usual answer to /v2/). */
async function registryAnswers(host: string | null): Promise<boolean> {
  if (host === null) return true;
  try {
    await fetch(`https://${host}/v2/`, { signal: AbortSignal.timeout(5000) });
    return true;
  } catch {
    return false;
  }
}

function fail(message: string, code = 1): never {
  log(`image: ${message}`);
  process.exit(code);
}

runMain(
  defineCommand({
    name: "image",
    usage: IMAGE_USAGE,
    description: IMAGE_DESCRIPTION,
    epilog: IMAGE_EPILOG,
    flags: IMAGE_FLAGS,
    run: (values) => buildImage(imageOptions(values, ROOT)),
  }),
);

/** Builds the image; a failure prints its reason and exits 1 (`fail`). */
async function buildImage(options: ImageOptions): Promise<number> {
  if (process.getuid?.() !== 0) fail("buildah's chroot builds need root here (run as root, or with sudo)");
  if (spawnSync("/bin/sh", ["-c", "command -v buildah"], { stdio: "ignore" }).status !== 0) {
    fail("buildah is not installed: apt-get install buildah (and debootstrap, for a local base)");
  }

  const dockerfile = join(options.context, "Dockerfile");
  if (!existsSync(dockerfile)) fail(`no Dockerfile in ${options.context}`);
  const args = dockerfileArgs(readFileSync(dockerfile, "utf8"));
  const publicBase = args.BASE;
  if (!publicBase) fail(`${dockerfile} declares no ARG BASE=… before its first FROM`);

  const started = Date.now();
  const publicHost = registryHost(publicBase);
  const base = chooseBase(
    options.base,
    publicBase,
    options.base === "auto" ? await registryAnswers(publicHost) : false,
  );
  if (options.base === "auto") {
    log(
      base.kind === "local"
        ? `image: ${publicHost} (the registry of ${publicBase}) did not answer: building on a local base`
        : `image: base ${publicBase}`,
    );
  }
  const baseRef = base.kind === "local" ? await localBase(log) : base.ref;

  let stage: string = options.target;
  let stopNote: string | undefined;
  if (options.target === "gpu") {
    const cudaImage = args.CUDA_IMAGE ?? "";
    const gpu = gpuStage(await registryAnswers(registryHost(cudaImage)));
    stage = gpu.stage;
    stopNote = gpu.note && `${gpu.note} (${cudaImage} from ${registryHost(cudaImage)})`;
    if (stopNote) log(`image: ${stopNote}`);
  }

  // A TLS-inspecting proxy's CA bundle (this process trusts it through NODE_EXTRA_CA_CERTS) reaches npm inside
  // the build as a secret, never as a layer.
  const caFile = process.env.NODE_EXTRA_CA_CERTS;
  const build = budArgs({
    stage,
    baseRef,
    tag: options.tag,
    context: options.context,
    noCache: options.noCache,
    caFile: caFile && existsSync(caFile) ? caFile : undefined,
  });
  log(`image: buildah ${build.join(" ")}`);
  const buildStarted = Date.now();
  let { code, output } = await runStreaming("buildah", build, { prefix: "  build" });
  const transient = code !== 0 && transientBuildFailure(output);
  if (transient) {
    log(`image: ${transient}; building once more`);
    ({ code, output } = await runStreaming("buildah", build, { prefix: "  build" }));
  }
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  if (code !== 0) fail(`the build failed (buildah exit ${code}) after ${seconds(Date.now() - started)}; see above`);

  const size = spawnSync("buildah", ["images", "--format", "{{.Size}}", options.tag], {
    encoding: "utf8",
  }).stdout.trim();
  log(
    `image: built ${options.tag} (stage ${stage}, base ${baseRef}, ${size}) in ${seconds(Date.now() - buildStarted)}` +
      ` (${seconds(Date.now() - started)} in all)`,
  );
  if (stopNote) fail(`the gpu image itself was not built: ${stopNote}`);
  return 0;
}
