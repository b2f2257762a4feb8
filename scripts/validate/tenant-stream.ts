/**
 * Tenant A's requests for validate:overload's two tenants (two-tenants.ts), in a process of their own so that the
 * process flooding as tenant B, busy with its own answers, does not stand between A's answers and their clock:
 * `node scripts/validate/tenant-stream.ts '<StreamArgs JSON>'` sends A's single unsure rows open loop as the edge
 * forwards them, checks every answer, and prints A's tally as JSON.
 */
import { edgeAnswers } from "../../protocol/heldout.ts";
import { openLoop } from "../../tools/probe/load.ts";
import { validationModel } from "./model.ts";
import { type StreamArgs, stream } from "./two-tenants/forwards.ts";

const args = JSON.parse(process.argv[2] ?? "{}") as StreamArgs;
const model = validationModel(args.model);
const unsure = model.rows.filter((r) => !edgeAnswers(r, model.threshold, model.edgeModel));
const a = stream("a", model, unsure, 1, args.sloMs);
const run = await openLoop({
  origin: args.origin,
  rate: args.rate,
  durationS: args.durationS,
  connections: 64,
  timeoutMs: 30_000,
  ...a,
});
process.stdout.write(`${JSON.stringify(a.counter.tally(run, 1))}\n`);
