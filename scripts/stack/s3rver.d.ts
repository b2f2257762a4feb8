// The part of s3rver 3.7's API the local registry uses (the package ships no types).
declare module "s3rver" {
  import type { EventEmitter } from "node:events";

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string; configs: string[] }[];
  }

  /** An S3 event notification record, as S3 sends them (`ObjectCreated:Put`, `ObjectRemoved:Delete`). */
  interface S3rverEvent {
    Records: { eventName: string; s3: { bucket: { name: string }; object: { key: string } } }[];
  }

  export default class S3rver extends EventEmitter {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    on(event: "event", listener: (event: S3rverEvent) => void): this;
  }
}
