import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { type PrimaryChannel, workerChannel } from "./cluster.ts";
import type { Message } from "./cluster-messages.ts";
import type { LogFields, LogLevel } from "./log.ts";

/** A primary's end of the channel: what the worker sent, and a send that fails when `failing`. */
function primary(failing: boolean) {
  const events = new EventEmitter();
  const sent: Message[] = [];
  const channel: PrimaryChannel = {
    send(message, _handle, _options, callback) {
      sent.push(message);
      queueMicrotask(() => callback(failing ? new Error("channel closed") : null));
      return !failing;
    },
    on: (event, listener) => events.on(event, listener),
  };
  return { channel, sent, deliver: (message: Message) => events.emit("message", message) };
}

function logged() {
  const lines: { level: LogLevel; msg: string; fields?: LogFields }[] = [];
  return { lines, log: (level: LogLevel, msg: string, fields?: LogFields) => lines.push({ level, msg, fields }) };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("workerChannel: a failure keeps its reason and ends nothing", () => {
  it("logs a worker's failed metrics read instead of rejecting unhandled, and sends no answer", async () => {
    const { channel, sent, deliver } = primary(false);
    const { lines, log } = logged();
    const local = {
      json: () => Promise.reject(new Error("registry is closed")),
      text: async () => "",
      statistics: () => [],
    };
    workerChannel(local, log, channel);
    deliver({ type: "edgecascade:metrics-collect", id: 7 });
    await settled();
    expect(lines).toEqual([
      { level: "error", msg: "reading this worker's metrics failed", fields: { reason: "registry is closed" } },
    ]);
    expect(sent).toEqual([]);
  });

  it("logs a message the primary can no longer take, by type and reason", async () => {
    const { channel, sent } = primary(true);
    const { lines, log } = logged();
    workerChannel({ json: async () => [], text: async () => "", statistics: () => [] }, log, channel).ready();
    await settled();
    expect(sent).toEqual([{ type: "edgecascade:ready" }]);
    expect(lines).toEqual([
      {
        level: "warn",
        msg: "a message to the cluster primary failed",
        fields: { type: "edgecascade:ready", reason: "channel closed" },
      },
    ]);
  });
});
