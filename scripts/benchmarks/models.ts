import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import type { HeldoutSet } from "../../protocol/heldout.ts";
import type { ModelConfig } from "../../protocol/model-config.ts";
import { calibrationOf, parseModelConfig } from "../../protocol/model-config.ts";
import { processFlags } from "../../tools/cli/command.ts";
import { MODELS_DIR, ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { readRepository } from "../../tools/edge-bundle/edge-models.ts";
import { probeTarget } from "../../tools/probe/target.ts";
import { OUT_FLAG } from "../run-flags.ts";
import { type EdgeTreesFigures, edgeTreesMarkdown, measureEdgeTrees, readBytes, removeDir } from "./edge-trees.ts";

/**
 * `npm run bench:models`: every model of the repository and its edge variant, per row, in both runtimes the
 * project uses: onnxruntime-node (CPU, one thread, the pools' session options) and onnxruntime-web (wasm,
 * SIMD, one thread, in Node: the Worker runs the same wasm, whose CPU time cannot be read from inside it).
 * Batch 1 is a request's latency; batch 64, per row, is the throughput of a full batch. The baseline is the
 * full model in the same runtime and round: the edge variant's time is given as a ratio to it. Medians of
 * interleaved rounds. With the sizes, accuracies, edge share and cascade accuracy from the configs (the
 * import measured them on the held-out rows). Then edge variants of K trees of the tree ensembles
 * (`edge-trees.ts`), their figures and onnxruntime-web time per row against the full model's in the same round.
 * Writes bench/models.json and bench/models.md.
 */
const { values: args } = processFlags({
  name: "bench:models",
  usage: "npm run bench:models -- [options]",
  flags: {
    rounds: {
      type: "number",
      placeholder: "N",
      default: 3,
      min: 1,
      integer: true,
      help: "rounds per model and runtime",
    },
    "min-ms": { type: "number", placeholder: "MS", default: 400, min: 1, help: "least time of one round" },
    out: OUT_FLAG,
  },
});
const { rounds, "min-ms": minMs } = args;

type Run = (input: Float32Array, batch: number) => Promise<unknown>;

async function nodeRunner(config: ModelConfig, bytes: Uint8Array): Promise<Run> {
  const int8 = config.versions[config.version]!.weights === "int8";
  const session = await ortNode.InferenceSession.create(bytes, {
    executionProviders: ["cpu"],
    graphOptimizationLevel: int8 ? "basic" : "all",
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const [input, output] = [config.inputs[0]!, config.outputs[0]!];
  return (data, batch) =>
    session.run({ [input.name]: new ortNode.Tensor("float32", data, [batch, input.shape[1]!]) }, [output.name]);
}

async function webRunner(config: ModelConfig, bytes: Uint8Array): Promise<Run> {
  const session = await ortWeb.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
  const [input, output] = [config.inputs[0]!, config.outputs[0]!];
  return (data, batch) =>
    session.run({ [input.name]: new ortWeb.Tensor("float32", data, [batch, input.shape[1]!]) }, [output.name]);
}

/** Microseconds per row: run batches of `batch` rows from `rows` for at least `minMs`, after a warm-up. */
async function perRowUs(run: Run, rows: Float32Array[], batch: number): Promise<number> {
  const width = rows[0]!.length;
  const batches = Array.from({ length: 16 }, (_, b) => {
    const data = new Float32Array(batch * width);
    for (let r = 0; r < batch; r++) data.set(rows[(b * batch + r) % rows.length]!, r * width);
    return data;
  });
  for (let i = 0; i < 50; i++) await run(batches[i % 16]!, batch);
  let runs = 0;
  const started = performance.now();
  while (performance.now() - started < minMs || runs < 100) {
    await run(batches[runs % 16]!, batch);
    runs++;
  }
  return ((performance.now() - started) * 1000) / (runs * batch);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

interface Variant {
  name: string;
  role: "full" | "edge";
  config: ModelConfig;
  bytes: Uint8Array;
}

async function main(): Promise<void> {
  ortWeb.env.wasm.numThreads = 1;
  const report = {
    command: "npm run bench:models",
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", node: process.version },
    models: [] as ModelFigures[],
    edgeTrees: [] as (EdgeTreesFigures & { webUs?: string })[],
  };
  for (const repo of readRepository(MODELS_DIR)) {
    const name = repo.config.name;
    const target = probeTarget(MODELS_DIR, name);
    const rows = target.heldout.rows.map((r) => Float32Array.from(r.input));
    const read = (config: ModelConfig) =>
      new Uint8Array(
        readFileSync(join(MODELS_DIR, config.name, config.version, config.versions[config.version]!.file)),
      );
    const variants: Variant[] = [
      { name, role: "full", config: repo.config, bytes: read(repo.config) },
      ...(repo.edge
        ? [
            {
              name: repo.edge.config.name,
              role: "edge" as const,
              config: repo.edge.config,
              bytes: read(repo.edge.config),
            },
          ]
        : []),
    ];
    const runners = await Promise.all(
      variants.map(async (v) => ({
        node: await nodeRunner(v.config, v.bytes),
        web: await webRunner(v.config, v.bytes),
      })),
    );
    const samples = variants.map(() => ({
      node1: [] as number[],
      web1: [] as number[],
      node64: [] as number[],
      web64: [] as number[],
    }));
    for (let round = 0; round < rounds; round++) {
      for (const [i, runner] of runners.entries()) {
        samples[i]!.node1.push(await perRowUs(runner.node, rows, 1));
        samples[i]!.web1.push(await perRowUs(runner.web, rows, 1));
        samples[i]!.node64.push(await perRowUs(runner.node, rows, 64));
        samples[i]!.web64.push(await perRowUs(runner.web, rows, 64));
      }
      console.error(`${name}: round ${round + 1}/${rounds}`);
    }
    const entries = variants.map((v, i) => {
      const s = samples[i]!;
      const entry = v.config.versions[v.config.version]!;
      return {
        model: v.name,
        role: v.role,
        bytes: v.bytes.byteLength,
        weights: entry.weights ?? "fp32",
        accuracy: entry.accuracy.test,
        usPerRow: {
          node: { batch1: round(median(s.node1)), batch64: round(median(s.node64)) },
          web: { batch1: round(median(s.web1)), batch64: round(median(s.web64)) },
        },
      };
    });
    const cascade = repo.edge ? calibrationOf(repo.edge.config) : undefined;
    report.models.push({
      name,
      heldoutRows: rows.length,
      ...(cascade ? { threshold: cascade.threshold, cascade: cascade.test } : {}),
      variants: entries,
    });
  }
  report.edgeTrees = await timeEdgeTrees();
  const out = resolve(ROOT, args.out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "models.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, "models.md"), markdown(report));
  console.log(markdown(report));
}

interface ModelFigures {
  name: string;
  heldoutRows: number;
  threshold?: number;
  cascade?: { edgeShare: number; agreement: number; cascadeAccuracy: number };
  variants: {
    model: string;
    role: string;
    bytes: number;
    weights: string;
    accuracy: number;
    usPerRow: { node: { batch1: number; batch64: number }; web: { batch1: number; batch64: number } };
  }[];
}

interface Report {
  command: string;
  date: string;
  machine: { cpus: number; model: string; node: string };
  models: ModelFigures[];
  edgeTrees: (EdgeTreesFigures & { webUs?: string })[];
}

/** `measureEdgeTrees`, each edge variant timed in onnxruntime-web (batch 1) beside its full model, interleaved. */
async function timeEdgeTrees(): Promise<Report["edgeTrees"]> {
  const { figures, dir } = await measureEdgeTrees();
  try {
    const out: Report["edgeTrees"] = [];
    for (const f of figures) {
      if (!f.edgeFile) {
        out.push(f);
        continue;
      }
      const configOf = (model: string) =>
        parseModelConfig(JSON.parse(readFileSync(join(model, "config.json"), "utf8")), model);
      const edgeDir = join(f.edgeFile, "..", "..");
      const fullDir = edgeDir.replace(/-edge$/, "");
      const edge = await webRunner(configOf(edgeDir), readBytes(f.edgeFile));
      const full = await webRunner(configOf(fullDir), readBytes(join(fullDir, "1", "model.onnx")));
      const heldout = JSON.parse(readFileSync(join(fullDir, "1", "heldout.json"), "utf8")) as HeldoutSet;
      const rows = heldout.rows.map((r) => Float32Array.from(r.input));
      const e: number[] = [];
      const g: number[] = [];
      for (let round = 0; round < rounds; round++) {
        e.push(await perRowUs(edge, rows, 1));
        g.push(await perRowUs(full, rows, 1));
      }
      const { edgeFile: _, ...kept } = f;
      out.push({ ...kept, webUs: `${round(median(e))} (${(median(e) / median(g)).toFixed(2)})` });
      console.error(`edge trees: ${f.ensemble}, K=${f.kept}`);
    }
    return out;
  } finally {
    removeDir(dir);
  }
}

function markdown(report: Report): string {
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const lines = [
    "# Models: size, accuracy, cascade, per-row inference time",
    "",
    `\`${report.command}\` — ${report.date}, ${report.machine.cpus} × ${report.machine.model}, Node ${report.machine.node}.`,
    "Accuracy, edge share and cascade accuracy on each model's held-out rows (from config.json, measured by the import).",
    "Times: µs per row, medians of interleaved rounds; onnxruntime-web is the wasm build in Node (the Worker runs the",
    "same wasm). In brackets: the edge variant's time as a share of the full model's in the same runtime.",
    "",
    "| model | variant | weights | bytes | accuracy | node, batch 1 | web, batch 1 | node, per row of 64 | web, per row of 64 |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const m of report.models) {
    const full = m.variants.find((v) => v.role === "full")!;
    for (const v of m.variants) {
      const ratio = (a: number, b: number) => (v.role === "edge" ? ` (${(a / b).toFixed(2)})` : "");
      lines.push(
        `| ${m.name} | ${v.model} | ${v.weights} | ${v.bytes.toLocaleString("en")} | ${pct(v.accuracy)} | ` +
          `${v.usPerRow.node.batch1}${ratio(v.usPerRow.node.batch1, full.usPerRow.node.batch1)} | ` +
          `${v.usPerRow.web.batch1}${ratio(v.usPerRow.web.batch1, full.usPerRow.web.batch1)} | ` +
          `${v.usPerRow.node.batch64}${ratio(v.usPerRow.node.batch64, full.usPerRow.node.batch64)} | ` +
          `${v.usPerRow.web.batch64}${ratio(v.usPerRow.web.batch64, full.usPerRow.web.batch64)} |`,
      );
    }
  }
  lines.push(
    "",
    "| model | held-out rows | edge threshold | edge share | agreement | cascade accuracy |",
    "|---|---:|---:|---:|---:|---:|",
  );
  for (const m of report.models) {
    lines.push(
      m.cascade
        ? `| ${m.name} | ${m.heldoutRows} | ${m.threshold} | ${pct(m.cascade.edgeShare)} | ${pct(m.cascade.agreement)} | ${pct(m.cascade.cascadeAccuracy)} |`
        : `| ${m.name} | ${m.heldoutRows} | no edge variant | 0% | – | – |`,
    );
  }
  lines.push(...edgeTreesMarkdown(report.edgeTrees));
  return `${lines.join("\n")}\n`;
}

main().catch((err: Error) => {
  console.error(`bench:models: ${err.stack ?? err.message}`);
  process.exit(1);
});
