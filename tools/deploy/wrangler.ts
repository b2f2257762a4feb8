/**
 * wrangler as `npm run deploy` runs it: the pinned one in node_modules, in the project root, each command line
 * printed first. Its output is progress, so it goes to stderr: stdout is left for what the deploy answers (the
 * new version's ID, the dry run's commands).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../edge-bundle/build-edge.ts";
import { shellLine } from "./plan.ts";

const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

export interface Wrangler {
  /** Run with the output shown; rejects on a non-zero exit. */
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<void>;
  /** Run and return stdout; rejects on a non-zero exit. */
  read(args: string[]): Promise<string>;
  /** Run and return the exit code and both outputs, whatever the exit. */
  capture(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

export const wrangler: Wrangler = {
  run: (args, env) => exec(args, "show", env).then(() => undefined),
  read: (args) => exec(args, "read").then(({ code, stdout }) => (code === 0 ? stdout : failed(args, code))),
  capture: (args) => exec(args, "capture"),
};

function failed(args: string[], code: number): never {
  throw new Error(`wrangler ${args[0]} failed (exit ${code})`);
}

function exec(
  args: string[],
  output: "show" | "read" | "capture",
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  console.error(`$ wrangler ${shellLine(args)}`);
  return new Promise((resolve, reject) => {
    const child = spawn(WRANGLER, args, {
      cwd: ROOT,
      // "show": both of wrangler's outputs to our stderr; "read": its stdout to us, its stderr shown.
      stdio: ["inherit", output === "show" ? process.stderr : "pipe", output === "capture" ? "pipe" : process.stderr],
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (output === "show" && code !== 0) {
        reject(new Error(`wrangler ${args[0]} failed (${signal ?? `exit ${code}`})`));
      } else resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}
