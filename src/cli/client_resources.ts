/**
 * `resources list|templates|read`, `prompts list|get` and `ping` on an open session: the lists
 * paged as `tools list` is, one request for a read, a get or a ping, each written in the run's
 * output (client_views.ts) with its exit code. A prompt's arguments are checked against the
 * prompt as the server lists it before `prompts/get` is sent.
 */
import { CLIENT_EXIT, ClientError } from "../client/errors.ts";
import type { Session } from "../client/session.ts";
import { type ListOptions, listPages, metadataOf } from "../client/commands.ts";
import {
  getPrompt,
  ping,
  PROMPTS_LIST,
  readResource,
  type RequestOptions,
  type RequestOutcome,
} from "../client/requests.ts";
import { writeStdout } from "./output.ts";
import { didYouMean, unknownArgumentMessage, withheldUnknownMessage } from "./suggest.ts";
import { type ClientOutput, reportError, warn } from "./client_render.ts";
import {
  PROMPTS_VIEW,
  renderPages,
  renderPing,
  renderPrompt,
  renderRead,
  RESOURCES_VIEW,
  TEMPLATES_VIEW,
} from "./client_views.ts";

/** What one of these commands works with. */
export interface MoreContext {
  session: Session;
  output: ClientOutput;
  /** The listing's options (pages, signal, timers); a request takes the same signal and timers. */
  listOptions: ListOptions & { signal: AbortSignal; timeoutMs: number };
  /** Whether an input_required result is returned as is (nobody here answers it). */
  returnInputRequired: boolean;
}

/** The list commands: `resources list`, `resources templates`, `prompts list`. */
const LISTS = {
  "resources list": RESOURCES_VIEW,
  "resources templates": TEMPLATES_VIEW,
  "prompts list": PROMPTS_VIEW,
} as const;

/** Whether a command path is one of this module's. */
export function isMoreCommand(path: string): boolean {
  return Object.hasOwn(LISTS, path) || ["resources read", "prompts get", "ping"].includes(path);
}

/** One list command: every page (or one, or from a cursor), written in the run's output. */
export async function listCommand(
  c: MoreContext,
  path: string,
  paging: { singlePage: boolean; cursor: string | undefined },
): Promise<number> {
  const view = LISTS[path as keyof typeof LISTS];
  const kind = view.kind;
  const pages = await listPages(c.session, kind, { ...c.listOptions, ...paging });
  await writeStdout(renderPages(view, pages, { ...metadataOf(c.session) }, c.output));
  return CLIENT_EXIT.ok;
}

/** `resources read URI`. */
export async function readCommand(c: MoreContext, uri: string): Promise<number> {
  return await written(c, await readResource(c.session, uri, requestOptions(c)), renderRead);
}

/** `ping`. */
export async function pingCommand(c: MoreContext): Promise<number> {
  return await written(c, await ping(c.session, requestOptions(c)), renderPing);
}

/**
 * `prompts get NAME`: unless `skipLocalValidation`, NAME is looked up in every page of the list
 * and the arguments checked against it (`noPrompt` makes the error for a name the server does not
 * list); then one prompts/get.
 */
export async function getCommand(
  c: MoreContext,
  name: string,
  args: Record<string, unknown>,
  o: {
    skipLocalValidation: boolean;
    /** Why the arguments' key names may not be shown (decision 0060), if they may not. */
    withheld?: string;
    noPrompt: (error: ClientError) => ClientError;
  },
): Promise<number> {
  if (!o.skipLocalValidation) {
    const pages = await listPages(c.session, PROMPTS_LIST, c.listOptions);
    const prompts = pages.flatMap((p) => p.mcpResult.prompts as Record<string, unknown>[]);
    const prompt = prompts.find((p) => p?.name === name);
    if (prompt === undefined) {
      const names = prompts.map((p) => String(p?.name));
      throw o.noPrompt(
        new ClientError(
          "usage",
          `no prompt named ${JSON.stringify(name)}${didYouMean(name, names)}`,
        ),
      );
    }
    checkPromptArguments(name, prompt, args, o.withheld);
  }
  return await written(c, await getPrompt(c.session, name, args, requestOptions(c)), renderPrompt);
}

/**
 * A prompt's arguments against its declaration: every value a string (MCP's prompt arguments
 * are), no name it does not declare (named with the closest one), every required one given.
 */
export function checkPromptArguments(
  name: string,
  prompt: Record<string, unknown>,
  args: Record<string, unknown>,
  withheld?: string,
): void {
  const declared = (Array.isArray(prompt.arguments) ? prompt.arguments : [])
    .filter((a) => a && typeof a === "object") as Record<string, unknown>[];
  const known = declared.map((a) => String(a.name));
  const mismatch = (why: string, details: Record<string, unknown>) =>
    new ClientError("usage", `arguments do not match ${name}'s arguments: ${why}`, { details });
  const unknown = Object.keys(args).filter((key) => !known.includes(key));
  if (withheld !== undefined && unknown.length > 0) {
    // Keys read through a link are counted, never named.
    throw mismatch(withheldUnknownMessage(unknown.length, withheld), {
      unknownArguments: unknown.length,
      known,
    });
  }
  for (const [key, value] of Object.entries(args)) {
    if (!known.includes(key)) {
      throw mismatch(unknownArgumentMessage(key, known), { argument: key, known });
    }
    if (typeof value !== "string") {
      throw mismatch(
        `\`${key}\` must be a string (a prompt's arguments are strings: write ${key}=TEXT)`,
        { argument: key },
      );
    }
  }
  const missing = declared.filter((a) =>
    a.required === true && !Object.hasOwn(args, String(a.name))
  )
    .map((a) => String(a.name));
  if (missing.length > 0) {
    throw mismatch(
      `missing required argument${missing.length > 1 ? "s" : ""} ${
        missing.map((m) => `\`${m}\``).join(", ")
      }`,
      { missing },
    );
  }
}

/** The options of one request, from the run's. */
function requestOptions(c: MoreContext): RequestOptions {
  const { timeoutMs, maxTimeoutMs, signal } = c.listOptions;
  return {
    timeoutMs,
    maxTimeoutMs,
    signal,
    returnInputRequired: c.returnInputRequired,
    onWarning: warn,
  };
}

/** Writes an outcome (the envelope or a view of it), reports its error; returns its exit code. */
async function written(
  c: MoreContext,
  outcome: RequestOutcome,
  render: (envelope: Record<string, unknown>, output: ClientOutput) => string,
): Promise<number> {
  await writeStdout(render(outcome.envelope, c.output));
  if (outcome.error) reportError(outcome.error, c.output);
  return outcome.exitCode;
}
