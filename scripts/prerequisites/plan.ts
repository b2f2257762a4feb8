/** A system program the test suites need, and the Debian package that provides it. */
export interface Prerequisite {
  /** What to look for on PATH. */
  command: string;
  /** The Debian package that installs it. */
  debianPackage: string;
  /** Which suites need it, for the message. */
  usedBy: string;
  /** Needed only when running as root (what uses it skips otherwise), so never asked of other users. */
  rootOnly?: boolean;
}

/** What each command needs beyond Node and npm (README, Testing and Benchmarks). */
export const PREREQUISITES = {
  test: [
    { command: "chromium", debianPackage: "chromium", usedBy: "the demo page end-to-end test (headless)" },
    { command: "promtool", debianPackage: "prometheus", usedBy: "the metrics format and alerting rule tests" },
    // The image test builds and runs the image with buildah and namespaces: as root only.
    { command: "buildah", debianPackage: "buildah", usedBy: "the container image test", rootOnly: true },
    { command: "debootstrap", debianPackage: "debootstrap", usedBy: "the image test's local base", rootOnly: true },
    {
      command: "amtool",
      debianPackage: "prometheus-alertmanager",
      usedBy: "the Alertmanager config test and the docs run (amtool check-config)",
    },
  ],
  bench: [{ command: "wrk", debianPackage: "wrk", usedBy: "npm run bench:regional" }],
  probe: [{ command: "hey", debianPackage: "hey", usedBy: "npm run validate:probe (the reference client)" }],
} as const satisfies Record<string, readonly Prerequisite[]>;

/** What to do about the missing prerequisites. */
export type PrerequisitePlan =
  | { action: "none" }
  | { action: "install"; command: string[]; packages: string[] }
  | { action: "ask"; message: string };

/**
 * Decide from what is missing and who we are: nothing to do; install with apt when root on Debian; otherwise
 * a message that names every missing program (but those needed only as root) and the one command that installs
 * them all.
 */
export function prerequisitePlan(
  allMissing: readonly Prerequisite[],
  host: { isRoot: boolean; hasApt: boolean },
): PrerequisitePlan {
  const missing = allMissing.filter((p) => host.isRoot || !p.rootOnly);
  if (missing.length === 0) return { action: "none" };
  const packages = [...new Set(missing.map((p) => p.debianPackage))];
  const aptInstall = ["apt-get", "install", "-y", "--no-install-recommends", ...packages];
  if (host.isRoot && host.hasApt) return { action: "install", command: aptInstall, packages };
  const lines = missing.map((p) => `  ${p.command} (Debian package ${p.debianPackage}) for ${p.usedBy}`);
  const how = host.hasApt
    ? `Install them with:\n  sudo apt-get update && sudo ${aptInstall.join(" ")}`
    : `Install the packages ${packages.join(", ")} with your system's package manager.`;
  return { action: "ask", message: `Programs missing from PATH:\n${lines.join("\n")}\n${how}` };
}

/** Whether a suite that needs root (`rootOnly` programs: the image suite) runs, is skipped, or fails. */
export type RootSuitePlan = { action: "run" } | { action: "skip"; reason: string } | { action: "fail"; reason: string };

/**
 * A root-only suite runs as root with its programs there. As root without them it fails, naming them: `npm test`
 * installs them as root, so their absence is a broken setup, never a reason to skip. Not root, it is skipped,
 * saying why; except in CI (`CI` set), which runs as root: there a run that would skip it fails instead.
 */
export function rootSuitePlan(
  suite: string,
  missing: readonly Prerequisite[],
  host: { isRoot: boolean; ci: boolean },
): RootSuitePlan {
  if (!host.isRoot) {
    const why = `${suite} needs root (buildah, namespaces); this run is not root`;
    return host.ci
      ? { action: "fail", reason: `${why}, and CI must run it (CI runs as root)` }
      : { action: "skip", reason: why };
  }
  const absent = missing.filter((p) => p.rootOnly);
  if (absent.length === 0) return { action: "run" };
  const names = absent.map((p) => `${p.command} (Debian package ${p.debianPackage})`).join(", ");
  return {
    action: "fail",
    reason: `${suite} runs as root, and ${names} ${absent.length === 1 ? "is" : "are"} missing: \`npm test\` installs them as root (scripts/prerequisites.ts)`,
  };
}
