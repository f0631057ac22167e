/**
 * An engine worker: runs one job at a time, posting progress, then its result or its typed
 * error. It stops at the next checkpoint once the shared flag is set; the pool abandons it
 * (terminate, replace) when it does not answer within the acknowledgement window.
 */
import { parentPort } from "node:worker_threads";
import { toWorkspaceError } from "../errors.ts";
import { Checkpoint, type InputMessage, type JobMessage, type WorkerMessage } from "./protocol.ts";
import { JOBS } from "./jobs.ts";
import { runJobFrom } from "./runner.ts";

const port = parentPort;
if (port === null) throw new Error("worker.ts runs only as an engine worker");

function post(message: WorkerMessage): void {
  port!.postMessage(message);
}

/** The running job's input: the value once it came (a job peeks at it, Checkpoint.input). */
const inputs = new Map<number, { value?: unknown; came: boolean }>();

function onInput(message: InputMessage): void {
  const slot = inputs.get(message.id);
  if (slot === undefined || slot.came) return;
  slot.came = true;
  slot.value = message.value;
}

function inputOf(id: number): { value: unknown } | undefined {
  const slot = inputs.get(id);
  return slot?.came ? { value: slot.value } : undefined;
}

port.on("message", async (message: JobMessage | InputMessage) => {
  if (message?.type === "input") return onInput(message);
  if (message?.type !== "job") return;
  const { id, spec } = message;
  inputs.set(id, { came: false });
  const checkpoint = new Checkpoint(new Int32Array(message.flag), {
    limits: spec.limits,
    inline: false,
    onProgress: (progress) => post({ type: "progress", id, progress }),
    input: { peek: () => inputOf(id) },
  });
  try {
    const result = await runJobFrom(JOBS, spec, checkpoint);
    post({ type: "result", id, result });
  } catch (err) {
    post({ type: "error", id, error: toWorkspaceError(err).toJSON() });
  } finally {
    inputs.delete(id);
  }
});
post({ type: "ready", id: 0 });
