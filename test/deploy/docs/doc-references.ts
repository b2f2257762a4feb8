/**
 * What the docs name must exist: in every shell block (run or not) and every inline code span of the docs,
 * `npm run`/`npm start` scripts and their flags (each tool's own `--help`), wrangler commands and flags
 * (wrangler's `--help`), `--env` environments (wrangler.toml), files of the repository and the pages and
 * anchors links point at, environment variable names (somewhere in the code, or in the dependency that reads
 * them), the `kubectl` objects, labels and Secret/ConfigMap keys of the edgecascade namespace (the rendered
 * manifests, and what the docs create), and `helm` charts, repositories and versions (deploy/versions.yaml).
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { commandsOf, type DocFile, itemsOf } from "./doc-items.ts";
import { helmInstalls, readVersions } from "./versions.ts";
import { wranglerCommands } from "./wrangler-commands.ts";

const run = promisify(execFile);

export interface Problem {
  where: string;
  what: string;
}

/** Environment variables the docs may name that are read by a dependency, not by this repository's code. */
export const DEPENDENCY_VARIABLES: Readonly<Record<string, string>> = {
  GLOBAL_AGENT_HTTPS_PROXY: "node_modules/onnxruntime-node/script/install.js",
  CLOUDFLARE_API_BASE_URL: "node_modules/wrangler/wrangler-dist/cli.js",
};

// biome-ignore lint/suspicious/noExplicitAny: rendered YAML
type Obj = any;

const placeholder = (word: string) => /[<>…$*{}]|^\.\.\.$/.test(word);
const flagName = (word: string) => word.replace(/=.*$/s, "");
const flagsIn = (help: string) => new Set([...help.matchAll(/(?<![\w-])(--[a-z][\w-]*)/g)].map((m) => m[1]!));

/** GitHub's heading anchors. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, "")
    .replace(/ /g, "-");
}

function anchors(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => anchorOf(m[1]!.replace(/`/g, ""))));
}

/** Every text file git would commit, but the docs: what "the code" is when a name must be known to it. */
function codeCorpus(root: string): string {
  const parts: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      if ([".git", "node_modules", ".build", "bench", "docs", "test", ".wrangler"].includes(entry)) continue;
      const path = join(dir, entry);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else if (
        /\.(ts|js|toml|ya?ml|sh|py|json|service|timer|Containerfile)$|Dockerfile|\.npmrc$/.test(entry) &&
        stat.size < 2e6
      ) {
        if (!/package-lock\.json$/.test(entry)) parts.push(readFileSync(path, "utf8"));
      }
    }
  };
  walk(root);
  return parts.join("\n");
}

