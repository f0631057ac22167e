/**
 * `tools call NAME` and `tools run FILE|-`: the inventory first (for validation and the SDK's
 * header mirroring), then one tools/call, or one per JSON line in order (never a batch), with a
 * progress line on a terminal's stderr while a call runs.
 */
import { resolveFromInvocation } from "../config.ts";
import type { GivenArguments } from "./arguments.ts";
import { OptionFileError, parseJsonText, readOptionFileReached } from "../option_file.ts";
import { CLIENT_EXIT, ClientError } from "../client/errors.ts";
import type { Interaction } from "../client/interaction.ts";
import type { Session } from "../client/session.ts";
import {
  type CallOutcome,
  callTool,
  CONTRACT_VERSION,
  flatten,
  type ListedTool,
  type ListOptions,
  listToolsPages,
} from "../client/commands.ts";
import { PROGRESS_DELAY_MS, progressLine } from "../client/progress.ts";
import { withoutSdkToolExclusionWarnings } from "../workarounds/sdk_console_warn.ts";
import { writeStdout } from "./output.ts";
import { stderrColor } from "./colors.ts";
import {
  didYouMean,
  unknownArgumentMessage,
  unknownKeys,
  withheldUnknownMessage,
} from "./suggest.ts";
import { type ClientOutput, line, renderCall, reportError, warn } from "./client_render.ts";

/** What a call of `tools call` or `tools run` works with besides its name and arguments. */
export interface CallContext {
  session: Session;
  interaction: Interaction;
  /** The listing's options (pages, signal, timers); a call takes the same signal and timers. */
  listOptions: ListOptions & { signal: AbortSignal; timeoutMs: number };
  skipLocalValidation: boolean;
  /** The error for a tool the server does not list (it also decides where the error points). */
  noTool(name: string, fallback: () => ClientError): ClientError;
}

/** One tools/call of `tools call` or `tools run`: its envelope, the client error, its exit code. */
type CallOne = (
  name: string,
  args: Record<string, unknown>,
  withheld: string | undefined,
) => Promise<CallOutcome>;

/** `tools call NAME`: one call, its result on stdout, its client error on stderr. */
export async function callCommand(
  c: CallContext,
  name: string,
  given: GivenArguments,
  output: ClientOutput,
): Promise<number> {
  const callOne = await toolCaller(c);
  const args = given.values;
  const outcome = await callOne(name, args, given.withheld);
  await writeStdout(renderCall(outcome.envelope, output, { name, args }));
  if (outcome.error) reportError(outcome.error, output);
  return outcome.exitCode;
}

/** `tools run FILE|-`: JSONL of {"name","arguments"}; one tools/call each, in order. */
export async function runCommand(
  c: CallContext,
  source: string,
  keepGoing: boolean,
): Promise<number> {
  const callOne = await toolCaller(c);
  return await runCalls(source, callOne, { keepGoing, signal: c.listOptions.signal });
}

/**
 * Lists the tools (call and run need their schemas for validation, and the SDK mirrors headers
 * only for tools it has listed) and returns the function that makes one call.
 */
async function toolCaller(c: CallContext): Promise<CallOne> {
  const { session } = c;
  const inventory = new Map(
    flatten(await listToolsPages(session, c.listOptions), {
      headers: session.sendsToolHeaders,
    }).map((t) => [String(t.tool.name), t]),
  );
  if (session.sendsToolHeaders) {
    // The SDK mirrors x-mcp-header arguments into Mcp-Param-* only for tools it has listed.
    // Its warning per excluded tool is held back: we already said so once.
    const client = session.client;
    await withoutSdkToolExclusionWarnings(() =>
      client.listTools().catch((err) =>
        warn(`tools/list for header mirroring failed: ${err.message}`)
      )
    );
  }
  // Progress of a running call: one updating line on stderr when it is a terminal, cleared
  // when the call ends and before any prompt.
  // Drawn only once a call has run for PROGRESS_DELAY_MS: an instant call draws nothing.
  const progress = progressLine(undefined, {
    noColor: !stderrColor(),
    delayMs: PROGRESS_DELAY_MS,
  });
  session.onElicitation.add(() => {
    progress.clear();
    return () => {};
  });
  const { timeoutMs, maxTimeoutMs, signal } = c.listOptions;
  return (name, args, withheld) => {
    const tool = callableTool(c, inventory, name, args, withheld);
    return callTool(session, name, args, {
      timeoutMs,
      maxTimeoutMs,
      signal,
      skipLocalValidation: c.skipLocalValidation,
      argumentNamesWithheld: withheld,
      returnInputRequired: !c.interaction.advertisesElicitation,
      tool,
      onWarning: warn,
      onProgress: (p) => progress.update(name, p),
    }).finally(() => progress.clear());
  };
}

