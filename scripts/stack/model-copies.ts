import {
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODELS_DIR } from "../../tools/edge-bundle/build-edge.ts";

/** The sample models copies are made of, in turn. */
export const COPIED_MODELS = ["digits", "breast-cancer"] as const;

/** The name of copy `i` (0-based): `digits-0000`, `breast-cancer-0001`, ... */
export function copyName(i: number): string {
  return `${COPIED_MODELS[i % COPIED_MODELS.length]}-${String(i).padStart(4, "0")}`;
}

/** The sample a copy was made of (`digits-0000` → `digits`). */
export function copiedFrom(name: string): string {
  return name.replace(/-\d{4}$/, "");
}

/** A config.json's text with every mention of `from` as a model name (name, stands for, calibrated against, quantized from) as `to`. */
function renamed(config: Record<string, unknown>, from: string, to: string): Record<string, unknown> {
  const rename = (name: unknown) => (name === from ? to : name === `${from}-edge` ? `${to}-edge` : name);
  const copy = structuredClone(config) as Record<string, unknown> & {
    versions: Record<string, Record<string, { model?: string } & Record<string, unknown>>>;
  };
  copy.name = rename(copy.name);
  if (copy.standsFor) copy.standsFor = rename(copy.standsFor);
  for (const entry of Object.values(copy.versions)) {
    // A signature covers the model's name: a copy's would not verify, so copies are unsigned.
    delete entry.signature;
    const cascade = entry.cascade as { against?: { model: string } } | undefined;
    if (cascade?.against) cascade.against.model = rename(cascade.against.model) as string;
    const quantization = entry.quantization as { from?: { model: string } } | undefined;
    if (quantization?.from) quantization.from.model = rename(quantization.from.model) as string;
  }
  return copy;
}

/** Copy `models/<from>` (config renamed; files copied, or hard-linked with `link`) to `<dir>/<to>`. */
function copyModel(dir: string, from: string, sample: string, to: string, link: boolean): void {
  const source = join(MODELS_DIR, from);
  const target = join(dir, to);
  mkdirSync(target);
  const config = JSON.parse(readFileSync(join(source, "config.json"), "utf8"));
  writeFileSync(join(target, "config.json"), JSON.stringify(renamed(config, sample, to.replace(/-edge$/, ""))));
  for (const version of readdirSync(source, { withFileTypes: true })) {
    if (!version.isDirectory()) continue;
    mkdirSync(join(target, version.name));
    for (const file of readdirSync(join(source, version.name))) {
      (link ? linkSync : copyFileSync)(join(source, version.name, file), join(target, version.name, file));
    }
  }
}

/**
 * A scratch model repository of `count` models, copies of the samples under distinct names (`digits-0000`,
 * `breast-cancer-0001`, ...), each with its edge variant (`digits-0000-edge`): what a repository of many
 * models looks like to both tiers (the benchmark of many models, the edge bundle's size, tests). With `link`
 * the files are hard links to models/, so a thousand copies take no room: never write into them (a write would
 * change models/ too; replace a file instead). `remove()` deletes it.
 */
export function repositoryOfCopies(
  count: number,
  { link = false, parent = tmpdir() }: { link?: boolean; parent?: string } = {},
): { dir: string; names: string[]; remove(): void } {
  const dir = mkdtempSync(join(parent, "edgecascade-copies-"));
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = copyName(i);
    const sample = copiedFrom(name);
    copyModel(dir, sample, sample, name, link);
    copyModel(dir, `${sample}-edge`, sample, `${name}-edge`, link);
    names.push(name);
  }
  return { dir, names, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
