import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ServingError } from "../../protocol/errors.ts";
import { heldoutPath } from "../../protocol/heldout.ts";
import { type ModelConfig, parseModelConfig } from "../../protocol/model-config.ts";
import { checkModelFile } from "../../protocol/model-file-check.ts";
import type { ModelPublicKey } from "../../protocol/model-signature.ts";
import { CONFIG_FILE } from "../../protocol/registry/layout.ts";
import type { ServedState } from "../../protocol/registry/served-state.ts";
import { parseJson, type S3Registry, servedOrThrow } from "../../registry/s3-registry.ts";
import type { Logger } from "../log.ts";
import type { RegistryRecorder } from "../recorder.ts";
import type { ModelRepository } from "../repository.ts";
import type { Rollouts } from "../rollout/rollouts.ts";
import { followedVersion, followSteps, versionsNeeded } from "./follow-policy.ts";

/** A registry object refused before anything loaded it; the versions loaded keep serving. */
class Refused extends Error {
  readonly model: string;
  readonly reason: "checksum" | "signature" | "config" | "served";

  constructor(model: string, reason: Refused["reason"], message: string) {
    super(message);
    this.model = model;
    this.reason = reason;
  }
}

interface Followed {
  config?: { value: ModelConfig; etag: string };
  served?: { state: ServedState; etag: string };
  /** Files on disk, checked: `version/file` → sha256. */
  files: Map<string, string>;
  /** Objects refused, by key, with the ETag of the bytes refused (not read again until they change). */
  refused: Map<string, string>;
  /** The last pass did not converge (a refused file, a failed load): try again next poll. */
  pending: boolean;
}

export interface FollowerOptions {
  registry: S3Registry;
  /** Where checked files are kept for the repository to load (this process's own directory). */
  dir: string;
  publicKey: ModelPublicKey;
  pollMs: number;
  log: Logger;
  recorder: RegistryRecorder;
}

/**
 * A pool process following the model registry, as Triton polls a cloud model repository: at start every
 * model's served state is read and the versions it needs are fetched, each file checked (sha256, signature)
 * before it is written where the repository loads from; then every `pollMs` each served.json and config.json is
 * read again with a conditional GET, and what changed is fetched, checked and applied (follow-policy.ts): a
 * load with its warm-up and checks, or a rollout state, exactly as an operator's calls did. A refused object or
 * a failed load leaves the versions loaded serving, is logged and counted, and is tried again next poll.
 */
export class RegistryFollower {
  readonly dir: string;
  readonly #o: FollowerOptions;
  readonly #models = new Map<string, Followed>();
  #target: { repository: ModelRepository; rollouts: Rollouts } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<void> | undefined;
  #stopped = false;

  constructor(options: FollowerOptions) {
    this.#o = options;
    this.dir = options.dir;
  }

