/**
 * The local base image, for building where no image registry is reachable: Debian from debootstrap (its
 * tarball cached for the week under /var/cache/edgecascade, checked against its sha256 before each use) plus
 * Node and npm from the npm registry, built with tools/image/local-base.Containerfile. Needs root.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { copyFile, link, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { debianTarballName, isoWeek, type LocalBaseSpec, localBaseTag } from "./plan.ts";
import { runStreaming } from "./run.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const ROOT = join(HERE, "../..");

/** npm in the local base: the npm that Node 24's official image carries is a 11.x too. */
export const NPM_VERSION = "11.19.1";
/** The Debian suite of the public base (node:24-bookworm-slim). */
export const SUITE = "bookworm";
/** EDGECASCADE_IMAGE_CACHE moves it. */
export const CACHE_DIR = process.env.EDGECASCADE_IMAGE_CACHE ?? "/var/cache/edgecascade";
/** EDGECASCADE_DEBIAN_MIRROR overrides debootstrap's mirror. */
const MIRROR = process.env.EDGECASCADE_DEBIAN_MIRROR ?? "http://deb.debian.org/debian";

/** Node 24's exact version, as scripts/node-toolchain.sh installs it. */
export async function toolchainNodeVersion(): Promise<string> {
  const script = await readFile(join(ROOT, "scripts/node-toolchain.sh"), "utf8");
  const version = script.match(/^\s*24\) version=([\d.]+)/m)?.[1];
  if (!version) throw new Error("scripts/node-toolchain.sh names no Node 24 version");
  return version;
}

async function sha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  return hash.digest("hex");
}

async function must(what: string, ran: Promise<{ code: number; output: string }>): Promise<string> {
  const { code, output } = await ran;
  if (code !== 0) throw new Error(`${what} failed (exit ${code}); its output is above`);
  return output;
}

/**
 * A cached file's sha256 when the file and `<file>.sha256` are both there and agree; null otherwise (missing,
 * cut short, altered), and the caller makes it again.
 */
export async function verifiedCacheEntry(path: string): Promise<string | null> {
  if (!existsSync(path) || !existsSync(`${path}.sha256`)) return null;
  const expected = (await readFile(`${path}.sha256`, "utf8")).trim();
  const actual = await sha256(path);
  return actual === expected ? actual : null;
}

export interface DebianTarball {
  path: string;
  sha256: string;
  /** Whether it came from the cache. */
  cached: boolean;
}

/**
 * This week's debootstrap tarball: from the cache when it is there and matches the sha256 written beside it;
 * otherwise made (debootstrap, about 30 s to 1 min) and written to the cache atomically, older weeks removed.
 */
export async function debianTarball(spec: LocalBaseSpec, log: (line: string) => void): Promise<DebianTarball> {
  const dir = join(CACHE_DIR, "debian");
  const path = join(dir, debianTarballName(spec));
  const verified = await verifiedCacheEntry(path);
  if (verified) {
    log(`image: Debian ${spec.suite} minbase from the cache (${path}, sha256 ${verified.slice(0, 12)} verified)`);
    return { path, sha256: verified, cached: true };
  }
  if (existsSync(path)) log(`image: the cached ${path} does not match its sha256: making it again`);
  await mkdir(dir, { recursive: true });
  const rootfs = await mkdtemp(join(dir, ".rootfs-"));
  const partial = `${path}.${process.pid}.partial`;
  try {
    log(`image: debootstrap --variant=minbase ${spec.suite} from ${MIRROR} (about a minute)`);
    await must(
      "debootstrap",
      runStreaming("debootstrap", ["--variant=minbase", spec.suite, rootfs, MIRROR], { prefix: "  debootstrap" }),
    );
    // Device nodes, the downloaded .debs and apt's lists stay out: a container gets its own /dev, and the
    // image's apt-get update fetches current lists.
    await must(
      "tar",
      runStreaming(
        "tar",
        [
          "-C",
          rootfs,
          "--numeric-owner",
          "--exclude=./dev/*",
          "--exclude=./proc/*",
          "--exclude=./sys/*",
          "--exclude=./var/cache/apt/*",
          "--exclude=./var/lib/apt/lists/*",
          "-cf",
          partial,
          ".",
        ],
        { prefix: "  tar" },
      ),
    );
    const digest = await sha256(partial);
    await writeFile(`${partial}.sha256`, `${digest}\n`);
    await rename(partial, path);
    await rename(`${partial}.sha256`, `${path}.sha256`);
    for (const old of await readdir(dir)) {
      if (old.startsWith(`${spec.suite}-minbase-`) && !old.startsWith(debianTarballName(spec))) {
        await rm(join(dir, old), { force: true });
      }
    }
    log(`image: cached ${path} (sha256 ${digest.slice(0, 12)})`);
    return { path, sha256: digest, cached: false };
  } finally {
    await rm(rootfs, { recursive: true, force: true });
    await rm(partial, { force: true });
    await rm(`${partial}.sha256`, { force: true });
  }
}

