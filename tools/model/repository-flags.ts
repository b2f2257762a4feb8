import { fileURLToPath } from "node:url";

/** The repository's own `models/`: the default of every subcommand's `--models DIR`. */
export const REPO_MODELS = fileURLToPath(new URL("../../models/", import.meta.url));

/** `--models DIR`: the model repository a subcommand reads and writes. */
export const MODELS_FLAG = {
  type: "string",
  placeholder: "DIR",
  default: REPO_MODELS,
  defaultText: "this repository's models/",
  help: "model repository",
} as const;
