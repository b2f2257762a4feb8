/**
 * Enough of a Dockerfile reader to replay a build's file and install steps without a Docker engine: stages,
 * their base, ARG/ENV, WORKDIR, COPY (from the context or another stage), RUN, USER, ENTRYPOINT and CMD.
 * test/deploy/image.test.ts replays the repository's Dockerfile with it.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, posix, relative } from "node:path";

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

/** RUN lines that install system packages: replayed by checking that the host has those packages. */
export const APT =
  /^apt-get update && apt-get install -y --no-install-recommends ([\w\s.+-]+?) && rm -rf \/var\/lib\/apt\/lists\/\*$/;

export interface Replayed {
  /** The stage's filesystem: container path `/x` is `${root}/x`. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  entrypoint: string[];
  cmd: string[];
  systemPackages: string[];
}

/**
 * Replay a stage as `docker build --target` would run it, on this machine: COPY from the context (filtered by
 * .dockerignore) or from another replayed stage, RUN in the stage's WORKDIR with its ENV. Only RUN lines
 * that install Debian packages are not run; their packages are returned for the caller to check.
 */
export function replay(
  file: Dockerfile,
  name: string,
  build: { context: string; ignore: readonly string[]; into: string },
  done = new Map<string, Replayed>(),
): Replayed {
  const cached = done.get(name);
  if (cached) return cached;
  const s = file.stages.find((st) => st.name === name);
  if (!s) throw new Error(`Dockerfile has no stage ${name}`);
  const { context, ignore, into } = build;
  const root = join(into, name);
  const parent = file.stages.some((p) => p.name === s.from) ? replay(file, s.from, build, done) : undefined;
  mkdirSync(root, { recursive: true });
  if (parent) cpSync(parent.root, root, { recursive: true });
  const state: Replayed = {
    root,
    workdir: parent?.workdir ?? "/",
    env: { ...parent?.env },
    user: parent?.user,
    entrypoint: parent?.entrypoint ?? [],
    cmd: parent?.cmd ?? [],
    systemPackages: [...(parent?.systemPackages ?? [])],
  };
  const inside = (path: string) => join(root, posix.resolve(state.workdir, path));
  for (const { op, args, flags } of s.instructions) {
    if (op === "WORKDIR") {
      state.workdir = posix.resolve(state.workdir, args);
      mkdirSync(inside("."), { recursive: true });
    } else if (op === "ENV") {
      Object.assign(state.env, envPairs(args));
    } else if (op === "USER") {
      state.user = args;
    } else if (op === "ENTRYPOINT") {
      state.entrypoint = commandOf(args);
      state.cmd = [];
    } else if (op === "CMD") {
      state.cmd = commandOf(args);
    } else if (op === "COPY") {
      const parts = args.split(/\s+/);
      const dest = parts.pop()!;
      for (const src of parts) {
        if (flags.from) {
          const from = replay(file, flags.from, build, done);
          cpSync(join(from.root, src), inside(dest), { recursive: true });
        } else {
          // A directory's contents go into dest; a file goes into dest when dest ends with "/".
          const isFile = !statSync(join(context, src)).isDirectory();
          copyFromContext(
            context,
            src,
            isFile && dest.endsWith("/") ? inside(posix.join(dest, basename(src))) : inside(dest),
            ignore,
          );
        }
      }
    } else if (op === "RUN") {
      const apt = args.match(APT);
      if (apt) {
        state.systemPackages.push(...apt[1]!.split(/\s+/));
        continue;
      }
      execFileSync("/bin/sh", ["-c", args], {
        cwd: inside("."),
        env: { ...buildEnvironment, ...state.env },
        stdio: "pipe",
        timeout: 300_000,
      });
    } else if (!["EXPOSE", "ARG", "LABEL"].includes(op)) {
      throw new Error(`replay does not know ${op}`);
    }
  }
  done.set(name, state);
  return state;
}

/**
 * RUN lines see this machine's environment (its registry access, certificates), as `docker build` sees its
 * daemon's network, less what `npm test` and vitest set for themselves: npm's lifecycle variables would
 * point the install at this checkout.
 */
const buildEnvironment = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(npm_|VITEST|NODE_ENV$|NODE_OPTIONS$)/i.test(name)),
);
