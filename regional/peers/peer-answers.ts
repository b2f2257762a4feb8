import { type parseClassifyRequest, readClassifyInputs } from "../../protocol/classify-request.ts";
import { SERVED_BY_HEADER } from "../../protocol/headers.ts";
import { type InferCall, readInferInputs } from "../../protocol/infer-request.ts";
import type { ModelIo } from "../../protocol/model-config.ts";
import { toPredictions } from "../../protocol/responses.ts";
import type { ClassifyResponse, ServedBy } from "../../protocol/types.ts";
import type { AppDeps } from "../app-context.ts";
import type { Float32Allocator } from "../float32-slab.ts";
import type { InferenceAnswer, InferenceClock, InferenceInput, InferResult } from "../inference-answers.ts";
import { type PeerClient, PeerUnreachable } from "./peer-client.ts";

/**
 * Answers whose rows run on the worker of the pod that owns their model (`--model-placement hashed`,
 * peers.ts): the rows read and checked here against the model's config (and told to admission), handed to the
 * owner, and its result answered from here. Should the owner be unreachable (being replaced), the rows run in
 * this worker after all (the caller's `here`), and why is logged once by `Peers`.
 */
export function peerAnswers(deps: AppDeps, servedBy: ServedBy, rowArrays: Float32Allocator) {
  const { repository, limits } = deps;

  /** A v2 call's rows on `peer`; undefined when it cannot be reached, for the caller to run them here. */
  async function infer<T>(
    peer: PeerClient,
    clock: InferenceClock,
    call: InferCall,
    binary: Uint8Array,
    model: string,
    version: string | undefined,
    prepare: (io: ModelIo) => T,
  ): Promise<InferResult<T> | undefined> {
    const io = repository.io(model);
    const rows = readInferInputs(call, io, limits, binary, rowArrays);
    clock.admitted.rowsKnown(rows.batch);
    const prepared = prepare(io);
    try {
      const answer = await peer.infer(model, version, io, rows, clock.deadlineUs);
      const headers = { ...answer.headers, [SERVED_BY_HEADER]: servedBy };
      const { outputName, classes } = io;
      return {
        model,
        version: answer.version,
        outputName,
        batch: rows.batch,
        classes,
        probs: answer.probs,
        headers,
        prepared,
      };
    } catch (err) {
      if (!(err instanceof PeerUnreachable)) throw err;
      deps.peers!.unreachable(peer, err);
      return undefined;
    }
  }

  /** `/v1/classify` of a parsed call on `peer`; `here` runs it in this worker when the owner cannot be reached. */
  function classify(
    peer: PeerClient,
    input: InferenceInput,
    call: ReturnType<typeof parseClassifyRequest>,
    answered: (answer: InferenceAnswer) => void,
    failedWith: (err: unknown) => void,
    here: () => void,
  ): void {
    const io = repository.io(call.model);
    const rows = readClassifyInputs(call.inputs, io, limits, rowArrays);
    input.admitted.rowsKnown(rows.batch);
    peer.infer(call.model, call.version, io, rows, input.deadlineUs).then(
      (answer) => {
        const response: ClassifyResponse = {
          model: call.model,
          version: answer.version,
          ...(call.id !== undefined ? { id: call.id } : {}),
          predictions: toPredictions(answer.probs, rows.batch, io.labels),
          servedBy,
        };
        const headers = { "content-type": "application/json", ...answer.headers, [SERVED_BY_HEADER]: servedBy };
        answered({ headers, body: JSON.stringify(response) });
      },
      (err: unknown) => {
        if (!(err instanceof PeerUnreachable)) return failedWith(err);
        deps.peers!.unreachable(peer, err);
        try {
          here();
        } catch (thrown) {
          failedWith(thrown);
        }
      },
    );
  }

  return { infer, classify };
}
