import type { Subcommand } from "../cli.ts";
import { IMPORT_USAGE, parseImportOptions } from "./options.ts";
import { importModel } from "./run.ts";
import { importSummary } from "./summary.ts";

export const importCommand: Subcommand = {
  name: "import",
  summary: "validate a model (and its edge variant, or quantize one), calibrate the cascade, write models/NAME/",
  usage: IMPORT_USAGE,
  async run(argv, out) {
    const options = parseImportOptions(argv);
    const result = await importModel(options, out.note);
    out.log(importSummary(result));
    for (const path of result.written) out.note(`wrote ${path}`);
    return 0;
  },
};
