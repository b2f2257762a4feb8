import { UsageError } from "../../tools/cli/errors.ts";

/** A JSON variable's value (a wrangler.toml array or table arrives as its JSON text too). */
export function jsonValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`invalid JSON: ${(err as Error).message}`);
  }
}
