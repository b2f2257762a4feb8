/**
 * The MODEL_PUBLIC_KEY the Worker will hold after a deploy, which is the key its edge models must pass before
 * anything is uploaded (tools/deploy/verify-models.ts). Not the deploying shell's key as such: an environment
 * that does not require signed models (staging, for builds between releases) and is given no key keeps serving
 * unsigned models, whatever the shell exports.
 */

export type ModelKey =
  | { key: string; from: string }
  /** The Worker will hold no key: edge models are checked against their sha256 only. */
  | { key: undefined; from: string; shellKeyIgnored: boolean };

/**
 * In order: the secrets file's value (uploaded with this version; wrangler lets a shell variable of the same name
 * override it, and so did `parseSecretsFile`), the environment's var in wrangler.toml, and the key the Worker
 * already holds as a secret, which cannot be read back, so the shell must give it (`MODEL_PUBLIC_KEY`) or the
 * deploy is refused. `onWorker` undefined: not asked (a dry run), the shell's key then counts.
 */
export function modelKey(input: {
  env: string;
  fromFile?: string;
  fromVars?: string;
  onWorker: readonly string[] | undefined;
  shell?: string;
}): ModelKey {
  const { env, fromFile, fromVars, onWorker, shell } = input;
  if (fromFile) return { key: fromFile, from: "--secrets-file" };
  if (fromVars) return { key: fromVars, from: `wrangler.toml [env.${env}.vars]` };
  if (onWorker === undefined) {
    return shell
      ? { key: shell, from: "the shell's MODEL_PUBLIC_KEY" }
      : { key: undefined, from: "no MODEL_PUBLIC_KEY", shellKeyIgnored: false };
  }
  if (onWorker.includes("MODEL_PUBLIC_KEY")) {
    if (!shell) {
      throw new Error(
        `${env}'s Worker holds a MODEL_PUBLIC_KEY secret, which cannot be read back to check the edge models against: ` +
          "export MODEL_PUBLIC_KEY=<that key> for the deploy, or give it in --secrets-file",
      );
    }
    return { key: shell, from: `the shell's MODEL_PUBLIC_KEY (${env}'s Worker holds one; it cannot be read back)` };
  }
  return { key: undefined, from: `${env}'s Worker gets no MODEL_PUBLIC_KEY`, shellKeyIgnored: Boolean(shell) };
}
