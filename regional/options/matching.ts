import { UsageError } from "../../tools/cli/errors.ts";

/** A value that must match `pattern`, described as `what` when it does not. */
export const matching =
  (pattern: RegExp, what: string) =>
  (raw: string): string => {
    if (!pattern.test(raw)) throw new UsageError(`must be ${what}, got "${raw}"`);
    return raw;
  };
