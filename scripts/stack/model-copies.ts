import { createHash } from "node:crypto";
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

/**
 * An ONNX file that is the same model with `doc` as its `doc_string` (ModelProto field 6, a string, appended:
 * protobuf takes the last value of a field), so that every copy is a file of its own, as a repository's models
 * are: the Worker's bundler stores identical files once.
 */
function withDocString(bytes: Uint8Array, doc: string): Uint8Array {
  const text = new TextEncoder().encode(doc);
  if (text.length > 127) throw new Error("doc_string too long for a one-byte length");
  return Uint8Array.from([...bytes, (6 << 3) | 2, text.length, ...text]);
}

/**
 * Copy `models/<from>` (config renamed; files copied, or hard-linked with `link`) to `<dir>/<to>`; with
 * `distinct`, each version's model file is made a file of its own (`withDocString`) and config.json lists its
 * size and sha256.
 */
function copyModel(dir: string, from: string, sample: string, to: string, link: boolean, distinct: boolean): void {
  const source = join(MODELS_DIR, from);
  const target = join(dir, to);
  mkdirSync(target);
  const config = renamed(
    JSON.parse(readFileSync(join(source, "config.json"), "utf8")),
    sample,
    to.replace(/-edge$/, ""),
  );
  const versions = config.versions as Record<string, { file: string; sha256: string; bytes: number }>;
  for (const version of readdirSync(source, { withFileTypes: true })) {
    if (!version.isDirectory()) continue;
    mkdirSync(join(target, version.name));
    const modelFile = versions[version.name]?.file;
    for (const file of readdirSync(join(source, version.name))) {
      const [from, into] = [join(source, version.name, file), join(target, version.name, file)];
      if (distinct && file === modelFile) {
        const bytes = withDocString(
          readFileSync(from),
          `${to} (a copy of ${from.slice(MODELS_DIR.length)})`.slice(0, 127),
        );
        writeFileSync(into, bytes);
        const entry = versions[version.name]!;
        entry.bytes = bytes.length;
        entry.sha256 = createHash("sha256").update(bytes).digest("hex");
      } else {
        (link ? linkSync : copyFileSync)(from, into);
      }
    }
  }
  writeFileSync(join(target, "config.json"), JSON.stringify(config));
}

/**
 * A scratch model repository of `count` models, copies of the samples under distinct names (`digits-0000`,
 * `breast-cancer-0001`, ...), each with its edge variant (`digits-0000-edge`): what a repository of many
 * models looks like to both tiers (the benchmark of many models, the edge bundle's size, tests). With `link`
 * the files are hard links to models/, so a thousand copies take no room: never write into them (a write would
 * change models/ too; replace a file instead). The edge variants' files are always files of their own (as in
 * a real repository: the Worker bundles each, `withDocString`); the full models' are with `distinct`.
 * `remove()` deletes it.
 */
export function repositoryOfCopies(
  count: number,
  { link = false, distinct = false, parent = tmpdir() }: { link?: boolean; distinct?: boolean; parent?: string } = {},
): { dir: string; names: string[]; remove(): void } {
  const dir = mkdtempSync(join(parent, "edgecascade-copies-"));
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = copyName(i);
    const sample = copiedFrom(name);
    copyModel(dir, sample, sample, name, link, distinct);
    copyModel(dir, `${sample}-edge`, sample, `${name}-edge`, link, true);
    names.push(name);
  }
  return { dir, names, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
