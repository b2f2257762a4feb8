/**
 * `npm run model -- <subcommand> [options]`: bring your own model (import, quantize, inspect). The
 * subcommands are listed in tools/model/commands.ts; docs/model-tool.md describes them.
 */
import { runModelCli } from "./model/cli.ts";
import { COMMANDS } from "./model/commands.ts";

runModelCli(process.argv.slice(2), COMMANDS, {
  log: (line) => console.log(line),
  note: (line) => console.error(line),
}).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`model: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
