/**
 * wrangler's own command tree (`experimental_getWranglerCommands`, what its shell completions are made from),
 * read in this process: no wrangler run per command the docs name.
 */
import { join } from "node:path";

export interface WranglerCommand {
  path: string[];
  positionals: number;
  flags: Set<string>;
}

/**
 * The command a list of words names (the longest path of subcommands), how many positional arguments it takes,
 * and its flags with their aliases and wrangler's global flags.
 */
export async function wranglerCommands(
  root: string,
): Promise<{ find(words: readonly string[]): WranglerCommand | undefined }> {
  type Node = {
    subtree: Map<string, Node>;
    definition?: { type: string; args?: Record<string, { alias?: string | string[] }>; positionalArgs?: string[] };
  };
  const { experimental_getWranglerCommands } = (await import(
    join(root, "node_modules/wrangler/wrangler-dist/cli.js")
  )) as {
    experimental_getWranglerCommands(): { registry: Node; globalFlags: Record<string, { alias?: string | string[] }> };
  };
  const { registry, globalFlags } = experimental_getWranglerCommands();
  const names = (args: Record<string, { alias?: string | string[] }>) =>
    Object.entries(args).flatMap(([name, def]) =>
      [name, ...[def.alias ?? []].flat()].map((n) => (n.length === 1 ? `-${n}` : `--${n}`)),
    );
  return {
    find(words) {
      let node = registry;
      const path: string[] = [];
      for (const word of words) {
        const next = node.subtree.get(word);
        if (!next) break;
        node = next;
        path.push(word);
      }
      const def = node.definition;
      if (def?.type !== "command") return undefined;
      return {
        path,
        positionals: def.positionalArgs?.length ?? 0,
        flags: new Set([...names(def.args ?? {}), ...names(globalFlags), "--help"]),
      };
    },
  };
}
