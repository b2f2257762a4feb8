import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseModelConfig } from "../../../protocol/model-config.ts";
import { importModelPublicKey, isPublicKeyText } from "../../../protocol/model-signature.ts";
import { RefusedError, type Subcommand, UsageError } from "../cli.ts";
import { REPO_MODELS, VERSION_FLAGS } from "../repository-flags.ts";
import { budgetsFor } from "./budgets.ts";
import { evaluateGates, gatesTable } from "./gates.ts";
import { measureVersion } from "./measure.ts";
import { gatesRecord, withGatesRecord } from "./record.ts";

const USAGE = `Usage: npm run model -- check --name NAME --version V [options]

The release gates of one model version, against its held-out fixture and the version config.json serves:
checksum, signature (given a key), load, schema, the pools' fixture check, accuracy within the tolerance of
the served version, label agreement with it, size, per-row latency p50/p99 in onnxruntime-node (and, for
an edge variant NAME-edge, in onnxruntime-web), and an energy estimate per prediction (CPU time per row x
the budgets' wattsPerCore). Budgets come from the config's "budgets" (docs/model-tool.md lists the
defaults). Prints a pass/fail table; exits 1 when a gate fails. The result is recorded in the version's
config entry ("gates", with the file's sha256): a rollout (npm run rollout -- start) refuses a version
without a passing record for that exact file.

  --name NAME              the model (an edge variant is NAME-edge)
  --version V              the candidate version
  --samples N              one-row runs per runtime for the latencies (default 2000)
  --model-public-key KEY   also verify the file's signature (default: $MODEL_PUBLIC_KEY; unset: not checked)
  --models DIR             model repository (default: this repository's models/)
  --dry-run                print the table, record nothing`;

export const checkCommand: Subcommand = {
  name: "check",
  summary: "release gates of a version (accuracy, agreement, latency, size, energy estimate), recorded for rollouts",
  usage: USAGE,
  async run(argv, out) {
    let values: Record<string, string | boolean | undefined>;
    try {
      values = parseArgs({
        args: argv,
        options: {
          ...VERSION_FLAGS,
          samples: { type: "string" },
          "model-public-key": { type: "string" },
          "dry-run": { type: "boolean" },
        },
        strict: true,
      }).values;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const name = values.name as string | undefined;
    const version = values.version as string | undefined;
    if (!name || !version) throw new UsageError("--name and --version are required");
    const samples = values.samples === undefined ? 2000 : Number(values.samples);
    if (!Number.isInteger(samples) || samples < 100 || samples > 1_000_000) {
      throw new UsageError(`--samples must be an integer from 100 to 1000000, got "${values.samples}"`);
    }
    const keyText = (values["model-public-key"] as string | undefined) ?? (process.env.MODEL_PUBLIC_KEY || undefined);
    if (keyText !== undefined && !isPublicKeyText(keyText)) {
      throw new UsageError("--model-public-key (MODEL_PUBLIC_KEY) must be base64 of a 32-byte Ed25519 public key");
    }
    const modelsDir = (values.models as string | undefined) ?? REPO_MODELS;
    const configPath = join(modelsDir, name, "config.json");
    const text = await readFile(configPath, "utf8").catch((err: Error) => {
      throw new RefusedError(`cannot read ${configPath}: ${err.message}`);
    });
    const raw = JSON.parse(text);
    const config = parseModelConfig(raw, configPath);
    if (!config.versions[version]) {
      throw new RefusedError(
        `${name} has no version ${version}; config.json lists ${Object.keys(config.versions).join(", ")}`,
      );
    }

    const measured = await measureVersion({
      modelsDir,
      config,
      version,
      samples,
      ...(keyText ? { publicKey: await importModelPublicKey(keyText) } : {}),
    });
    const rows = evaluateGates(measured, budgetsFor(config), !!config.standsFor);
    const record = gatesRecord(rows, measured.file.sha256, config.version, new Date());
    out.log(`${name} version ${version} against version ${config.version} (served):`);
    out.log(gatesTable(rows));
    out.log(record.passed ? "all gates passed" : `${rows.filter((r) => !r.passed).length} gate(s) failed`);
    if (!values["dry-run"]) {
      await writeFile(configPath, `${JSON.stringify(withGatesRecord(raw, version, record), null, 2)}\n`);
      out.note(`recorded in ${configPath} (versions.${version}.gates, sha256 ${measured.file.sha256.slice(0, 12)}…)`);
    }
    return record.passed ? 0 : 1;
  },
};
