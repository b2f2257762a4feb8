import { defineCommand } from "../../cli/command.ts";
import { UsageError } from "../../cli/errors.ts";
import { MODELS_FLAG } from "../repository-flags.ts";
import { SIGNING_KEY_ENV, signerFrom } from "./keys.ts";
import { signVersions } from "./sign-versions.ts";

export const signCommand = defineCommand({
  name: "sign",
  summary: "sign model files already in the repository with an Ed25519 key (signature next to the sha256)",
  usage: "npm run model -- sign --name NAME [--version V] [--signing-key FILE] [--models DIR]",
  description: `Signs model files already in the repository (every version of NAME, or only V): each file is checked
against its sha256 in config.json, then its Ed25519 signature is written next to that sha256. import and
npm run models sign what they write when given a key; this signs what is there (a release pipeline signing
the sample models with its own key, or a key rotation).`,
  flags: {
    name: { type: "string", placeholder: "NAME", required: true, help: "the model (an edge variant is NAME-edge)" },
    version: { type: "string", placeholder: "V", defaultText: "every version", help: "only this version" },
    "signing-key": {
      type: "string",
      placeholder: "FILE",
      defaultText: `$${SIGNING_KEY_ENV}; make one with keygen`,
      help: "the private key",
    },
    models: MODELS_FLAG,
  },
  async run(values, _args, out) {
    const signer = await signerFrom(values["signing-key"]);
    if (!signer) throw new UsageError(`a private key is required: --signing-key FILE or ${SIGNING_KEY_ENV}`);
    const versions = values.version ? [values.version] : undefined;
    for (const version of await signVersions(values.models, values.name, signer, versions)) {
      out.log(`${values.name}/${version}: signed by key ${signer.keyId}`);
    }
    return 0;
  },
});