/**
 * The listed tool NAME, if it may be called with args: listed, without problems, and (unless
 * local validation is skipped) given no argument its inputSchema does not name. Throws if not.
 */
function callableTool(
  c: CallContext,
  inventory: Map<string, ListedTool>,
  name: string,
  args: Record<string, unknown>,
  withheld: string | undefined,
): Record<string, unknown> {
  const listed = inventory.get(name);
  if (!listed) {
    throw c.noTool(name, () =>
      new ClientError(
        "usage",
        `no tool named ${JSON.stringify(name)}${didYouMean(name, inventory.keys())}`,
      ));
  }
  if (listed.problems.length > 0) {
    // A tool the flattened inventory leaves out is never called.
    throw new ClientError("usage", `refusing to call ${name}: ${listed.problems.join("; ")}`);
  }
  const tool = listed.tool;
  if (c.skipLocalValidation) return tool;
  const { keys, known } = unknownKeys(tool.inputSchema, args);
  if (keys.length === 0) return tool;
  const mismatch = (why: string, details: Record<string, unknown>) =>
    new ClientError("usage", `arguments do not match ${name}'s inputSchema: ${why}`, { details });
  // The same sentence (and exit code 2) as `op` gives for the same mistake; keys read through a
  // link are counted, not named (decision 0060).
  throw withheld === undefined
    ? mismatch(unknownArgumentMessage(keys[0], known), { argument: keys[0], known })
    : mismatch(withheldUnknownMessage(keys.length, withheld), {
      unknownArguments: keys.length,
      known,
    });
}

/**
 * `tools run FILE|-`: one call per JSON line `{"name", "arguments"}`, in order (never a batch),
 * one envelope line each; stops at the first failure unless keepGoing, or when interrupted.
 * Returns the worst exit code.
 */
async function runCalls(
  source: string,
  callOne: CallOne,
  options: { keepGoing: boolean; signal: AbortSignal },
): Promise<number> {
  const read = source === "-"
    ? { text: await new Response(Deno.stdin.readable).text(), direct: true }
    : await readOptionFileReached(resolveFromInvocation(source), "tools run").catch((err) => {
      throw new ClientError("usage", err.message);
    });
  const { text } = read;
  const withheld = read.direct
    ? undefined
    : `tools run ${source} is reached through a symbolic link`;
  const items = text.split("\n").map((l, i) => ({ l: l.trim(), n: i + 1 })).filter((x) =>
    x.l !== ""
  );
  let worst: number = CLIENT_EXIT.ok;
  for (const [index, { l, n }] of items.entries()) {
    const { envelope, code } = await runLine(callOne, l, n, withheld);
    await writeStdout(line({ index, line: n, ...envelope }));
    worst = Math.max(worst, code);
    if (code !== CLIENT_EXIT.ok && !options.keepGoing) break;
    if (options.signal.aborted) break;
  }
  return worst;
}

/** One line of `tools run` (line number n): its envelope (without index and line) and exit code. */
async function runLine(
  callOne: CallOne,
  l: string,
  n: number,
  withheld: string | undefined,
): Promise<{ envelope: Record<string, unknown>; code: number }> {
  try {
    const item = parseJsonText(l, `line ${n}`) as { name?: unknown; arguments?: unknown };
    if (
      typeof item.name !== "string" ||
      (item.arguments !== undefined &&
        (typeof item.arguments !== "object" || item.arguments === null ||
          Array.isArray(item.arguments)))
    ) {
      throw new ClientError(
        "usage",
        `line ${n}: expected {"name": string, "arguments": object}`,
      );
    }
    const args = (item.arguments ?? {}) as Record<string, unknown>;
    const outcome = await callOne(item.name, args, withheld);
    const envelope = { ...outcome.envelope };
    if (outcome.error) envelope.clientError = outcome.error.toJSON();
    return { envelope, code: outcome.exitCode };
  } catch (err) {
    const e = err instanceof ClientError
      ? err
      : err instanceof OptionFileError
      ? new ClientError("usage", err.message)
      : new ClientError("usage", `line ${n}: ${(err as Error).message}`);
    return {
      envelope: {
        contractVersion: CONTRACT_VERSION,
        operation: "tools/call",
        clientError: e.toJSON(),
      },
      code: e.exitCode,
    };
  }
}
