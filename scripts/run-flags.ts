/** The flags every benchmark and validation run shares, declared once for their flag tables (tools/cli/). */

/** `--out DIR`: where a run writes its results (default `bench`, relative to the repository). */
export const OUT_FLAG = { type: "string", placeholder: "DIR", default: "bench", help: "where the results go" } as const;

/** `--model NAME`: the logical model the requests name (default `digits`). */
export const MODEL_FLAG = {
  type: "string",
  placeholder: "NAME",
  default: "digits",
  help: "the logical model the requests name",
} as const;
