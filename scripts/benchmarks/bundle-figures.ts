import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { generateModels, ROOT, wranglerBuild } from "../../tools/edge-bundle/build-edge.ts";

/**
 * The Worker bundle of a model repository as Cloudflare would take it: its size (what `wrangler deploy` uploads,
 * raw and gzip, against the 64 MiB script limit) and its start-up CPU (`wrangler check startup`: the global
 * scope run locally under V8's profiler, against the 1 s start-up limit). bench:cold and bench:many-models.
 */

/**
 * `wrangler check startup` of the bundle of `modelsDir` as deployed (its models module generated first): the
 * profile's active ms.
 */
export async function checkStartup(modelsDir: string, outdir: string): Promise<{ activeMs: number; output: string }> {
  const config = await generateModels(modelsDir, outdir, "deployed");
  const output = await new Promise<string>((done, fail) =>
    execFile(
      join(ROOT, "node_modules/.bin/wrangler"),
      ["check", "startup", `--args=${config.join(" ")}`, "--outfile", join(ROOT, ".build/worker-startup.cpuprofile")],
      { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" }, maxBuffer: 64 * 2 ** 20 },
      (err, stdout, stderr) =>
        err ? fail(new Error(`wrangler check startup: ${stderr || err.message}`)) : done(stdout),
    ),
  );
  const active = /Active: ([\d.]+) ms/.exec(output)?.[1];
  if (!active) throw new Error(`wrangler check startup printed no "Active:" line:\n${output}`);
  return { activeMs: Number(active), output: output.slice(output.indexOf("Bundle:")).trim() };
}

export interface BundleSize {
  /** Modules uploaded (worker.js, the wasm, one `.onnx` per edge variant). */
  files: number;
  edgeVariants: number;
  rawBytes: number;
  gzipBytes: number;
  /** The generated module of configs and demo rows, inside worker.js. */
  workerJsBytes: number;
}

/** Build the bundle of `modelsDir` into `outdir` (`wrangler deploy --dry-run`) and measure what it uploads. */
export async function bundleSize(modelsDir: string, outdir: string): Promise<BundleSize> {
  await wranglerBuild(outdir, undefined, modelsDir);
  const size: BundleSize = { files: 0, edgeVariants: 0, rawBytes: 0, gzipBytes: 0, workerJsBytes: 0 };
  for (const file of readdirSync(outdir)) {
    if (file.endsWith(".map") || file === "README.md") continue;
    const bytes = readFileSync(join(outdir, file));
    size.files++;
    size.rawBytes += bytes.length;
    size.gzipBytes += gzipSync(bytes).length;
    if (file.endsWith(".onnx")) size.edgeVariants++;
    if (file === "worker.js") size.workerJsBytes = bytes.length;
  }
  return size;
}
