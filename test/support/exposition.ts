/** Reading a Prometheus text exposition in tests: a series must be there to be read (`metric`). */

/** The samples of `name` in Prometheus text whose labels include `labels`, each with its value. */
function samples(text: string, name: string, labels: Record<string, string>): number[] {
  const values: number[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const own = new Map([...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([k, v]) => own.get(k) === v)) values.push(Number(match[3]));
  }
  return values;
}

/**
 * The sum of the samples of `name` whose labels include `labels`, e.g. `metric(text, "x_total", {model: "digits"})`.
 * Throws when there is none: a renamed series or label must fail the test, not read as 0 (a counter not yet
 * counted: `counted`).
 */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  const values = samples(text, name, labels);
  if (values.length === 0) {
    throw new Error(`no series ${name}${JSON.stringify(labels)} in the exposition`);
  }
  return values.reduce((sum, v) => sum + v, 0);
}

/**
 * A counter's count for `labels`: its samples' sum, or 0 when the text declares the counter (`# TYPE name counter`)
 * with no sample for them (prom-client writes a labelled counter's series once it was counted). Throws for a
 * counter the text does not declare.
 */
export function counted(text: string, name: string, labels: Record<string, string> = {}): number {
  if (!text.split("\n").includes(`# TYPE ${name} counter`)) throw new Error(`no counter ${name} in the exposition`);
  return samples(text, name, labels).reduce((sum, v) => sum + v, 0);
}
