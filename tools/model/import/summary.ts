import type { ImportResult } from "./run.ts";

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** Lines of a plain table, columns padded to their widest cell. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  "),
  );
}

/** What an import did, for people: the variants, the cascade on the held-out rows, and what serves now. */
export function importSummary(result: ImportResult): string {
  const { facts, plan, rows } = result;
  const { full, edge } = facts;
  const lines = [
    `${facts.name}: ${full.tensors.width} features -> ${full.tensors.classes} classes (${facts.labels.join(", ")})`,
    `data: ${rows.total} rows, ${facts.split}`,
    ...[full, ...(edge ? [edge] : [])].flatMap((v, i) =>
      (v.conversions ?? []).map((c) => `converted (${i === 0 ? facts.name : `${facts.name}-edge`}): ${c.detail}`),
    ),
    ...[full, ...(edge ? [edge] : [])].flatMap((v, i) => {
      const fixed = v.tensors.fixedBatch;
      if (fixed === undefined) return [];
      const name = i === 0 ? facts.name : `${facts.name}-edge`;
      return [
        `fixed batch (${name}): input "${v.tensors.inputName}" was exported as [${fixed}, ${v.tensors.width}], not [-1, ${v.tensors.width}]: ` +
          `served ${fixed === 1 ? "one row" : `${fixed} rows`} per run (as Triton serves max_batch_size 0), a request's rows in turn; ` +
          "export with a dynamic batch (torch.onnx.export dynamic_axes, skl2onnx [None, N]) to run them together",
      ];
    }),
    "",
    ...table([
      ["model", "version", "weights", "bytes", "accuracy (calibration)", "accuracy (held-out)"],
      [
        facts.name,
        plan.fullVersion,
        full.weights,
        String(full.file.bytes),
        pct(full.accuracy.validation),
        pct(full.accuracy.test),
      ],
      ...(edge && plan.edgeVersion
        ? [
            [
              `${facts.name}-edge`,
              plan.edgeVersion,
              edge.weights,
              String(edge.file.bytes),
              pct(edge.accuracy.validation),
              pct(edge.accuracy.test),
            ],
          ]
        : []),
    ]),
  ];
  if (edge) {
    const t = edge.figures.test;
    lines.push(
      "",
      `cascade: the edge answers when its top probability is at least ${edge.threshold}: agreement with the full model at least ${edge.agreementTarget} (proven ${edge.proof.provenAgreement} at ${edge.proof.confidence * 100}% confidence on the ${edge.proof.rows} calibration rows it answers there, ${edge.proof.disagreements} disagreeing)`,
      `  held-out: edge share ${pct(t.edgeShare)}, agreement ${pct(t.agreement)}, cascade accuracy ${pct(t.cascadeAccuracy)} (full model alone ${pct(full.accuracy.test)})`,
    );
    if (edge.trees) {
      const t = edge.trees;
      lines.push(
        `edge trees: the first ${t.kept} of ${t.of} trees of the full ensemble (${t.kind}, post-transform ${t.postTransform})`,
      );
    }
    if (edge.quantization) {
      const q = edge.quantization;
      lines.push(
        `quantization: ${q.tensors} weight tensors to int8, ${q.bytesBefore} -> ${edge.file.bytes} bytes (${(q.bytesBefore / edge.file.bytes).toFixed(1)}x smaller), labels agree with the full model on ${pct(q.labelAgreement)} of all rows`,
      );
    }
  } else {
    lines.push(
      "",
      "no edge variant: the edge forwards every request for this model to a region (the cache still applies)",
    );
  }
  lines.push(
    "",
    plan.serves
      ? `serving: version ${plan.fullVersion} of a new model; npm start, tests and deploys bundle it`
      : `added version ${plan.fullVersion}; the served version is unchanged. To serve it, set "version" in ${facts.name}/config.json` +
          `${plan.edgeVersion ? ` (and ${plan.edgeVersion} in ${facts.name}-edge/config.json)` : ""} and reload the pools (POST /v2/repository/models/${facts.name}/load or SIGHUP), then deploy the edge`,
  );
  return lines.join("\n");
}
