/**
 * `npm run deploy -- --env <name> [--percent P [--version-id ID]] [--rollback] [--secrets-file F] [--allow-open]
 * [--take-over-dns] [--message M] [--dry-run] [--rehearse]`: deploys the edge Worker to one of wrangler.toml's
 * environments, at once or gradually with Worker versions, or rolls it back. The top level of wrangler.toml is
 * the local stack and is never deployed. Each step is printed on stderr as it runs (tools/deploy/steps.ts);
 * stdout gets the ID of the version that serves afterwards (for a dry run: the commands it would run).
 * `--rehearse` runs the same steps against stand-ins on this machine (tools/deploy/rehearsal/).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { defineCommand, runMain } from "./cli/command.ts";
import { DEPLOY_DESCRIPTION, DEPLOY_FLAGS, DEPLOY_USAGE, deployableEnvs, deployRequest } from "./deploy/plan.ts";
import { ROOT } from "./edge-bundle/build-edge.ts";

// Run as the main module. import.meta.url is percent-encoded, so compare it with argv[1] as a URL too:
// a checkout path with a space must not turn the script into a silent no-op.
if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  runMain(
    defineCommand({
      name: "deploy",
      usage: DEPLOY_USAGE,
      description: DEPLOY_DESCRIPTION,
      flags: DEPLOY_FLAGS,
      parse: { passThrough: true },
      async run(values, { rest }, out) {
        const request = deployRequest(values, rest, deployableEnvs(readFileSync(join(ROOT, "wrangler.toml"), "utf8")));
        if (request.mode === "deploy" && request.rehearse) {
          const { rehearse } = await import("./deploy/rehearsal/rehearse.ts");
          return rehearse(request);
        }
        const { runDeploy } = await import("./deploy/steps.ts");
        for (const line of await runDeploy(request)) out.log(line);
        return 0;
      },
    }),
  );
}
