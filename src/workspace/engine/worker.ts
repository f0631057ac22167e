/**
 * An engine worker: runs one job at a time, posting progress, then its result or its typed
 * error. It stops at the next checkpoint once the shared flag is set; the pool abandons it
 * (terminate, replace) when it does not answer within the acknowledgement window.
 */
import { parentPort } from "node:worker_threads";
import { toWorkspaceError } from "../errors.ts";
import { Checkpoint, type JobMessage, type WorkerMessage } from "./protocol.ts";
import { JOBS } from "./jobs.ts";
import { runJobFrom } from "./runner.ts";

const port = parentPort;
if (port === null) throw new Error("worker.ts runs only as an engine worker");

function post(message: WorkerMessage): void {
  port!.postMessage(message);
}

port.on("message", async (message: JobMessage) => {
  if (message?.type !== "job") return;
  const { id, spec } = message;
  const checkpoint = new Checkpoint(new Int32Array(message.flag), {
    limits: spec.limits,
    inline: false,
    onProgress: (progress) => post({ type: "progress", id, progress }),
  });
  try {
    const result = await runJobFrom(JOBS, spec, checkpoint);
    post({ type: "result", id, result });
  } catch (err) {
    post({ type: "error", id, error: toWorkspaceError(err).toJSON() });
  }
});
post({ type: "ready", id: 0 });
