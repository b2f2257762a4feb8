// `npm run dashboards [-- --check]`: writes the Grafana dashboards (tools/dashboards/, Grafana's Foundation SDK)
// to deploy/grafana/*.json, the files an operator imports or provisions (docs/observability.md); `--check` only
// compares them with what the code generates and fails when they differ.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineCommand, runMain } from "./cli/command.ts";
import { RefusedError } from "./cli/errors.ts";
import { DASHBOARDS, dashboardJson } from "./dashboards/dashboards.ts";

const OUT = fileURLToPath(new URL("../deploy/grafana/", import.meta.url));

runMain(
  defineCommand({
    name: "dashboards",
    usage: "npm run dashboards [-- --check]",
    description: "The Grafana dashboards of deploy/grafana/, generated from tools/dashboards/ (Foundation SDK).",
    flags: {
      check: { type: "boolean", help: "compare the committed files with the generated ones; write nothing" },
    },
    async run(values, _args, out) {
      const stale: string[] = [];
      for (const [file, build] of Object.entries(DASHBOARDS)) {
        const json = dashboardJson(build);
        const path = `${OUT}${file}`;
        if (values.check) {
          let committed = "";
          try {
            committed = readFileSync(path, "utf8");
          } catch {
            // Missing: stale.
          }
          if (committed !== json) stale.push(file);
        } else {
          writeFileSync(path, json);
          out.log(`deploy/grafana/${file}`);
        }
      }
      if (stale.length > 0) {
        throw new RefusedError(`${stale.join(", ")} differ from what tools/dashboards/ generates: npm run dashboards`);
      }
      return 0;
    },
  }),
);
