import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseModelConfig } from "../../../protocol/model-config.ts";
import { importModelPublicKey, isPublicKeyText } from "../../../protocol/model-signature.ts";
import { defineCommand } from "../../cli/command.ts";
import { RefusedError, UsageError } from "../../cli/errors.ts";
import { writeConfig } from "../config-file.ts";
import { MODELS_FLAG } from "../repository-flags.ts";
import { budgetsFor } from "./budgets.ts";
import { evaluateGates, gatesTable } from "./gates.ts";
import { measureVersion, type RunClocks, THREAD_CLOCKS } from "./measure.ts";
import { gatesRecord, withGatesRecord } from "./record.ts";

const DESCRIPTION = `The release gates of one model version, against its held-out fixture and the version config.json serves:
checksum, signature (given a key), load, schema, the pools' fixture check, accuracy within the tolerance of
the served version, label agreement with it, size, per-row latency p50/p99 in onnxruntime-node (and, for
an edge variant NAME-edge, in onnxruntime-web), and an energy estimate per prediction (CPU time per row x
the budgets' wattsPerCore). Budgets come from the config's "budgets" (docs/model-tool.md lists the
defaults). Prints a pass/fail table; exits 1 when a gate fails. The result is recorded in the version's
config entry ("gates", with the file's sha256): a rollout (npm run rollout -- start) refuses a version
without a passing record for that exact file.`;

/** `npm run model -- check`, its latencies and CPU time read on `clocks` (a test's own; default the real ones). */
export const checkCommandOn = (clocks: RunClocks = THREAD_CLOCKS) =>
  defineCommand({
    name: "check",
    summary: "release gates of a version (accuracy, agreement, latency, size, energy estimate), recorded for rollouts",
    usage: "npm run model -- check --name NAME --version V [options]",
    description: DESCRIPTION,
    flags: {
      name: { type: "string", placeholder: "NAME", required: true, help: "the model (an edge variant is NAME-edge)" },
      version: { type: "string", placeholder: "V", required: true, help: "the candidate version" },
      samples: {
        type: "number",
        placeholder: "N",
        default: 2000,
        min: 100,
        max: 1_000_000,
        integer: true,
        help: "one-row runs per runtime for the latencies",
      },
      "model-public-key": {
        type: "string",
        placeholder: "KEY",
        defaultText: "$MODEL_PUBLIC_KEY; unset: not checked",
        help: "also verify the file's signature",
      },
      models: MODELS_FLAG,
      "dry-run": { type: "boolean", help: "print the table, record nothing" },
    },
    async run(values, _args, out) {
      const { name, version, samples } = values;
      const keyText = values["model-public-key"] ?? (process.env.MODEL_PUBLIC_KEY || undefined);
      if (keyText !== undefined && !isPublicKeyText(keyText)) {
        throw new UsageError("--model-public-key (MODEL_PUBLIC_KEY) must be base64 of a 32-byte Ed25519 public key");
      }
      const modelsDir = values.models;
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
        clocks,
        ...(keyText ? { publicKey: await importModelPublicKey(keyText) } : {}),
      });
      const rows = evaluateGates(measured, budgetsFor(config), !!config.standsFor);
      const record = gatesRecord(rows, measured.file.sha256, config.version, new Date());
      out.log(`${name} version ${version} against version ${config.version} (served):`);
      out.log(gatesTable(rows));
      out.log(record.passed ? "all gates passed" : `${rows.filter((r) => !r.passed).length} gate(s) failed`);
      if (!values["dry-run"]) {
        await writeConfig(configPath, withGatesRecord(raw, version, record));
        out.note(`recorded in ${configPath} (versions.${version}.gates, sha256 ${measured.file.sha256.slice(0, 12)}…)`);
      }
      return record.passed ? 0 : 1;
    },
  });

export const checkCommand = checkCommandOn();
