import type { ModelIo } from "../../protocol/model-config.ts";
import { checkModelFile } from "../../protocol/model-file-check.ts";
import type { ModelPublicKey } from "../../protocol/model-signature.ts";
import type { EdgeServedModel, EdgeServedView } from "../../protocol/registry/edge-view.ts";
import { registryKey } from "../../protocol/registry/layout.ts";
import { type EdgeSession, EdgeVariant } from "../inference/edge-variant.ts";
import type { SessionPool } from "../inference/session-pool.ts";
import type { ModelCatalog } from "../models/catalog.ts";
import type { ServedModel } from "../models/served-model.ts";
import { type FollowedModel, readServedView } from "./refresh.ts";
import type { ServedViewStore } from "./served-view-store.ts";
import { swapVariant } from "./swap-variant.ts";

/** After a failed or refused load, the same file is not tried again for this long. */
const RETRY_AFTER_MS = 60_000;

export interface EdgeRegistryOptions {
  bucket: Pick<R2Bucket, "get">;
  prefix: string;
  store: ServedViewStore;
  models: ModelCatalog;
  /** The key registry files must be signed with; without one no registry file loads (the bundle's keep serving). */
  publicKey: Promise<ModelPublicKey> | undefined;
  createSession: (bytes: Uint8Array, io: ModelIo) => Promise<EdgeSession>;
  /** The isolate's sessions (EDGE_SESSION_MEMORY_MB): a registry variant's session lives within them too. */
  pool: SessionPool;
}

/** What an isolate did with the registry, for `/status`. */
export interface EdgeRegistryCounts {
  /** Edge variants loaded from the registry and swapped in. */
  loads: number;
  /** Files refused: checksum or signature (counted once per file). */
  refused: number;
  /** Loads that failed otherwise: the registry unreachable, a file missing, a session that would not start. */
  failures: number;
}

/**
 * One isolate following the registry (the Worker's R2 binding `MODEL_REGISTRY`): the served state of each model
 * arrives with the view the cron copies into KV (read memoised, with the region status); a newer edge variant
 * is read from R2, checked (sha256 and signature: only signed files load) after an answer has gone (`takeWork`,
 * for `waitUntil`), then swapped in within the isolate's sessions (swap-variant.ts, EDGE_SESSION_MEMORY_MB). The bundled variant serves until then, and
 * whenever the registry cannot be read: what is loaded keeps serving, the failure is counted and logged.
 */
export class EdgeRegistry {
  readonly counts: EdgeRegistryCounts = { loads: 0, refused: 0, failures: 0 };
  lastError: string | undefined;
  readonly #o: EdgeRegistryOptions;
  #seen: EdgeServedView | null = null;
  #work: (() => Promise<void>)[] = [];
  /** Files being loaded or that failed, by `name@version:sha256`, with when they may be tried again. */
  readonly #tried = new Map<string, number>();

  constructor(options: EdgeRegistryOptions) {
    this.#o = options;
  }

  get view(): EdgeServedView | null {
    return this.#seen;
  }

  /** KV reads of the view that failed. */
  get viewReadFailures(): number {
    return this.#o.store.failures;
  }

  /** The view, read memoised; each new one is applied once. */
  read(now: number): EdgeServedView | null | Promise<EdgeServedView | null> {
    const read = this.#o.store.read(now);
    if (!(read instanceof Promise)) {
      this.#apply(read, now);
      return read;
    }
    return read.then((view) => {
      this.#apply(view, now);
      return view;
    });
  }

  /** Loads waiting to run once an answer has gone (each handed out once; the caller runs it in `waitUntil`). */
  takeWork(): (() => Promise<void>) | undefined {
    if (this.#work.length === 0) return undefined;
    const work = this.#work;
    this.#work = [];
    return () => Promise.all(work.map((load) => load())).then(() => undefined);
  }

  /** The cron: read the registry from R2 and store the view for every isolate; keeps KV's when R2 is unreachable. */
  async refresh(models: readonly FollowedModel[], now: number): Promise<EdgeServedView | undefined> {
    const { view, reachable } = await readServedView(this.#o.bucket, this.#o.prefix, models, now).catch(
      (err: Error) => ({ view: undefined, reachable: false, err }),
    );
    if (!reachable || !view) {
      this.counts.failures++;
      this.lastError = "the registry (R2) could not be read";
      console.error("registry: the R2 bucket could not be read; isolates keep serving what they have");
      return undefined;
    }
    for (const [model, error] of Object.entries(view.errors ?? {})) console.warn(`registry: ${model}: ${error}`);
    await this.#o.store.write(view);
    this.#apply(view, now);
    return view;
  }

  #apply(view: EdgeServedView | null, now: number): void {
    if (!view || view === this.#seen) return;
    this.#seen = view;
    for (const [name, entry] of Object.entries(view.models)) {
      const model = this.#o.models.get(name);
      if (!model) continue;
      model.seeServedState(entry);
      this.#maybeLoad(model, entry, now);
    }
  }

  #maybeLoad(model: ServedModel, entry: EdgeServedModel, now: number): void {
    const wanted = entry.edge;
    const current = model.edge;
    if (!wanted || !current || wanted.config.name !== current.config.name) return;
    const listed = wanted.config.versions[wanted.version];
    if (
      !listed ||
      (current.version === wanted.version && current.config.versions[current.version]?.sha256 === listed.sha256)
    ) {
      return;
    }
    const key = `${wanted.config.name}@${wanted.version}:${listed.sha256}`;
    if ((this.#tried.get(key) ?? 0) > now) return;
    this.#tried.set(key, Number.POSITIVE_INFINITY); // until this load ends
    this.#work.push(() =>
      this.#load(model, wanted.config, wanted.version).then(
        () => {
          this.#tried.delete(key);
        },
        (err: Error) => {
          this.#tried.set(key, Date.now() + RETRY_AFTER_MS);
          this.lastError = err.message;
          console.warn(
            `registry: ${wanted.config.name} version ${wanted.version} not loaded, the one loaded keeps serving: ${err.message}`,
          );
        },
      ),
    );
  }

  async #load(model: ServedModel, config: EdgeVariant["config"], version: string): Promise<void> {
    const listed = config.versions[version]!;
    const publicKey = await this.#o.publicKey;
    if (!publicKey) {
      this.counts.refused++;
      throw new Error("MODEL_PUBLIC_KEY is not set: no file from the registry loads unsigned");
    }
    let bytes: Uint8Array;
    try {
      const object = await this.#o.bucket.get(registryKey(this.#o.prefix, config.name, version, listed.file));
      if (!object) throw new Error(`${config.name}/${version}/${listed.file} is not in the registry`);
      bytes = new Uint8Array(await object.arrayBuffer());
    } catch (err) {
      this.counts.failures++;
      throw err;
    }
    const check = await checkModelFile(bytes, config.name, version, listed, publicKey);
    const problem = check.checksumProblem ?? (check.signatureProblem && `signature refused: ${check.signatureProblem}`);
    if (problem) {
      this.counts.refused++;
      throw new Error(problem);
    }
    const variant = new EdgeVariant({
      config: { ...config, version },
      bytes,
      createSession: this.#o.createSession,
      publicKey: this.#o.publicKey,
      pool: this.#o.pool,
    });
    try {
      await swapVariant(model, variant, this.#o.pool);
    } catch (err) {
      this.counts.failures++;
      throw err;
    }
    this.counts.loads++;
    console.log(`registry: ${config.name} version ${version} loaded from the registry and serving`);
  }
}
