import { defineCommand } from "../../cli/command.ts";
import { signerFrom } from "../signing/keys.ts";
import { IMPORT_DESCRIPTION, IMPORT_FLAGS, IMPORT_USAGE, importOptions } from "./options.ts";
import { importModel } from "./run.ts";
import { importSummary } from "./summary.ts";

export const importCommand = defineCommand({
  name: "import",
  summary: "validate a model (and its edge variant, or quantize one), calibrate the cascade, write models/NAME/",
  usage: IMPORT_USAGE,
  description: IMPORT_DESCRIPTION,
  flags: IMPORT_FLAGS,
  async run(values, _args, out) {
    const options = importOptions(values);
    const signer = await signerFrom(options.signingKey);
    const result = await importModel(options, out.note, signer);
    out.log(importSummary(result));
    for (const path of result.written) out.note(`wrote ${path}`);
    out.note(
      signer ? `signed every file with key ${signer.keyId}` : "not signed: no --signing-key or MODEL_SIGNING_KEY",
    );
    return 0;
  },
});
