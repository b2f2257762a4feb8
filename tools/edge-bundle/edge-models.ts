import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { type HeldoutSet, heldoutPath } from "../../protocol/heldout.ts";
import { type ModelConfig, parseModelConfig } from "../../protocol/model-config.ts";
import { readIfPresentSync } from "../model/config-file.ts";

/** The specifier the Worker imports its models from; wrangler's `alias` points it at the generated module. */
export const EDGE_MODELS_SPECIFIER = "edgecascade-models";

/** Held-out rows per model the demo page's "Random sample" draws from (the bundle carries no more). */
export const DEMO_SAMPLES = 100;

/**
 * Demo rows per model in a repository of `models` logical models: 100 up to 20 models, then fewer, never under
 * 10, so that a repository of a thousand models does not bundle (and hold in every isolate's heap) 100,000
 * rows it never shows.
 */
export function demoRowsPerModel(models: number): number {
  return Math.max(10, Math.min(DEMO_SAMPLES, Math.floor(2000 / Math.max(1, models))));
}

/** One logical model as the generator found it in the repository. */
export interface RepositoryModel {
  config: ModelConfig;
  /** Its edge variant, if the repository has one: the config and the path of its served version's file. */
  edge?: { config: ModelConfig; file: string };
  samples: { input: number[]; label: number }[];
}

/**
 * The logical models of a repository: every config that does not stand for another model, each with the
 * edge variant whose `standsFor` names it (at most one). Throws, naming the file, on a config that does not
 * parse, an edge variant of an unknown model, or two edge variants of one model.
 */
export function readRepository(modelsDir: string): RepositoryModel[] {
  const configs: ModelConfig[] = [];
  for (const entry of readdirSync(modelsDir, { withFileTypes: true })) {
    const path = join(modelsDir, entry.name, "config.json");
    // No config.json: not a model directory. One that cannot be read fails the build rather than leave the model out.
    const text = readIfPresentSync(path);
    if (text === undefined) continue;
    const config = parseModelConfig(JSON.parse(text), path);
    if (config.name !== entry.name) throw new Error(`${path} names the model "${config.name}", not "${entry.name}"`);
    configs.push(config);
  }
  const logical = configs.filter((c) => !c.standsFor).sort((a, b) => a.name.localeCompare(b.name));
  const names = new Set(logical.map((c) => c.name));
  const edges = new Map<string, ModelConfig>();
  for (const config of configs.filter((c) => c.standsFor)) {
    const of = config.standsFor!;
    if (!names.has(of)) throw new Error(`${config.name}/config.json stands for "${of}", which is not in ${modelsDir}`);
    if (edges.has(of)) throw new Error(`"${of}" has two edge variants: ${edges.get(of)!.name} and ${config.name}`);
    edges.set(of, config);
  }
  if (logical.length === 0) throw new Error(`${modelsDir} holds no model (no <name>/config.json)`);
  const rows = demoRowsPerModel(logical.length);
  return logical.map((config) => {
    const edge = edges.get(config.name);
    const fixture = JSON.parse(readFileSync(join(modelsDir, heldoutPath(config)), "utf8")) as HeldoutSet;
    return {
      config,
      ...(edge
        ? { edge: { config: edge, file: join(modelsDir, edge.name, edge.version, edge.versions[edge.version]!.file) } }
        : {}),
      samples: fixture.rows.slice(0, rows).map(({ input, label }) => ({ input, label })),
    };
  });
}

/** An import specifier for `file` from the generated module's directory (posix separators, always relative). */
function specifier(fromDir: string, file: string): string {
  const path = relative(fromDir, file).split(sep).join("/");
  return path.startsWith(".") ? path : `../../scripts/stack/${path}`;
}

/**
 * The source of the Worker's model module: every logical model's config, its edge variant's config and
 * `.onnx` (a wrangler `Data` import), and demo samples as JSON text (a string literal costs the isolate's
 * start-up a scan, where an array literal of numbers costs a parse and a heap of objects; the demo parses it
 * when asked). What the Worker serves is exactly this list.
 */
export function edgeModelsSource(models: readonly RepositoryModel[], moduleDir: string, origin: string): string {
  const imports: string[] = [];
  const entries = models.map((m, i) => {
    const edge = m.edge ? `{ config: ${JSON.stringify(m.edge.config)}, bytes: edge${i} }` : "undefined";
    if (m.edge) imports.push(`import edge${i} from ${JSON.stringify(specifier(moduleDir, m.edge.file))};`);
    return `  { config: ${JSON.stringify(m.config)}, edge: ${edge}, samples: ${JSON.stringify(JSON.stringify(m.samples))} },`;
  });
  return [
    `// Generated from ${origin} by tools/edge-bundle/edge-models.ts at build time; not committed, do not edit.`,
    ...imports,
    "export default [",
    ...entries,
    "];",
    "",
  ].join("\n");
}

/** Generate the module for `modelsDir` into `outFile` (written whole, then renamed into place). */
export function writeEdgeModels(modelsDir: string, outFile: string): RepositoryModel[] {
  const models = readRepository(modelsDir);
  mkdirSync(dirname(outFile), { recursive: true });
  const tmp = `${outFile}.tmp-${process.pid}`;
  writeFileSync(tmp, edgeModelsSource(models, dirname(outFile), modelsDir));
  renameSync(tmp, outFile);
  return models;
}
