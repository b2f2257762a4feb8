/** deploy/versions.yaml, and the `helm` installs of the docs it pins. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { commandsOf, type DocFile } from "./doc-items.ts";

export interface Versions {
  kubernetes: { supported: { min: string; max: string }; apis: string[] };
  components: {
    name: string;
    release: string;
    chart: string;
    repository?: string;
    version: string;
    kubernetes: { min: string; max?: string };
    apis?: string[];
  }[];
}

export const readVersions = (root: string): Versions =>
  parseYaml(readFileSync(join(root, "deploy/versions.yaml"), "utf8")) as Versions;

/** `helm install|upgrade <release> <chart> ...` commands of the docs, with their --version. */
export function helmInstalls(
  docs: readonly DocFile[],
): { where: string; release: string; chart: string; version?: string }[] {
  const found: { where: string; release: string; chart: string; version?: string }[] = [];
  for (const { where, command } of commandsOf(docs)) {
    const [program, verb, release, chart] = command.words;
    if (program !== "helm" || (verb !== "install" && verb !== "upgrade") || !release || !chart) continue;
    const i = command.words.indexOf("--version");
    found.push({ where, release, chart, ...(i > 0 ? { version: command.words[i + 1]! } : {}) });
  }
  return found;
}
