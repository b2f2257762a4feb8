import { importModelPublicKey } from "../../../protocol/model-signature.ts";
import { REGISTRY_ENV, REGISTRY_FLAGS, registryFrom } from "../../../registry/tool-flags.ts";
import { defineCommand } from "../../cli/command.ts";
import { UsageError } from "../../cli/errors.ts";
import { MODELS_FLAG } from "../repository-flags.ts";
import { localConfigs, publishPlan, publishVersion } from "./publish.ts";

export const publishCommand = defineCommand({
  name: "publish",
  summary: "upload a model version (and its edge variants) to the model registry; nothing serves it until a rollout",
  usage: "npm run model -- publish --name NAME [--version V] --registry s3://BUCKET/PREFIX [--models DIR]",
  description: `Uploads version V of NAME (default: the version its config.json names) from the repository to the registry, in
the same layout, with the edge variants' versions calibrated against it: each file checked against its sha256
and signature first (unsigned files are refused: pools and isolates load only signed ones), then its held-out
fixture, then its entry in the registry's config.json. A model new to the registry is served at once
(served.json, revision 1); for any other, npm run rollout -- start moves it. --all publishes every model of
the repository at its config's version (seeding a registry).`,
  flags: {
    name: { type: "string", placeholder: "NAME", help: "the model (its edge variants come along)" },
    version: { type: "string", placeholder: "V", defaultText: "the config's version", help: "the version" },
    all: { type: "boolean", help: "every model of the repository at its config's version" },
    "public-key": {
      type: "string",
      placeholder: "KEY",
      defaultText: "$MODEL_PUBLIC_KEY",
      help: "check each file's signature with this key before uploading it",
    },
    models: MODELS_FLAG,
    ...REGISTRY_FLAGS,
  },
  async run(values, _args, out) {
    const registry = registryFrom(values);
    if (!registry) throw new UsageError(`--registry s3://BUCKET/PREFIX (or ${REGISTRY_ENV}) is required`);
    if (values.all === (values.name !== undefined)) throw new UsageError("give either --name NAME or --all");
    const key = values["public-key"] ?? (process.env.MODEL_PUBLIC_KEY || undefined);
    const publicKey = key ? await importModelPublicKey(key) : undefined;
    try {
      const plan = values.all
        ? (await localConfigs(values.models))
            // Full models first: an edge variant's held-out fixture is its full model's.
            .sort((a, b) => Number(!!a.standsFor) - Number(!!b.standsFor))
            .map((c) => ({ name: c.name, version: c.version }))
        : await publishPlan(values.models, values.name!, values.version);
      for (const { name, version } of plan) {
        for (const line of await publishVersion(registry, values.models, name, version, publicKey)) {
          out.log(`published ${line}`);
        }
      }
      out.log(`registry: ${registry.where}`);
      return 0;
    } finally {
      registry.close();
    }
  },
});
