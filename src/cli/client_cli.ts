/** The ad hoc MCP tool client commands: server-info, tools list|show|call|run. */
import { SERVER_INFO, TOOLS_CALL, TOOLS_LIST, TOOLS_RUN, TOOLS_SHOW } from "./commands.ts";
import { type CommandDecl, parseCommand, type ValuesOf, wordIndices } from "./declare.ts";
import { OptionFileError, parseJsonText, readOptionFile } from "../option_file.ts";
import {
  normalized,
  refuseBroadDefault,
  resolveFromInvocation,
  rootFlag,
  UsageError,
} from "../config.ts";
import { serverPermissions } from "./server_permissions.ts";
import { CLIENT_EXIT, ClientError } from "../client/errors.ts";
import { type Target, targetFromConfig } from "../client/config_file.ts";
import {
  type Asker,
  fromResponsesFile,
  type Interaction,
  nonInteractive,
  terminalPrompts,
} from "../client/interaction.ts";
import { openSession, type Session } from "../client/session.ts";
import { authSettingsFrom } from "./auth_flags.ts";
import { authProviderFor } from "../client/auth/setup.ts";
import {
  callTool,
  CONTRACT_VERSION,
  flatten,
  listToolsPages,
  serverInfo,
  showTool,
} from "../client/commands.ts";
import { PROGRESS_DELAY_MS, progressLine } from "../client/progress.ts";
import { readArguments } from "./arguments.ts";
import { outputBeforeParse, StdoutClosed, writeStdout } from "./output.ts";
import { type InterruptListener, onInterrupt } from "./interrupt.ts";
import { palette, stderrColor, stdoutColor } from "./colors.ts";
import { serverInfoText, terminalJson, terminalSafe } from "./pretty.ts";
import {
  connectionWords,
  helpText,
  programName,
  schemaHelp,
  seeHelp,
  SUBCOMMANDS,
} from "./help.ts";
import { shellQuote } from "./shell_quote.ts";
import {
  didYouMean,
  shorthandTypeHint,
  unknownArgumentMessage,
  unknownKey,
  withPointer,
} from "./suggest.ts";
import { withoutSdkToolExclusionWarnings } from "../workarounds/sdk_console_warn.ts";
import { denoPath } from "../launch/deno.ts";
import { denoArgs } from "../launch/child.ts";
import { getOperation } from "../operations/registry.ts";
import { readOnlyMessage } from "../workspace/workspace.ts";

import {
  type ClientOutput,
  line,
  renderCall,
  renderList,
  reportError,
  warn,
} from "./client_render.ts";

export type { ClientOutput };

/** The values of any client command's flags (a flag the command does not take is absent). */
type Values =
  & ValuesOf<typeof TOOLS_LIST>
  & ValuesOf<typeof TOOLS_CALL>
  & ValuesOf<typeof TOOLS_RUN>;

/** The declaration of `server-info` or `tools SUB`. */
const CLIENT_COMMANDS: Readonly<Record<string, CommandDecl>> = {
  "server-info": SERVER_INFO,
  list: TOOLS_LIST,
  show: TOOLS_SHOW,
  call: TOOLS_CALL,
  run: TOOLS_RUN,
};

/**
 * Parses a client command's argv (after `server-info`, or after `tools` with its subcommand
 * word still in it) by its declaration: the values, and the words after the subcommand.
 */
async function parse(decl: CommandDecl, argv: readonly string[], subAt: number | undefined) {
  try {
    const { values, words } = await parseCommand(
      decl,
      subAt === undefined ? argv : argv.toSpliced(subAt, 1),
    );
    return { values: values as unknown as Values, positionals: words };
  } catch (err) {
    if (err instanceof UsageError) throw new ClientError("usage", err.message);
    throw err;
  }
}

/** A `seconds` flag's value (checked by its declaration) in milliseconds. */
function millis(v: string | undefined): number | undefined {
  return v === undefined ? undefined : Math.round(Number(v) * 1000);
}

