/**
 * Enough of a Dockerfile reader to replay a build's file and install steps without a Docker engine: stages,
 * their base, ARG/ENV, WORKDIR, COPY (from the context or another stage), RUN, USER, ENTRYPOINT and CMD.
 * test/deploy/image.test.ts replays the repository's Dockerfile with it.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";

export interface Instruction {
  op: string;
  /** The text after the keyword, continuations joined. */
  args: string;
  /** `--from=x` and the like. */
  flags: Record<string, string>;
}

export interface Stage {
  name: string;
  /** A previous stage's name, or an image reference. */
  from: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  globalArgs: Record<string, string>;
  stages: Stage[];
}

function substitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a, b) => vars[a ?? b] ?? whole);
}

/** Instructions with continuation lines joined; comments and parser directives dropped. */
export function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!pending && (line === "" || line.startsWith("#"))) continue;
    if (pending && line.startsWith("#")) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(pending + line);
    pending = "";
  }
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = "", rest = ""] = line.match(/^(\S+)\s*(.*)$/) ?? [];
    const op = keyword.toUpperCase();
    const flags: Record<string, string> = {};
    let args = rest;
    while (args.startsWith("--")) {
      const [, name = "", value = "", tail = ""] = args.match(/^--([\w-]+)=(\S+)\s*(.*)$/) ?? [];
      if (!name) break;
      flags[name] = value;
      args = tail;
    }
    if (op === "FROM") {
      const [image = "", as, name] = args.split(/\s+/);
      const from = substitute(image, globalArgs);
      stages.push({
        name: as?.toUpperCase() === "AS" && name ? name : String(stages.length),
        from,
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (op !== "ARG") throw new Error(`${op} before the first FROM`);
      const [name = "", value = ""] = args.split("=", 2);
      globalArgs[name] = value;
    } else {
      stages.at(-1)!.instructions.push({ op, args, flags });
    }
  }
  return { globalArgs, stages };
}

/** Exec form (`["a", "b"]`) as an array; shell form as `sh -c`. */
export function commandOf(args: string): string[] {
  return args.startsWith("[") ? (JSON.parse(args) as string[]) : ["/bin/sh", "-c", args];
}

/** `KEY=value KEY2="value 2"` (ENV's modern form). */
export function envPairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/(\w+)=("([^"]*)"|\S*)/g)) out[m[1]!] = m[3] ?? m[2]!;
  return out;
}

/**
 * A .dockerignore pattern as a regular expression, with Docker's meaning (Go's filepath.Match plus `**`):
 * `*` and `?` stay within one path segment and match dot files too, `**` spans any number of segments.
 */
export function dockerignoreRegExp(pattern: string): RegExp {
  const glob = posix.normalize(pattern).replace(/^\/+|\/+$/g, "");
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      const slash = glob[i + 2] === "/";
      re += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Whether `.dockerignore` excludes a context path: the last pattern matching it or one of its parents wins. */
export function isIgnored(path: string, patterns: readonly string[]): boolean {
  let ignored = false;
  const prefixes = path.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"));
  for (const raw of patterns) {
    const negated = raw.startsWith("!");
    const re = dockerignoreRegExp(negated ? raw.slice(1) : raw);
    if (prefixes.some((p) => re.test(p))) ignored = !negated;
  }
  return ignored;
}

export function dockerignorePatterns(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
}

/** Copy `src` (a file or directory of the context) to `dest`, leaving out what `.dockerignore` excludes. */
export function copyFromContext(context: string, src: string, dest: string, ignore: readonly string[]): number {
  const rel = posix.normalize(src).replace(/^\/+/, "");
  const from = join(context, rel);
  let files = 0;
  const walk = (path: string) => {
    const relPath = relative(context, path);
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path)) walk(join(path, entry));
    } else if (!isIgnored(relPath, ignore)) {
      const target = join(dest, relative(from, path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
      files++;
    }
  };
  if (!existsSync(from)) throw new Error(`COPY ${src}: not in the build context`);
  walk(from);
  return files;
}
