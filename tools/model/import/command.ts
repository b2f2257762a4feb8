import type { Subcommand } from "../cli.ts";
import { signerFrom } from "../signing/keys.ts";
import { IMPORT_USAGE, parseImportOptions } from "./options.ts";
import { importModel } from "./run.ts";
import { importSummary } from "./summary.ts";

export const importCommand: Subcommand = {
  name: "import",
  summary: "validate a model (and its edge variant, or quantize one), calibrate the cascade, write models/NAME/",
  usage: IMPORT_USAGE,
  async run(argv, out) {
    const options = parseImportOptions(argv);
    const signer = await signerFrom(options.signingKey);
    const result = await importModel(options, out.note, signer);
    out.log(importSummary(result));
    for (const path of result.written) out.note(`wrote ${path}`);
    out.note(
      signer ? `signed every file with key ${signer.keyId}` : "not signed: no --signing-key or MODEL_SIGNING_KEY",
    );
    return 0;
  },
};
