/**
 * Edits to one environment's table of the generated wrangler config, as text (wrangler.toml keeps its comments
 * and layout; no TOML writer would). Each expects the environment's lines as wrangler.toml writes them: one
 * `key = ...` line per setting right in `[env.<env>]`.
 */

function section(toml: string, env: string): { start: number; end: number; text: string } {
  const start = toml.indexOf(`\n[env.${env}]\n`);
  if (start < 0) throw new Error(`no [env.${env}] table in the wrangler config`);
  const next = toml.indexOf("\n[", start + 1);
  const end = next < 0 ? toml.length : next;
  return { start, end, text: toml.slice(start, end) };
}

function replaceInSection(toml: string, env: string, edit: (text: string) => string): string {
  const { start, end, text } = section(toml, env);
  return toml.slice(0, start) + edit(text) + toml.slice(end);
}

/**
 * `names` dropped from the environment's `secrets.required`, for an --allow-open deploy: wrangler itself refuses
 * to upload a version that lacks a required secret.
 */
export function withoutRequiredSecrets(toml: string, env: string, names: readonly string[]): string {
  return replaceInSection(toml, env, (text) => {
    const line = text.match(/^secrets = \{ required = (\[[^\]]*\]) \}$/m);
    if (!line) throw new Error(`[env.${env}] has no "secrets = { required = [...] }" line`);
    const kept = (JSON.parse(line[1]!) as string[]).filter((n) => !names.includes(n));
    return text.replace(line[0], `secrets = { required = ${JSON.stringify(kept).replace(/","/g, '", "')} }`);
  });
}

/**
 * The environment without its `routes`: a first deploy uploads the Worker first, so that Cloudflare can be asked
 * what its Custom Domains would take over before `wrangler triggers deploy` attaches them.
 */
export function withoutRoutes(toml: string, env: string): string {
  return replaceInSection(toml, env, (text) => {
    const line = text.match(/^routes = \[.*\]$/m);
    if (!line) throw new Error(`[env.${env}] has no "routes = [...]" line`);
    return text.replace(`${line[0]}\n`, "");
  });
}

/** The environment's KV namespace ids replaced (binding name → id). */
export function withKvNamespaceIds(toml: string, env: string, ids: Readonly<Record<string, string>>): string {
  return replaceInSection(toml, env, (text) => {
    let edited = text;
    for (const [binding, id] of Object.entries(ids)) {
      const pattern = new RegExp(`(\\{ binding = "${binding}", id = ")[^"]*(")`);
      if (!pattern.test(edited)) throw new Error(`[env.${env}] has no kv_namespaces entry for ${binding}`);
      edited = edited.replace(pattern, `$1${id}$2`);
    }
    return edited;
  });
}

/** A namespace id wrangler.toml ships as a placeholder (`<production REGION_STATUS namespace id>`). */
export const isPlaceholderId = (id: string) => /^<.*>$/.test(id);