async function imageExists(ref: string): Promise<boolean> {
  const { code } = await runStreaming("buildah", ["inspect", "--type", "image", ref], {
    prefix: "",
    print: () => {},
  });
  return code === 0;
}

/**
 * Last week's bases (and those for another Node or npm) go once a new one is made, so that a CI machine keeps
 * one. An image still used by a container stays (buildah refuses), and goes next time.
 */
async function removeOtherBases(keep: string, log: (line: string) => void): Promise<void> {
  const listed = await runStreaming(
    "buildah",
    ["images", "--format", "{{.Name}}:{{.Tag}}", "--filter", `reference=${keep.slice(0, keep.lastIndexOf(":"))}`],
    { prefix: "", print: () => {} },
  );
  for (const old of listed.output.split("\n").map((l) => l.trim())) {
    if (!old || old === keep) continue;
    const removed = await runStreaming("buildah", ["rmi", old], { prefix: "", print: () => {} });
    if (removed.code === 0) log(`image: removed the older local base ${old}`);
  }
}

/** The local base image's name, made (from the cached tarball) when buildah's storage lacks it. */
export async function localBase(log: (line: string) => void, now = new Date()): Promise<string> {
  const spec: LocalBaseSpec = {
    suite: SUITE,
    week: isoWeek(now),
    node: await toolchainNodeVersion(),
    npm: NPM_VERSION,
  };
  const tarball = await debianTarball(spec, log);
  const tag = localBaseTag(spec, tarball.sha256);
  if (await imageExists(tag)) {
    log(`image: local base ${tag} (already built)`);
    return tag;
  }
  log(`image: making the local base ${tag}`);
  const context = await mkdtemp(join(tmpdir(), "edgecascade-base-"));
  try {
    await link(tarball.path, join(context, "debian.tar")).catch(() =>
      copyFile(tarball.path, join(context, "debian.tar")),
    );
    const nodeBin = (
      await must(
        "scripts/node-toolchain.sh",
        runStreaming("bash", [join(ROOT, "scripts/node-toolchain.sh"), "24"], { prefix: "  node", print: () => {} }),
      )
    )
      .trim()
      .split("\n")
      .at(-1)!;
    await copyFile(join(nodeBin, "node"), join(context, "node"));
    // Outside the repository, so that its .npmrc plays no part.
    await must(
      "npm install npm",
      runStreaming(
        "npm",
        ["install", "--global", "--prefix", join(context, "npm"), "--no-audit", "--no-fund", `npm@${spec.npm}`],
        { prefix: "  npm", cwd: context },
      ),
    );
    await copyFile(join(HERE, "debian.sources"), join(context, "debian.sources"));
    await copyFile(join(HERE, "local-base.Containerfile"), join(context, "Containerfile"));
    await must(
      "buildah bud (local base)",
      runStreaming("buildah", ["bud", "--isolation", "chroot", "--tag", tag, context], { prefix: "  base" }),
    );
    await removeOtherBases(tag, log);
    return tag;
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
