import { fileURLToPath } from "node:url";

/** The repository's own `models/`: the default of every subcommand's `--models DIR`. */
export const REPO_MODELS = fileURLToPath(new URL("../../models/", import.meta.url));

/** `--name`, `--version` and `--models DIR`: which model, which of its versions, in which repository. */
export const VERSION_FLAGS = {
  name: { type: "string" },
  version: { type: "string" },
  models: { type: "string" },
} as const;
