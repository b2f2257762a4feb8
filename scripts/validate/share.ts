/**
 * npm run validate:share -- --url URL: every held-out row of a model sent once through a running edge (e.g.
 * `npm start`'s, right after it started), one after another, with the cascade deciding: the share of rows
 * answered by a region, and the cascade's agreement with the full model alone and with the true labels.
 * Issue 17's check of whether unsure rows reach a region at all. Prints JSON; `--out FILE` writes it too.
 */
import { writeFileSync } from "node:fs";
import { argmax } from "../../protocol/heldout.ts";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import type { FlagTable, FlagValues } from "../../tools/cli/flags.ts";
import { validationModel } from "./model.ts";
import { runInfo } from "./run-info.ts";
import { type ShareAnswer, shareSummary } from "./share-summary.ts";

const FLAGS = {
  url: {
    type: "string",
    placeholder: "URL",
    required: true,
    help: "the edge (e.g. http://127.0.0.1:8787 for npm start)",
  },
  model: { type: "string", placeholder: "NAME", default: "digits", help: "logical model with an edge variant" },
  out: { type: "string", placeholder: "FILE", help: "also write the JSON there" },
} as const satisfies FlagTable;

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const url = values.url.replace(/\/+$/, "");
  const model = validationModel(values.model);
  const info = runInfo(`npm run validate:share -- ${process.argv.slice(2).join(" ")}`);
  const answers: ShareAnswer[] = [];
  for (const row of model.rows) {
    const res = await fetch(`${url}/v1/classify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: model.name, inputs: row.input }),
    }).catch(() => undefined);
    const body = res?.ok ? ((await res.json()) as { predictions: { class: number }[] }) : undefined;
    await res?.body?.cancel().catch(() => undefined);
    answers.push({
      row,
      servedBy: res?.ok ? res.headers.get("x-served-by") : null,
      degraded: res?.headers.get("x-edgecascade-degraded"),
      answered: body ? (body.predictions[0]?.class ?? null) : null,
    });
  }
  const summary = shareSummary(answers, model.name);
  // The edge variant alone, for scale: its agreement with the full model on the same rows.
  const edgeAlone = model.rows.filter((r) => argmax(r.expected[model.edgeModel]!) === argmax(r.expected[model.name]!));
  const result = {
    ...info,
    url,
    model: model.name,
    ...summary,
    edgeAloneAgreement: edgeAlone.length / model.rows.length,
  };
  const text = JSON.stringify(result, null, 2);
  console.log(text);
  if (values.out) writeFileSync(values.out, `${text}\n`);
  return 0;
}

runMain(
  defineCommand({
    name: "validate:share",
    usage: "npm run validate:share -- --url URL [--model NAME] [--out FILE]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
