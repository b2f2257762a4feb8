/**
 * Run a buildah-built image as Kubernetes would with `readOnlyRootFilesystem: true`, on a machine without a
 * container runtime: the image's rootfs (`buildah mount`) bind-mounted read-only in a mount and PID namespace
 * of its own (unshare), a tmpfs on /tmp (the Deployment's emptyDir), /proc, a few device nodes, then the
 * image's ENTRYPOINT + CMD as its USER in its WORKDIR with its ENV, so that tini is PID 1. The host's network,
 * as `buildah run` has. Needs root.
 *
 * Why not `buildah run --isolation chroot` on a read-only rootfs: it runs, but buildah 1.28 (Debian bookworm)
 * then fails to remove the /run/.containerenv it made in the rootfs, panics, and exits 2 instead of with the
 * container's status, which a drain test needs.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";

export interface ImageConfig {
  entrypoint: string[];
  cmd: string[];
  user: string;
  workdir: string;
  env: string[];
  /** `EXPOSE`d ports, as `8000/tcp`. */
  exposedPorts: string[];
}

/** The image's run configuration, from `buildah inspect`. */
export function imageConfig(ref: string): ImageConfig {
  const inspected = JSON.parse(execFileSync("buildah", ["inspect", "--type", "image", ref], { encoding: "utf8" }));
  const config = inspected.OCIv1.config ?? {};
  return {
    entrypoint: config.Entrypoint ?? [],
    cmd: config.Cmd ?? [],
    user: config.User ?? "0:0",
    workdir: config.WorkingDir || "/",
    env: config.Env ?? [],
    exposedPorts: Object.keys(config.ExposedPorts ?? {}),
  };
}

// Runs in the new namespaces with the host's /bin/sh; `env -C` (the image's coreutils) enters the WORKDIR,
// then execs the entrypoint in place, keeping PID 1.
const SETUP = `set -eu
root=$1; user=$2; shift 2
mount --bind "$root" "$root"
mount -o remount,bind,ro "$root"
mount -t proc proc "$root/proc"
mount -t tmpfs -o size=64m,mode=1777 tmpfs "$root/tmp"
mount -t tmpfs -o size=1m,mode=755 tmpfs "$root/dev"
for d in null zero full random urandom tty; do touch "$root/dev/$d"; mount --bind "/dev/$d" "$root/dev/$d"; done
exec chroot --userspec="$user" "$root" "$@"`;

/** Start the image's entrypoint with `args` appended to its CMD; the child is `unshare`, its child is PID 1. */
export function runReadOnly(
  rootfs: string,
  config: ImageConfig,
  args: readonly string[],
  env: Record<string, string> = {},
): ChildProcess {
  const environment = [...config.env, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
  return spawn(
    "unshare",
    [
      "--mount",
      "--pid",
      "--fork",
      "/bin/sh",
      "-c",
      SETUP,
      "sh",
      rootfs,
      config.user,
      "/usr/bin/env",
      "-i",
      "-C",
      config.workdir,
      ...environment,
      ...config.entrypoint,
      ...config.cmd,
      ...args,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
}