  /** Before the repository starts: every model's files fetched and checked. Throws when the registry cannot be read. */
  async initialSync(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const names = await this.#o.registry.models();
    if (names.length === 0) throw new Error(`registry ${this.#o.registry.where} holds no model`);
    for (const name of names) await this.#read(name);
    for (const name of this.#ordered()) await this.#fetch(name).catch((err: Error) => this.#refusal(err));
    this.#o.recorder.poll("changed");
    this.#o.log("info", "registry read", { registry: this.#o.registry.where, models: names });
  }

  /** After the first loads: take on the rollouts, then poll. */
  async follow(repository: ModelRepository, rollouts: Rollouts): Promise<void> {
    this.#target = { repository, rollouts };
    await this.#applyAll();
    this.#schedule();
  }

  /** Read the registry now (SIGHUP), or join the pass under way. */
  pollNow(): Promise<void> {
    this.#pass ??= this.#poll().finally(() => {
      this.#pass = undefined;
    });
    return this.#pass;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.pollNow().finally(() => this.#schedule()), this.#o.pollMs);
    this.#timer.unref();
  }

  /** Full models before edge variants: a variant follows its model's served state. */
  #ordered(): string[] {
    const names = [...this.#models.keys()].sort();
    const isEdge = (n: string) => !!this.#models.get(n)?.config?.value.standsFor;
    return [...names.filter((n) => !isEdge(n)), ...names.filter(isEdge)];
  }

  async #poll(): Promise<void> {
    let changed = false;
    try {
      for (const name of await this.#o.registry.models()) changed = (await this.#read(name)) || changed;
    } catch (err) {
      this.#o.recorder.poll("failed");
      this.#o.log("warn", "registry not readable: the versions loaded keep serving", {
        reason: (err as Error).message,
      });
      return;
    }
    this.#o.recorder.poll(changed ? "changed" : "unchanged");
    if (changed || [...this.#models.values()].some((m) => m.pending)) await this.#applyAll();
  }

  /** Read a model's config and served state again (conditional GETs); whether either changed. */
  async #read(name: string): Promise<boolean> {
    let model = this.#models.get(name);
    if (!model) {
      model = { files: new Map(), refused: new Map(), pending: true };
      this.#models.set(name, model);
    }
    const { registry } = this.#o;
    let changed = false;
    const config = await registry.get([name, CONFIG_FILE], model.config?.etag);
    if (config && config !== "unchanged") {
      try {
        const value = parseModelConfig(
          parseJson(config.bytes, `${name}/${CONFIG_FILE}`),
          `${registry.where}: ${name}/${CONFIG_FILE}`,
        );
        model.config = { value, etag: config.etag };
        changed = true;
      } catch (err) {
        this.#refusal(new Refused(name, "config", (err as Error).message));
      }
    }
    const served = await registry.get([name, "served.json"], model.served?.etag);
    if (served && served !== "unchanged") {
      try {
        const state = servedOrThrow(
          parseJson(served.bytes, `${name}/served.json`),
          `${registry.where}: ${registry.key(name, "served.json")}`,
        );
        if (!model.served || state.revision > model.served.state.revision) {
          model.served = { state, etag: served.etag };
          changed = true;
        }
      } catch (err) {
        this.#refusal(new Refused(name, "served", (err as Error).message));
      }
    }
    return changed;
  }

  /** The version a model serves by the registry, and the versions it needs on disk. */
  #plan(name: string): { version: string; needed: string[] } | undefined {
    const m = this.#models.get(name)!;
    if (!m.config) return undefined;
    if (m.served) return { version: m.served.state.version, needed: versionsNeeded(m.served.state) };
    const full = m.config.value.standsFor ? this.#models.get(m.config.value.standsFor)?.served?.state : undefined;
    const version = followedVersion(m.config.value, full);
    return version ? { version, needed: [version] } : undefined;
  }

  /** Fetch and check what a model needs, then write its config naming the version to serve. */
  async #fetch(name: string): Promise<void> {
    const m = this.#models.get(name)!;
    const plan = this.#plan(name);
    if (!plan || !m.config) return;
    const config = m.config.value;
    for (const version of plan.needed) {
      const entry = config.versions[version];
      if (!entry)
        throw new Refused(
          name,
          "config",
          `${name}/${CONFIG_FILE} does not list version ${version}, which it should serve`,
        );
      const file = `${version}/${entry.file}`;
      if (m.files.get(file) !== entry.sha256) {
        await this.#fetchFile(name, [name, version, entry.file], async (bytes) => {
          const check = await checkModelFile(bytes, name, version, entry, this.#o.publicKey);
          if (check.checksumProblem) throw new Refused(name, "checksum", check.checksumProblem);
          if (check.signatureProblem)
            throw new Refused(name, "signature", `signature refused: ${check.signatureProblem}`);
        });
        m.files.set(file, entry.sha256);
      }
      const heldout = heldoutPath(config, version);
      if (!m.files.has(heldout)) {
        await this.#fetchFile(name, heldout.split("/"), async () => {});
        m.files.set(heldout, "");
      }
    }
    await this.#write(
      [name, CONFIG_FILE],
      new TextEncoder().encode(`${JSON.stringify({ ...config, version: plan.version }, null, 2)}\n`),
    );
  }

  /** GET an object, check it, write it into place whole; a refusal is remembered by the bytes' ETag. */
  async #fetchFile(model: string, parts: string[], check: (bytes: Uint8Array) => Promise<void>): Promise<void> {
    const m = this.#models.get(model)!;
    const key = parts.join("/");
    const got = await this.#o.registry.get(parts, m.refused.get(key));
    if (got === "unchanged") throw new Error(`${key} is still the object refused before`);
    if (!got) throw new Error(`registry ${this.#o.registry.where} has no ${key}`);
    try {
      await check(got.bytes);
    } catch (err) {
      m.refused.set(key, got.etag);
      throw err;
    }
    m.refused.delete(key);
    await this.#write(parts, got.bytes);
  }

  async #write(parts: string[], bytes: Uint8Array): Promise<void> {
    const path = join(this.dir, ...parts);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  }

  #refusal(err: unknown): void {
    if (err instanceof Refused) {
      this.#o.recorder.refused(err.model, err.reason);
      this.#o.log("warn", "registry object refused: the versions loaded keep serving", {
        model: err.model,
        reason: err.message,
      });
    } else {
      this.#o.log("warn", "registry: could not follow", { reason: (err as Error).message });
    }
  }

  async #applyAll(): Promise<void> {
    for (const name of this.#ordered()) {
      const m = this.#models.get(name)!;
      m.pending = !(await this.#apply(name).catch((err: unknown) => {
        this.#refusal(err);
        return false;
      }));
    }
  }

  /** Fetch what `name` needs and take its steps; whether it now serves what the registry says. */
  async #apply(name: string): Promise<boolean> {
    const target = this.#target;
    if (!target) return false;
    await this.#fetch(name);
    const m = this.#models.get(name)!;
    const plan = this.#plan(name);
    if (!plan) return true;
    const { repository, rollouts } = target;
    const view = (() => {
      try {
        const status = rollouts.status(name);
        return { serving: status.serving ?? undefined, rollout: status.state ?? undefined };
      } catch {
        return { serving: undefined, rollout: undefined };
      }
    })();
    const loadsOnDemand = repository.loadsOnDemand(name);
    if (loadsOnDemand) await repository.configChanged(name);
    const served: ServedState = m.served?.state ?? { model: name, revision: 0, version: plan.version, updatedAt: "" };
    for (const step of followSteps(served, { ...view, loadsOnDemand })) {
      try {
        // Through the load policy: within the memory budget, and a model loaded on demand is not pinned by it.
        if (step.type === "load") await repository.load(name, step.version, "registry");
        else await rollouts.apply(step.state);
      } catch (err) {
        const reason = err instanceof ServingError || err instanceof Error ? err.message : String(err);
        this.#o.log("warn", "registry: this pool did not take the served state; the versions loaded keep serving", {
          model: name,
          revision: served.revision,
          step:
            step.type === "load"
              ? `load ${step.version}`
              : `rollout ${step.state.phase} revision ${step.state.revision}`,
          reason,
        });
        return false;
      }
    }
    if (m.served) this.#o.recorder.following(name, served.revision);
    return true;
  }

  /** Remove this process's directory (at shutdown). */
  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