/** The `--endpoint` value as an http(s) URL, or a usage error. */
export function endpointUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ClientError("usage", `--endpoint ${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ClientError("usage", "--endpoint must be http(s)");
  }
  return url;
}

/**
 * The bundled stdio server on --root, started through the same launcher as every server entry
 * (`serve.ts stdio`, what `cli.ts serve stdio` runs, without the CLI's module graph; decision
 * 0036): permissions scoped to the root, inside bubblewrap when available.
 */
function bundledTarget(values: Values): Target {
  const given = rootFlag(values.root);
  const root = normalized(resolveFromInvocation(given ?? "."));
  // The servers' broad-root rule, checked here: a usage error (exit 2) before anything starts.
  refuseBroadDefault(given, root);
  const serverArgs = ["--root", root, ...(values.write ? ["--write"] : [])];
  const args = denoArgs({
    // Exactly the launcher's permissions, as in the serve:* tasks.
    flags: serverPermissions("stdio", serverArgs, { via: "launcher" }),
    module: new URL("../../serve.ts", import.meta.url),
    args: ["stdio", ...serverArgs],
  });
  return { kind: "stdio", command: denoPath(), args, label: "bundled" };
}

async function resolveTarget(values: Values): Promise<Target> {
  if (values.transport !== undefined && !["stdio", "http", "sse"].includes(values.transport)) {
    throw new ClientError(
      "usage",
      `--transport must be stdio, http or sse, got ${JSON.stringify(values.transport)}`,
    );
  }
  if (values.config !== undefined || values.server !== undefined) {
    if (values.config === undefined || values.server === undefined) {
      throw new ClientError("usage", "--config and --server go together");
    }
    if (values.endpoint !== undefined) {
      throw new ClientError("usage", "give --endpoint or --config, not both");
    }
    if (values["bearer-token-env"] !== undefined) {
      throw new ClientError(
        "usage",
        "--bearer-token-env applies to --endpoint only; a config entry gives its own headers",
      );
    }
    const t = await targetFromConfig(resolveFromInvocation(values.config), values.server, {
      onWarning: warn,
    });
    if (values.transport !== undefined && values.transport !== t.kind) {
      throw new ClientError(
        "usage",
        `--transport ${values.transport} contradicts server ${values.server} (${t.kind})`,
      );
    }
    return t;
  }
  if (values.endpoint !== undefined) {
    if (
      values.transport !== undefined && values.transport !== "http" && values.transport !== "sse"
    ) {
      throw new ClientError(
        "usage",
        "--endpoint takes --transport http (Streamable HTTP, the default) or sse (HTTP+SSE)",
      );
    }
    const url = endpointUrl(values.endpoint);
    const headers: Record<string, string> = {};
    if (values["bearer-token-env"] !== undefined) {
      const token = Deno.env.get(values["bearer-token-env"]);
      if (!token) {
        throw new ClientError(
          "usage",
          `environment variable ${values["bearer-token-env"]} is not set`,
        );
      }
      headers.authorization = `Bearer ${token}`;
    }
    const kind = values.transport === "sse" ? "sse" : "http";
    return { kind, url, headers, label: url.origin };
  }
  if (values.transport === "http" || values.transport === "sse") {
    throw new ClientError("usage", `--transport ${values.transport} needs --endpoint URL`);
  }
  if (values.transport !== undefined && values.transport !== "stdio") {
    throw new ClientError("usage", "--transport must be stdio, http or sse");
  }
  if (values["bearer-token-env"] !== undefined) {
    throw new ClientError("usage", "--bearer-token-env applies to --endpoint only");
  }
  return bundledTarget(values);
}

/**
 * Why the server lists no tool `name` when it is the bundled server started read-only and `name`
 * one of the write operations (the registry says which write): `op NAME`'s sentence for the same
 * mistake. Undefined otherwise.
 */
function readOnlyReason(target: Target, values: Values, name: string): string | undefined {
  if (target.label !== "bundled" || values.write === true) return undefined;
  return getOperation(name)?.needsWrite === true ? readOnlyMessage(name) : undefined;
}

async function chooseInteraction(values: Values, asker: Asker): Promise<Interaction> {
  if (values["input-responses-file"] !== undefined) {
    return await fromResponsesFile(resolveFromInvocation(values["input-responses-file"]));
  }
  if (values["non-interactive"] || !Deno.stdin.isTerminal()) return nonInteractive();
  return terminalPrompts(asker);
}

function chooseOutput(v: string | undefined): ClientOutput {
  if (v === undefined) return Deno.stdout.isTerminal() ? "pretty" : "mcp-json";
  if (v === "mcp-json" || v === "json" || v === "jsonl" || v === "pretty") return v;
  throw new ClientError(
    "usage",
    `--output must be mcp-json, json, jsonl or pretty, got ${JSON.stringify(v)}`,
  );
}

/** Runs one client command; returns the exit code. stdout gets the result, stderr errors and warnings. */
export async function runClient(command: string, argv: string[]): Promise<number> {
  let output: ClientOutput = "mcp-json";
  let session: Session | undefined;
  let authorization: Awaited<ReturnType<typeof authProviderFor>> | undefined;
  const abort = new AbortController();
  let interrupt: InterruptListener | undefined;
  const prog = programName();
  // The command a usage error points to, from the words as typed (before parsing can fail).
  const typed = argv.find((w) => !w.startsWith("-"));
  let path = command === "tools" && typed !== undefined && SUBCOMMANDS.tools.includes(typed)
    ? [command, typed]
    : [command];
  // Where a usage error points instead of help: an unknown tool points at the tool list.
  let pointer: string | undefined;
  const toolsList = `see \`${prog} tools list\``;
  // A flag error is reported in the format the command would have used (pretty on a terminal).
  output = outputBeforeParse(argv, chooseOutput);
  try {
    let sub: string | undefined;
    let subAt: number | undefined;
    if (command === "tools") {
      subAt = wordIndices(TOOLS_CALL, argv)[0];
      sub = subAt === undefined ? undefined : argv[subAt];
      const subs = SUBCOMMANDS.tools;
      if (sub === undefined || !subs.includes(sub)) {
        throw new ClientError(
          "usage",
          sub === undefined
            ? `tools takes ${subs.join(", ")}`
            : `unknown subcommand tools ${JSON.stringify(sub)}${
              didYouMean(sub, subs)
            }; tools takes ${subs.join(", ")}`,
        );
      }
      path = [command, sub];
    }
    const { values, positionals: rest } = await parse(
      CLIENT_COMMANDS[sub ?? command],
      argv,
      subAt,
    );
    output = chooseOutput(values.output);
    if (values.help && !(sub === "call" && rest.length >= 1)) {
      // main.ts answers every other --help; kept here for direct callers of runClient.
      await writeStdout(helpText(path, prog, argv) ?? "");
      return CLIENT_EXIT.ok;
    }
    const want = command === "server-info" || sub === "list" ? 0 : 1;
    // `tools call NAME key=value ...`: the words after NAME are argument shorthand.
    if (sub === "call" ? rest.length < 1 : rest.length !== want) {
      throw new ClientError(
        "usage",
        `wrong number of arguments for ${[command, sub].filter(Boolean).join(" ")}`,
      );
    }
    if (sub === "call") path = [command, sub, rest[0]];
    const timeoutMs = millis(values.timeout)!;
    const maxTimeoutMs = millis(values["max-timeout"]);
    const maxPages = Number(values["max-pages"]);
    const maxInputRounds = Number(values["max-input-rounds"]);
    const callArgs = sub === "call" && !values.help
      ? await readArguments(values, rest.slice(1))
      : undefined;
    const target = await resolveTarget(values);
    const authSettings = await authSettingsFrom(values, target);
    const interaction = await chooseInteraction(values, {
      label: target.label,
      serverName: () => session?.client.getServerVersion()?.name,
    });
    interrupt = onInterrupt(() => abort.abort());
    if (authSettings && target.kind !== "stdio") {
      authorization = await authProviderFor(target.url, authSettings);
    }
    session = await openSession({
      authProvider: authorization?.provider,
      target,
      protocolVersion: values["protocol-version"],
      interaction,
      maxInputRounds,
      connectTimeoutMs: millis(values["connect-timeout"])!,
      serverLogs: values["server-logs"] === true,
      maxMessageBytes: Number(values["max-message-bytes"]),
    });
    const meta = { era: session.era, protocolVersion: session.protocolVersion };
    const listOptions = { maxPages, signal: abort.signal, timeoutMs, maxTimeoutMs };

    if (command === "server-info") {
      const info = serverInfo(session);
      await writeStdout(
        output === "pretty" ? serverInfoText(info, palette(stdoutColor())) : line(
          output === "mcp-json"
            ? { contractVersion: CONTRACT_VERSION, operation: "server-info", ...info }
            : info,
        ),
      );
      return CLIENT_EXIT.ok;
    }
    if (sub === "list") {
      const pages = await listToolsPages(session, {
        ...listOptions,
        singlePage: values["single-page"] === true,
        cursor: values.cursor,
      });
      await writeStdout(renderList(pages, meta, output, session.sendsToolHeaders));
      return CLIENT_EXIT.ok;
    }
    // A tool the server does not list: the error points at the list, not at help. A write
    // tool of the bundled read-only server says to pass --write (as `op` does) and points at
    // the list with it.
    const noTool = (name: string, fallback: () => ClientError): ClientError => {
      const reason = readOnlyReason(target, values, name);
      pointer = reason === undefined ? toolsList : `see \`${prog} tools list --write\``;
      return reason === undefined
        ? fallback()
        : new ClientError("usage", `no tool named ${JSON.stringify(name)}: ${reason}`);
    };
    const findTool = (name: string) =>
      showTool(session!, name, listOptions).catch((err) => {
        if (err instanceof ClientError && err.failure === "usage") throw noTool(name, () => err);
        throw err;
      });
    if (sub === "call" && values.help) {
      // `tools call NAME --help`: NAME's arguments as the server lists them. Its example
      // carries the connection flags given, so pasted it calls the same server; the server's
      // words are shell-quoted there and made safe for a terminal everywhere.
      const { tool } = await findTool(rest[0]);
      await writeStdout(terminalSafe(schemaHelp({
        usage: `${prog} tools call ${shellQuote(String(tool.name))}`,
        name: String(tool.name),
        title: typeof tool.title === "string" ? tool.title : undefined,
        description: typeof tool.description === "string" ? tool.description : undefined,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations as Record<string, unknown> | undefined,
        flags: connectionWords(TOOLS_CALL, argv),
      })));
      return CLIENT_EXIT.ok;
    }
    if (sub === "show") {
      const { tool, pages } = await findTool(rest[0]);
      await writeStdout(
        output === "pretty" ? terminalJson(JSON.stringify(tool, null, 2)) + "\n" : line({
          contractVersion: CONTRACT_VERSION,
          operation: "tools/show",
          tool,
          metadata: { ...meta, pageCount: pages.length },
        }),
      );
      return CLIENT_EXIT.ok;
    }
    // call and run need the tools' schemas (validation) and warm the SDK's header mirroring.
    const inventory = new Map(
      flatten(await listToolsPages(session, listOptions), {
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
    const callOne = (name: string, args: Record<string, unknown>) => {
      const listed = inventory.get(name);
      if (!listed) {
        throw noTool(name, () =>
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
      const unknown = values["skip-local-validation"]
        ? undefined
        : unknownKey(tool.inputSchema, args);
      if (unknown !== undefined) {
        // The same sentence (and exit code 2) as `op` gives for the same mistake.
        throw new ClientError(
          "usage",
          `arguments do not match ${name}'s inputSchema: ${
            unknownArgumentMessage(unknown.key, unknown.known)
          }`,
          { details: { argument: unknown.key, known: unknown.known } },
        );
      }
      return callTool(session!, name, args, {
        timeoutMs,
        maxTimeoutMs,
        signal: abort.signal,
        skipLocalValidation: values["skip-local-validation"] === true,
        returnInputRequired: !interaction.advertisesElicitation,
        tool,
        onWarning: warn,
        onProgress: (p) => progress.update(name, p),
      }).finally(() => progress.clear());
    };
    if (sub === "call") {
      const outcome = await callOne(rest[0], callArgs!);
      await writeStdout(renderCall(outcome.envelope, output, { name: rest[0], args: callArgs! }));
      if (outcome.error) reportError(outcome.error, output);
      return outcome.exitCode;
    }
    // run: JSONL of {"name","arguments"}; one tools/call each, in order, never a batch.
    return await runCalls(rest[0], callOne, {
      keepGoing: values["keep-going"] === true,
      signal: abort.signal,
    });
  } catch (err) {
    // The reader of stdout went away (`| head`): end quietly, exit 0 (INTERFACES.md).
    if (err instanceof StdoutClosed) return CLIENT_EXIT.ok;
    // readArguments (shared with `op`) reports bad argument sources as UsageError.
    // A response over the message cap ended the connection: that, not "connection closed".
    const e = session?.failure() !== undefined
      ? session.failure()!
      : err instanceof ClientError
      ? err
      : err instanceof UsageError
      ? new ClientError("usage", err.message)
      : new ClientError("protocol", (err as Error).message);
    reportError(
      abort.signal.aborted && e.failure !== "usage"
        ? new ClientError("timeout", `interrupted: ${e.message}`)
        : e.failure === "usage"
        ? new ClientError(
          "usage",
          withPointer(
            e.message + shorthandTypeHint(e.message, shorthandWords(argv)),
            pointer ?? seeHelp(path, prog),
          ),
          {
            details: e.details,
            cause: e,
          },
        )
        : e,
      output,
    );
    return abort.signal.aborted && e.failure !== "usage" ? CLIENT_EXIT.timeout : e.exitCode;
  } finally {
    interrupt?.dispose();
    await session?.close();
    await authorization?.close();
  }
}

/** One tools/call of `tools run`: its envelope, the client error beside it, and its exit code. */
type CallOne = (name: string, args: Record<string, unknown>) => Promise<{
  envelope: Record<string, unknown>;
  error?: ClientError;
  exitCode: number;
}>;

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
  const text = source === "-"
    ? await new Response(Deno.stdin.readable).text()
    : await readOptionFile(resolveFromInvocation(source), "tools run").catch((err) => {
      throw new ClientError("usage", err.message);
    });
  const items = text.split("\n").map((l, i) => ({ l: l.trim(), n: i + 1 })).filter((x) =>
    x.l !== ""
  );
  let worst: number = CLIENT_EXIT.ok;
  for (const [index, { l, n }] of items.entries()) {
    let code: number;
    let envelope: Record<string, unknown>;
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
      const outcome = await callOne(item.name, (item.arguments ?? {}) as Record<string, unknown>);
      envelope = { index, line: n, ...outcome.envelope };
      if (outcome.error) envelope.clientError = outcome.error.toJSON();
      code = outcome.exitCode;
    } catch (err) {
      const e = err instanceof ClientError
        ? err
        : err instanceof OptionFileError
        ? new ClientError("usage", err.message)
        : new ClientError("usage", `line ${n}: ${(err as Error).message}`);
      envelope = {
        index,
        line: n,
        contractVersion: CONTRACT_VERSION,
        operation: "tools/call",
        clientError: e.toJSON(),
      };
      code = e.exitCode;
    }
    await writeStdout(line(envelope));
    worst = Math.max(worst, code);
    if (code !== CLIENT_EXIT.ok && !options.keepGoing) break;
    if (options.signal.aborted) break;
  }
  return worst;
}

/** The `key=value` shorthand words of argv (for the `key:=` hint of a type mismatch). */
function shorthandWords(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).filter((w) => !w.startsWith("-") && w.includes("="));
}
