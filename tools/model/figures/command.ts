import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type HeldoutSet, heldoutPath } from "../../../protocol/heldout.ts";
import { parseModelConfig } from "../../../protocol/model-config.ts";
import { defineCommand } from "../../cli/command.ts";
import { RefusedError } from "../../cli/errors.ts";
import { MODELS_FLAG } from "../repository-flags.ts";
import { versionFigures, withFigures } from "./version-figures.ts";

export const figuresCommand = defineCommand({
  name: "figures",
  summary: "record each version's held-out figures (class counts, an edge variant's agreement) from its fixture",
  usage: "npm run model -- figures --name NAME [--models DIR]",
  description: `Computes what each version of NAME predicted on its held-out rows (heldout.json next to the full
model's version) and writes it into config.json as the version's "heldout": rows per predicted class, the
baseline live drift is measured against; for an edge variant, the rows it answers at its calibrated threshold
and how many of them its full model labels the same, the agreement the live audit is held to
(docs/observability.md). import records them itself; this fills them in for versions imported before, without
Python or a rebuild. Versions whose fixture holds no expected output of theirs are left as they are.`,
  flags: {
    name: { type: "string", placeholder: "NAME", required: true, help: "the model (an edge variant is NAME-edge)" },
    models: MODELS_FLAG,
  },
  async run(values, _args, out) {
    const configPath = join(values.models, values.name, "config.json");
    const text = await readFile(configPath, "utf8").catch((err: Error) => {
      throw new RefusedError(`cannot read ${configPath}: ${err.message}`);
    });
    let raw = JSON.parse(text) as Record<string, unknown>;
    const config = parseModelConfig(raw, configPath);
    for (const version of Object.keys(config.versions)) {
      const path = join(values.models, heldoutPath(config, version));
      const fixture = await readFile(path, "utf8").then(
        (t) => JSON.parse(t) as HeldoutSet,
        () => undefined,
      );
      const figures = fixture && versionFigures(config, version, fixture);
      if (!figures) {
        out.log(`${values.name}/${version}: no held-out outputs of this version in ${path}; left as it is`);
        continue;
      }
      raw = withFigures(raw, version, figures);
      const agreement =
        figures.edgeAnswered === undefined
          ? ""
          : `, edge answers ${figures.edgeAnswered}, agrees on ${figures.edgeAgreeing}`;
      out.log(
        `${values.name}/${version}: ${figures.rows} held-out rows, classes ${figures.classCounts.join(" ")}${agreement}`,
      );
    }
    parseModelConfig(raw, configPath);
    await writeFile(configPath, `${JSON.stringify(raw, null, 2)}\n`);
    return 0;
  },
});
