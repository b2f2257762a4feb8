/** Flag parsing shared by the validation scripts: errors name the flag. */

export function numberFlag(
  values: Record<string, unknown>,
  name: string,
  fallback: number,
  check: { min?: number; max?: number; integer?: boolean } = {},
): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  const { min = 0, max = Number.POSITIVE_INFINITY, integer = false } = check;
  if (typeof raw !== "string" || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new Error(`--${name} must be ${integer ? "an integer" : "a number"} ${range}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** A comma-separated list flag, each item checked against `allowed` when given. */
export function listFlag(
  values: Record<string, unknown>,
  name: string,
  fallback: readonly string[],
  allowed?: readonly string[],
): string[] {
  const raw = values[name];
  if (raw === undefined) return [...fallback];
  const items = String(raw)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = allowed ? items.filter((i) => !allowed.includes(i)) : [];
  if (items.length === 0 || unknown.length > 0) {
    throw new Error(
      `--${name}: ${unknown.length ? `unknown ${unknown.join(", ")}; ` : ""}one or more of ${allowed?.join(", ") ?? "values"}`,
    );
  }
  return items;
}

/** Run `main`, print its error without a stack and exit 2 on failure (bad flags, a stack that did not start). */
export function runMain(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(`${name}: ${err.message}`);
      process.exit(2);
    },
  );
}