export async function docProblems(docs: readonly DocFile[], root: string, manifests: Obj[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  const problem = (where: string, what: string): void => {
    problems.push({ where, what });
  };
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
  const envs = [...readFileSync(join(root, "wrangler.toml"), "utf8").matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map(
    (m) => m[1]!,
  );
  const versions = readVersions(root);
  const corpus = codeCorpus(root);
  const items = itemsOf(docs);
  const commands = commandsOf(docs);
  const shellVariables = new Set(
    items
      .filter((i) => i.kind === "block")
      .flatMap((i) => [...i.text.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((m) => m[1]!)),
  );

  const helpCache = new Map<string, Promise<string>>();
  let running = 0;
  const waiting: (() => void)[] = [];
  /** A tool's --help, three at a time (2 cores, shared). */
  const help = (program: string, args: string[]) => {
    const key = `${program} ${args.join(" ")}`;
    if (!helpCache.has(key)) {
      const start = async () => {
        while (running >= 3) await new Promise<void>((resolve) => waiting.push(resolve));
        running++;
        try {
          const { stdout, stderr } = await run(program, [...args, "--help"], {
            cwd: root,
            env: { ...process.env, NO_COLOR: "1" },
          });
          return stdout + stderr;
        } catch (err) {
          const { stdout = "", stderr = "" } = err as { stdout?: string; stderr?: string };
          return `FAILED ${stdout}${stderr}`;
        } finally {
          running--;
          waiting.shift()?.();
        }
      };
      helpCache.set(key, start());
    }
    return helpCache.get(key)!;
  };
  const wranglerTree = await wranglerCommands(root);
  const checks: Promise<void>[] = [];

  const checkEnv = (where: string, args: readonly string[], allowed: readonly string[]) => {
    args.forEach((arg, i) => {
      const value = arg === "--env" || arg === "-e" ? args[i + 1] : arg.startsWith("--env=") ? arg.slice(6) : undefined;
      if (value !== undefined && !placeholder(value) && !allowed.includes(value)) {
        problem(where, `--env ${value}: wrangler.toml has no such environment (${allowed.join(", ")})`);
      }
    });
  };

  const checkWrangler = (where: string, args: string[]) => {
    checkEnv(where, args, envs);
    const words = args.filter((a, i) => !a.startsWith("-") && !args[i - 1]?.match(/^--?[\w-]+$/));
    const found = wranglerTree.find(words);
    if (!found) return problem(where, `wrangler ${words.join(" ")}: not a wrangler command`);
    const extra = words.length - found.path.length;
    if (extra > found.positionals) {
      return problem(
        where,
        `wrangler ${words.join(" ")}: "wrangler ${found.path.join(" ")}" takes ${found.positionals} arguments, not "${words.slice(found.path.length).join(" ")}"`,
      );
    }
    for (const a of args.filter((x) => x.startsWith("--"))) {
      if (!found.flags.has(flagName(a))) problem(where, `wrangler ${found.path.join(" ")}: no flag ${flagName(a)}`);
    }
  };

  const checkNpm = (where: string, words: string[]) => {
    let rest = words.slice(1);
    let script: string | undefined;
    if (rest[0] === "start" || rest[0] === "test") script = rest.shift();
    else if (rest[0] === "run") {
      rest = rest.slice(1);
      // npm's own options (--silent) come before the script's name.
      while (rest[0]?.startsWith("-") && rest[0] !== "--") rest = rest.slice(1);
      script = rest.shift();
    } else return;
    if (!script || placeholder(script)) return;
    if (!(script in pkg.scripts)) return problem(where, `npm run ${script}: package.json has no such script`);
    const args = rest[0] === "--" ? rest.slice(1) : [];
    // The script's program: the last .ts file it runs (`node --import ./scripts/require-node.mjs tools/deploy.ts`).
    const program = [...pkg.scripts[script]!.matchAll(/(?<=\s)([\w./-]+\.ts)(?=\s|$)/g)].at(-1)?.[1];
    if (!program || args.length === 0) return;
    checkEnv(where, args, script === "rollout" ? [...envs, "local"] : envs);
    const sub = args[0] && !args[0].startsWith("-") && !placeholder(args[0]) ? [args[0]] : [];
    // npm run deploy passes what it does not know to wrangler deploy.
    const passThrough = script === "deploy" ? wranglerTree.find(["deploy"])!.flags : new Set<string>();
    checks.push(
      help(process.execPath, [program, ...sub]).then((text) => {
        if (text.startsWith("FAILED"))
          return problem(where, `npm run ${script} -- ${sub.join(" ")} --help failed: ${text.slice(0, 300)}`);
        const known = flagsIn(text);
        for (const a of args.filter((x) => x.startsWith("--"))) {
          if (!known.has(flagName(a)) && !passThrough.has(flagName(a))) {
            problem(where, `npm run ${script}${sub.length ? ` -- ${sub[0]}` : ""}: no flag ${flagName(a)}`);
          }
        }
      }),
    );
  };

  // kubectl: the edgecascade namespace's objects as the overlay renders them and as the docs create them.
  const aliases: Record<string, string> = {
    deployment: "Deployment",
    deploy: "Deployment",
    scaledobject: "ScaledObject",
    so: "ScaledObject",
    gateway: "Gateway",
    service: "Service",
    svc: "Service",
    configmap: "ConfigMap",
    cm: "ConfigMap",
    secret: "Secret",
    hpa: "HorizontalPodAutoscaler",
    networkpolicy: "NetworkPolicy",
    httproute: "HTTPRoute",
    grpcroute: "GRPCRoute",
    pdb: "PodDisruptionBudget",
    poddisruptionbudget: "PodDisruptionBudget",
  };
  const objects = new Map<string, Set<string>>();
  const add = (kind: string, name: string) => objects.set(kind, (objects.get(kind) ?? new Set()).add(name));
  for (const o of manifests) if (o.metadata?.namespace === "edgecascade") add(o.kind, o.metadata.name);
  // KEDA names the HPA it makes for a ScaledObject keda-hpa-<name>.
  for (const o of manifests)
    if (o.kind === "ScaledObject") add("HorizontalPodAutoscaler", `keda-hpa-${o.metadata.name}`);
  const created = new Map<string, Set<string>>();
  const namespaces = new Set([
    "edgecascade",
    "kube-system",
    ...manifests.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name),
  ]);
  for (const { command } of commands) {
    const w = command.words;
    if (w[0] === "helm") {
      const i = w.findIndex((x) => x === "-n" || x === "--namespace");
      if (i > 0 && w[i + 1]) namespaces.add(w[i + 1]!);
    }
    if (w[0] === "kubectl" && w.includes("create") && (w.includes("secret") || w.includes("configmap"))) {
      const kind = w.includes("secret") ? "Secret" : "ConfigMap";
      const name =
        w[
          w.indexOf(kind === "Secret" ? "secret" : "configmap") + (w.includes("generic") || w.includes("tls") ? 2 : 1)
        ]!;
      add(kind, name);
      const keys = w
        .filter((x) => x.startsWith("--from-literal=") || x.startsWith("--from-file="))
        .map((x) => x.split("=")[1]!);
      if (w.includes("tls")) keys.push("tls.crt", "tls.key");
      created.set(`${kind}/${name}`, new Set([...(created.get(`${kind}/${name}`) ?? []), ...keys]));
    }
  }
  const podLabels: Record<string, string> =
    manifests.find((o) => o.kind === "Deployment")?.spec.template.metadata.labels ?? {};

  const checkKubectl = (where: string, words: string[]) => {
    let namespace: string | undefined;
    const positionals: string[] = [];
    for (let i = 1; i < words.length; i++) {
      const w = words[i]!;
      if (w === "--") break;
      if (
        [
          "-n",
          "--namespace",
          "--context",
          "-o",
          "-p",
          "--type",
          "-f",
          "-k",
          "--timeout",
          "--field-selector",
          "--since",
          "--for",
          "-c",
        ].includes(w)
      ) {
        if (w === "-n" || w === "--namespace") namespace = words[i + 1];
        i++;
        continue;
      }
      if (w === "-l" || w === "--selector") {
        for (const pair of (words[++i] ?? "").split(",")) {
          const [k, v] = pair.split("=");
          if (k && v && !placeholder(pair) && podLabels[k] !== v)
            problem(where, `kubectl -l ${pair}: the pool's pods have no such label`);
        }
        continue;
      }
      if (!w.startsWith("-")) positionals.push(w);
    }
    if (namespace && !placeholder(namespace) && !namespaces.has(namespace)) {
      problem(where, `kubectl -n ${namespace}: neither the manifests nor the docs' installs make this namespace`);
    }
    if (namespace !== "edgecascade") return;
    const refs: [string, string][] = [];
    for (const p of positionals) {
      const m = p.match(/^([a-z]+)\/([\w.-]+)$/);
      if (m && aliases[m[1]!]) refs.push([aliases[m[1]!]!, m[2]!]);
    }
    const [verb, kindWord, name] = positionals;
    if (
      ["get", "describe", "annotate", "patch", "delete", "label"].includes(verb ?? "") &&
      kindWord &&
      aliases[kindWord] &&
      name
    ) {
      refs.push([aliases[kindWord]!, name]);
    }
    for (const [kind, n] of refs) {
      if (!placeholder(n) && !objects.get(kind)?.has(n))
        problem(where, `kubectl: no ${kind} "${n}" in namespace edgecascade`);
    }
  };

  const checkHelm = (where: string, words: string[]) => {
    const [, verb, a, b] = words;
    if (verb === "repo" && a === "add" && b) {
      const url = words[4];
      const component = versions.components.find((c) => c.chart.startsWith(`${b}/`));
      if (!component) problem(where, `helm repo add ${b}: no component of deploy/versions.yaml comes from it`);
      else if (component.repository !== url)
        problem(where, `helm repo add ${b} ${url}: deploy/versions.yaml has ${component.repository}`);
    }
  };

  for (const { where, command, kind } of commands) {
    const w = command.words;
    for (const { name } of command.assignments) {
      if (!shellVariables.has(name) && !knows(name)) problem(where, `${name}: no code reads this variable`);
    }
    if (w[0] === "npm") checkNpm(where, w);
    else if (w[0] === "npx" && w[1] === "wrangler") checkWrangler(where, w.slice(2));
    else if (w[0] === "kubectl") checkKubectl(where, w);
    else if (w[0] === "helm") checkHelm(where, w);
    if (w[0] === "kubectl") {
      // Its words are objects (deploy/regional), but for the files -f and -k name.
      for (const [i, word] of w.entries()) if (w[i - 1] === "-f" || w[i - 1] === "-k") checkPath(where, word);
    } else if (kind === "block" || w.length > 1) for (const word of w) checkPath(where, word);
  }
  for (const install of helmInstalls(docs)) {
    const component = versions.components.find((c) => c.chart === install.chart);
    if (!component) problem(install.where, `helm ${install.chart}: not in deploy/versions.yaml`);
    else if (install.version !== component.version) {
      problem(
        install.where,
        `helm ${install.chart}: --version ${install.version ?? "(none)"}, deploy/versions.yaml pins ${component.version}`,
      );
    }
  }
  // The Deployment's secretKeyRef and configMapKeyRef keys: the docs must create each with those keys.
  for (const container of manifests.find((o) => o.kind === "Deployment")?.spec.template.spec.containers ?? []) {
    for (const env of container.env ?? []) {
      const ref = env.valueFrom?.secretKeyRef ?? env.valueFrom?.configMapKeyRef;
      if (!ref) continue;
      const kind = env.valueFrom.secretKeyRef ? "Secret" : "ConfigMap";
      if (!created.get(`${kind}/${ref.name}`)?.has(ref.key)) {
        problem(
          "docs",
          `${env.name} reads ${kind} ${ref.name} key ${ref.key}, which no kubectl create in the docs makes`,
        );
      }
    }
  }
  for (const item of items.filter((i) => i.kind === "inline")) {
    if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(item.text) && !knows(item.text))
      problem(item.where, "no code reads this variable");
    if (/^[\w./-]+$/.test(item.text)) checkPath(item.where, item.text);
  }
  for (const doc of docs) {
    for (const m of doc.markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [file, anchor] = target.split("#");
      const path = file ? join(dirname(doc.path), file) : doc.path;
      if (!existsSync(join(root, path))) {
        problem(doc.path, `link ${target}: no file ${path}`);
        continue;
      }
      if (anchor && path.endsWith(".md") && !anchors(readFileSync(join(root, path), "utf8")).has(anchor)) {
        problem(doc.path, `link ${target}: ${path} has no heading #${anchor}`);
      }
    }
  }
  await Promise.all(checks);
  return problems;

  function knows(name: string): boolean {
    if (corpus.includes(name)) return true;
    const dependency = DEPENDENCY_VARIABLES[name];
    return (
      dependency !== undefined &&
      existsSync(join(root, dependency)) &&
      readFileSync(join(root, dependency), "utf8").includes(name)
    );
  }

  function checkPath(where: string, raw: string) {
    const word = raw.replace(/\/$/, "");
    const m = word.match(
      /^(?:\.\/)?((?:deploy|tools|docs|edge|regional|protocol|scripts|test|models|hono-shared|\.ci)\/[\w./-]*\w|wrangler\.toml|Dockerfile|\.dockerignore|package(?:-lock)?\.json|\.npmrc)(?::\d+)?$/,
    );
    if (!m || placeholder(word)) return;
    const path = m[1]!;
    if (!existsSync(join(root, path))) problem(where, `${path}: no such file in the repository`);
  }
}
