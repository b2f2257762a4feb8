import { rmSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import { ownerSlot } from "./owner.ts";
import { PeerClient } from "./peer-client.ts";

/**
 * `--model-placement hashed` in a pod of several workers: the workers of a pod do not each load every model.
 * Each model loaded on demand has one owning worker (owner.ts), the only one that loads it; another worker that
 * takes a request for it hands the request's rows to the owner over the owner's Unix socket (peer-client.ts),
 * in a directory the primary made for the pod's workers alone. Models a worker serves itself stay there:
 * pinned ones, explicitly loaded ones (every worker takes those), and everything under `--load-policy all`.
 */

/** Where this worker sits in its pod: its slot, the number of workers, the directory of their sockets. */
export interface PeerPlacement {
  slot: number;
  workers: number;
  dir: string;
}

/** The socket of the worker in `slot`. */
export const peerSocket = (dir: string, slot: number): string => join(dir, `worker-${slot}.sock`);

/** How long a worker that could not be reached is not asked again (its rows run here meanwhile). */
const UNREACHABLE_MS = 1_000;

export class Peers {
  readonly #placement: PeerPlacement;
  /** Whether this worker runs `model`'s requests itself (it serves it, or pins it); throws 404 when unknown. */
  readonly #runsHere: (model: string) => boolean;
  readonly #log: Logger;
  readonly #clients = new Map<number, PeerClient>();
  readonly #downUntil = new Map<number, number>();

  constructor(placement: PeerPlacement, runsHere: (model: string) => boolean, log: Logger) {
    this.#placement = placement;
    this.#runsHere = runsHere;
    this.#log = log;
  }

  /** The worker to hand `model`'s requests to, or undefined to run them here (404 for an unknown model). */
  ownerOf(model: string): PeerClient | undefined {
    if (this.#runsHere(model)) return undefined;
    const { slot, workers, dir } = this.#placement;
    const owner = ownerSlot(model, workers);
    if (owner === slot) return undefined;
    const down = this.#downUntil.get(owner);
    if (down !== undefined && performance.now() < down) return undefined;
    let client = this.#clients.get(owner);
    if (!client) {
      client = new PeerClient(owner, peerSocket(dir, owner));
      this.#clients.set(owner, client);
    }
    return client;
  }

  /** `peer` could not be reached: its models' rows run here for a second (logged once per second, with why). */
  unreachable(peer: PeerClient, err: Error): void {
    const down = this.#downUntil.get(peer.slot);
    if (down !== undefined && performance.now() < down) return;
    this.#downUntil.set(peer.slot, performance.now() + UNREACHABLE_MS);
    this.#log("warn", "the worker owning a model cannot be reached; its models run here meanwhile", {
      owner: peer.slot,
      reason: err.message,
    });
  }

  /** Serve `listener` on this worker's socket (a stale one, left by the worker this one replaces, removed first). */
  async listen(listener: RequestListener): Promise<Server> {
    const path = peerSocket(this.#placement.dir, this.#placement.slot);
    rmSync(path, { force: true });
    const server = createServer(listener);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return server;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((c) => c.close()));
  }
}
