/**
 * The rehearsal's last step: the synthetic probe, as the scheduled probe on the monitoring host sends it (its
 * key, EDGECASCADE_API_KEY), against `npm start`'s local stack (scripts/start.ts, run as a command) carrying the
 * environment's secrets: API_KEYS on the Worker, REGIONAL_SHARED_SECRET on the Worker and the pools, and the
 * Worker's MODEL_PUBLIC_KEY if the secrets give one. A probe key that is not one of API_KEYS, or one that may
 * not call the probed model, fails here instead of paging as EdgecascadeProbeErrors after the real deploy.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { mayCall, parseTenantKeys } from "../../../edge/tenants/keys.ts";
import { MODELS_DIR, ROOT } from "../../edge-bundle/build-edge.ts";
import { readRepository } from "../../edge-bundle/edge-models.ts";
import { startLocalStack } from "../../local-stack/npm-start.ts";

const run = promisify(execFile);
/** The model the probe sends rows of (its default). */
export const PROBED_MODEL = "digits";

/**
 * Whether the probe's key opens the Worker: one of API_KEYS, allowed to call the probed model. Returns a
 * problem, or undefined. Without API_KEYS anyone may call (the secrets check has said so already).
 */
export function probeKeyProblem(apiKeys: string | undefined, probeKey: string | undefined): string | undefined {
  const keys = parseTenantKeys(
    apiKeys,
    readRepository(MODELS_DIR).map((m) => m.config.name),
  );
  if (keys.length === 0) return undefined;
  if (!probeKey) {
    return "EDGECASCADE_API_KEY, the probe's key, is not set: the scheduled probe would send no key and get 401 on every request";
  }
  const entry = keys.find((k) => k.key === probeKey);
  if (!entry) {
    return "EDGECASCADE_API_KEY is not one of API_KEYS: the scheduled probe would get 401 on every request (EdgecascadeProbeErrors)";
  }
  if (!mayCall(entry.models, PROBED_MODEL)) {
    return `EDGECASCADE_API_KEY may not call ${PROBED_MODEL}, the model the probe sends: it would get 403 on every request`;
  }
  return undefined;
}

export interface LocalProbeResult {
  sent: number;
  completed: number;
  errors: number;
  errorSamples: string[];
}

/** The probe's summary of a short run against the local stack with these secrets. */
export async function probeLocalStack(
  secrets: Readonly<Record<string, string>>,
  probeKey: string | undefined,
  durationS: number,
  note: (line: string) => void,
): Promise<LocalProbeResult> {
  const stackEnv: Record<string, string> = {
    REGIONAL_SHARED_SECRET: secrets.REGIONAL_SHARED_SECRET ?? randomBytes(24).toString("hex"),
    ADMIN_TOKEN: randomBytes(24).toString("hex"),
    WARM_UP: "false",
    WRANGLER_SEND_METRICS: "false",
    ...(secrets.API_KEYS ? { EDGE_API_KEYS: secrets.API_KEYS } : {}),
    ...(secrets.MODEL_PUBLIC_KEY ? { EDGE_MODEL_PUBLIC_KEY: secrets.MODEL_PUBLIC_KEY } : {}),
  };
  note("$ npm start   (the local stack, with the environment's API_KEYS, REGIONAL_SHARED_SECRET and MODEL_PUBLIC_KEY)");
  const stack = await startLocalStack(stackEnv);
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-rehearsal-probe-"));
  try {
    const args = ["--url", stack.edgeUrl, "--duration", `${durationS}`, "--rate", "20", "--json"];
    note(`$ npm run probe -- ${args.join(" ")}   (EDGECASCADE_API_KEY: the probe's key)`);
    const { stdout } = await run(
      process.execPath,
      [
        join(ROOT, "tools/probe.ts"),
        ...args,
        "--report",
        join(dir, "report.html"),
        "--floor-duration",
        "0",
        "--warmup",
        "0",
      ],
      { cwd: ROOT, env: { ...process.env, EDGECASCADE_API_KEY: probeKey ?? "" }, maxBuffer: 16 * 1024 * 1024 },
    ).catch((err: { stdout?: string; message: string }) => {
      // The probe's exit code says whether the p95 target held; its JSON says what was answered.
      if (err.stdout?.trim().startsWith("{")) return { stdout: err.stdout };
      throw new Error(`the probe failed: ${err.message}`);
    });
    const summary = JSON.parse(stdout) as LocalProbeResult;
    return {
      sent: summary.sent,
      completed: summary.completed,
      errors: summary.errors,
      errorSamples: summary.errorSamples,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await stack.stop();
  }
}
