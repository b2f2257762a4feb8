import { parseArgs } from "node:util";
import { type Subcommand, UsageError } from "../cli.ts";
import { REPO_MODELS, VERSION_FLAGS } from "../repository-flags.ts";
import { SIGNING_KEY_ENV, signerFrom } from "./keys.ts";
import { signVersions } from "./sign-versions.ts";

const USAGE = `Usage: npm run model -- sign --name NAME [--version V] [--signing-key FILE] [--models DIR]

Signs model files already in the repository (every version of NAME, or only V): each file is checked
against its sha256 in config.json, then its Ed25519 signature is written next to that sha256. import and
npm run models sign what they write when given a key; this signs what is there (a release pipeline signing
the sample models with its own key, or a key rotation).

  --name NAME          the model (an edge variant is NAME-edge)
  --version V          only this version (default: every version)
  --signing-key FILE   the private key (default: $${SIGNING_KEY_ENV}; make one with keygen)
  --models DIR         model repository (default: this repository's models/)`;

export const signCommand: Subcommand = {
  name: "sign",
  summary: "sign model files already in the repository with an Ed25519 key (signature next to the sha256)",
  usage: USAGE,
  async run(argv, out) {
    let values: { name?: string; version?: string; "signing-key"?: string; models?: string };
    try {
      values = parseArgs({
        args: argv,
        options: {
          ...VERSION_FLAGS,
          "signing-key": { type: "string" },
        },
        strict: true,
      }).values;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (!values.name) throw new UsageError("--name is required");
    const signer = await signerFrom(values["signing-key"]);
    if (!signer) throw new UsageError(`a private key is required: --signing-key FILE or ${SIGNING_KEY_ENV}`);
    const versions = values.version ? [values.version] : undefined;
    for (const version of await signVersions(values.models ?? REPO_MODELS, values.name, signer, versions)) {
      out.log(`${values.name}/${version}: signed by key ${signer.keyId}`);
    }
    return 0;
  },
};
