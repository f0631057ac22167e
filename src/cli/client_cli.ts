/**
 * The ad hoc MCP client commands: server-info, tools list|show|call|run, resources
 * list|templates|read, prompts list|get and ping. A run is a sequence of steps: parse argv by the
 * command's declaration, connect (target, interaction, authorization, session), run the command,
 * and on failure report the classified error and its exit code.
 */
import { streams } from "../std_streams.ts";
import {
  PING,
  PROMPTS_GET,
  PROMPTS_LIST,
  RESOURCES_LIST,
  RESOURCES_READ,
  RESOURCES_TEMPLATES,
  SERVER_INFO,
  TOOLS_CALL,
  TOOLS_LIST,
  TOOLS_RUN,
  TOOLS_SHOW,
} from "./commands.ts";
import { type CommandDecl, parseCommand, wordIndices } from "./declare.ts";
import { resolveFromInvocation, UsageError } from "../config.ts";
import { CLIENT_EXIT, ClientError } from "../client/errors.ts";
import type { Target } from "../client/config_file.ts";
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
import { listToolsPages, serverInfo, showTool } from "../client/commands.ts";
import { type GivenArguments, readArguments } from "./arguments.ts";
import { outputBeforeParse, StdoutClosed, writeStdout } from "./output.ts";
import { type InterruptListener, onInterrupt } from "./interrupt.ts";
import { terminalSafe } from "./pretty.ts";
import {
  connectionWords,
  helpText,
  programName,
  schemaHelp,
  seeHelp,
  SUBCOMMANDS,
} from "./help.ts";
import { shellQuote } from "./shell_quote.ts";
import { didYouMean, shorthandTypeHint, withPointer } from "./suggest.ts";
import { getOperation } from "../operations/registry.ts";
import { readOnlyMessage } from "../workspace/workspace.ts";
import { type ClientValues, resolveTarget } from "./client_target.ts";
import { callCommand, type CallContext, runCommand } from "./client_calls.ts";
import {
  getCommand,
  isMoreCommand,
  listCommand,
  type MoreContext,
  pingCommand,
  readCommand,
} from "./client_resources.ts";
import {
  type ClientOutput,
  renderList,
  renderServerInfo,
  renderShow,
  reportError,
} from "./client_render.ts";

export type { ClientOutput };
export { endpointUrl } from "./client_target.ts";

/** The declaration of each client command, by its path (`server-info`, `tools call`). */
const CLIENT_COMMANDS: Readonly<Record<string, CommandDecl>> = {
  "server-info": SERVER_INFO,
  "tools list": TOOLS_LIST,
  "tools show": TOOLS_SHOW,
  "tools call": TOOLS_CALL,
  "tools run": TOOLS_RUN,
  "resources list": RESOURCES_LIST,
  "resources templates": RESOURCES_TEMPLATES,
  "resources read": RESOURCES_READ,
  "prompts list": PROMPTS_LIST,
  "prompts get": PROMPTS_GET,
  ping: PING,
};

/**
 * A command with subcommands read as one declaration: the flags of every subcommand, so that the
 * subcommand word is found wherever it stands among them (src/cli/declare.ts wordIndices).
 */
function familyDecl(command: string): CommandDecl {
  const decls = (SUBCOMMANDS[command] ?? []).map((sub) => CLIENT_COMMANDS[`${command} ${sub}`]);
  return { ...decls[0], flags: Object.assign({}, ...decls.map((d) => d.flags)) };
}

/**
 * Parses a client command's argv (after `server-info` or `ping`, or after `tools`, `resources` or
 * `prompts` with its subcommand word still in it) by its declaration: the values, and the words
 * after the subcommand.
 */
async function parse(decl: CommandDecl, argv: readonly string[], subAt: number | undefined) {
  try {
    const { values, words } = await parseCommand(
      decl,
      subAt === undefined ? argv : argv.toSpliced(subAt, 1),
    );
    return { values: values as unknown as ClientValues, positionals: words };
  } catch (err) {
    if (err instanceof UsageError) throw new ClientError("usage", err.message);
    throw err;
  }
}

/** A `seconds` flag's value (checked by its declaration) in milliseconds. */
function millis(v: string | undefined): number | undefined {
  return v === undefined ? undefined : Math.round(Number(v) * 1000);
}

/**
 * Why the server lists no tool `name` when it is the bundled server started read-only and `name`
 * one of the write operations (the registry says which write): `op NAME`'s sentence for the same
 * mistake. Undefined otherwise.
 */
function readOnlyReason(target: Target, values: ClientValues, name: string): string | undefined {
  if (target.label !== "bundled" || values.write === true) return undefined;
  return getOperation(name)?.needsWrite === true ? readOnlyMessage(name) : undefined;
}

/** How input requests are answered: a responses file, none (non-interactive), or a person. */
async function chooseInteraction(values: ClientValues, asker: Asker): Promise<Interaction> {
  if (values["input-responses-file"] !== undefined) {
    return await fromResponsesFile(resolveFromInvocation(values["input-responses-file"]));
  }
  if (values["non-interactive"] || !streams().stdinIsTerminal()) return nonInteractive();
  return terminalPrompts(asker);
}

/** The --output value (default: pretty on a terminal, else mcp-json), or a usage error. */
function chooseOutput(v: string | undefined): ClientOutput {
  if (v === undefined) return streams().stdout.isTerminal() ? "pretty" : "mcp-json";
  if (v === "mcp-json" || v === "json" || v === "jsonl" || v === "pretty") return v;
  throw new ClientError(
    "usage",
    `--output must be mcp-json, json, jsonl or pretty, got ${JSON.stringify(v)}`,
  );
}

/**
 * A client command as parsed: its path (`tools call`), subcommand (`call`), flag values, the
 * words after it.
 */
interface Invocation {
  key: string;
  sub: string | undefined;
  values: ClientValues;
  rest: string[];
}

/** What the command works with once the session is open. */
interface Connected {
  session: Session;
  target: Target;
  interaction: Interaction;
  /** `tools call`'s and `prompts get`'s arguments, read before connecting. */
  callArgs: GivenArguments | undefined;
  listOptions: CallContext["listOptions"];
}

/** Runs one client command; returns the exit code. stdout gets the result, stderr errors and warnings. */
export async function runClient(command: string, argv: string[]): Promise<number> {
  const run = new ClientRun(command, argv);
  try {
    return await run.execute();
  } catch (err) {
    return run.failed(err);
  } finally {
    await run.close();
  }
}

/**
 * One client command's run: its steps, what its failure report needs (the output, the command a
 * usage error points to, or the tool list instead), and what closing releases (the interrupt
 * listener, the session, the authorization).
 */
class ClientRun {
  readonly #command: string;
  readonly #argv: string[];
  readonly #abort = new AbortController();
  readonly #prog = programName();
  #output: ClientOutput;
  /** The command a usage error's help pointer names. */
  #path: string[];
  /** Where a usage error points instead of help: an unknown tool points at the tool list. */
  #pointer: string | undefined;
  #session: Session | undefined;
  #authorization: Awaited<ReturnType<typeof authProviderFor>> | undefined;
  #interrupt: InterruptListener | undefined;

  constructor(command: string, argv: string[]) {
    this.#command = command;
    this.#argv = argv;
    // The command a usage error points to, from the words as typed (before parsing can fail).
    const typed = argv.find((w) => !w.startsWith("-"));
    this.#path = typed !== undefined && SUBCOMMANDS[command]?.includes(typed) === true
      ? [command, typed]
      : [command];
    // A flag error is reported in the format the command would have used (pretty on a terminal).
    this.#output = outputBeforeParse(argv, chooseOutput);
  }

  /** Parses, connects and runs the command; returns its exit code. */
  async execute(): Promise<number> {
    const invocation = await this.#parse();
    if (invocation === undefined) return CLIENT_EXIT.ok;
    const connected = await this.#connect(invocation);
    return await this.#dispatch(invocation, connected);
  }

  /** Parses argv by the command's declaration; undefined when help was asked for (and written). */
  async #parse(): Promise<Invocation | undefined> {
    const command = this.#command, argv = this.#argv;
    const { sub, subAt } = SUBCOMMANDS[command] ? subcommandOf(command, argv) : {};
    if (sub !== undefined) this.#path = [command, sub];
    const key = this.#path.join(" ");
    const { values, positionals: rest } = await parse(CLIENT_COMMANDS[key], argv, subAt);
    this.#output = chooseOutput(values.output);
    if (values.help && !(key === "tools call" && rest.length >= 1)) {
      // main.ts answers every other --help; kept here for direct callers of runClient.
      await writeStdout(helpText(this.#path, this.#prog, argv) ?? "");
      return undefined;
    }
    checkArity(key, rest);
    if (key === "tools call") this.#path = [command, "call", rest[0]];
    return { key, sub, values, rest };
  }

  /**
   * Reads a call's arguments, resolves the target, chooses how input is answered, and opens the
   * session (authorized when the flags ask for it), in that order.
   */
  async #connect({ key, values, rest }: Invocation): Promise<Connected> {
    const timeoutMs = millis(values.timeout)!;
    const maxTimeoutMs = millis(values["max-timeout"]);
    const callArgs = (key === "tools call" && !values.help) || key === "prompts get"
      ? await readArguments(values, rest.slice(1))
      : undefined;
    const target = await resolveTarget(values);
    const authSettings = await authSettingsFrom(values, target);
    const interaction = await chooseInteraction(values, {
      label: target.label,
      serverName: () => this.#session?.client.getServerVersion()?.name,
    });
    this.#interrupt = onInterrupt(() => this.#abort.abort());
    if (authSettings && target.kind !== "stdio") {
      this.#authorization = await authProviderFor(target.url, authSettings);
    }
    const session = this.#session = await openSession({
      authProvider: this.#authorization?.provider,
      target,
      protocolVersion: values["protocol-version"],
      interaction,
      maxInputRounds: Number(values["max-input-rounds"]),
      connectTimeoutMs: millis(values["connect-timeout"])!,
      serverLogs: values["server-logs"] === true,
      maxMessageBytes: Number(values["max-message-bytes"]),
      signal: this.#abort.signal,
    });
    const maxPages = Number(values["max-pages"]);
    const listOptions = { maxPages, signal: this.#abort.signal, timeoutMs, maxTimeoutMs };
    return { session, target, interaction, callArgs, listOptions };
  }

  /** Runs the parsed command on the open session and writes its result; returns the exit code. */
  async #dispatch({ key, sub, values, rest }: Invocation, c: Connected): Promise<number> {
    const { session } = c;
    if (isMoreCommand(key)) return await this.#more(key, values, rest, c);
    const meta = { era: session.era, protocolVersion: session.protocolVersion };
    if (this.#command === "server-info") {
      await writeStdout(renderServerInfo(serverInfo(session), this.#output));
      return CLIENT_EXIT.ok;
    }
    if (sub === "list") {
      const pages = await listToolsPages(session, {
        ...c.listOptions,
        singlePage: values["single-page"] === true,
        cursor: values.cursor,
      });
      await writeStdout(renderList(pages, meta, this.#output, session.sendsToolHeaders));
      return CLIENT_EXIT.ok;
    }
    if (sub === "call" && values.help) return await this.#toolHelp(c, values, rest[0]);
    if (sub === "show") {
      const { tool, pages } = await this.#findTool(c, values, rest[0]);
      // For people, the text `tools call NAME --help` shows; the JSON outputs are lossless.
      await writeStdout(
        this.#output === "pretty"
          ? this.#toolText(tool, TOOLS_SHOW)
          : renderShow(tool, pages, meta),
      );
      return CLIENT_EXIT.ok;
    }
    const calls: CallContext = {
      session,
      interaction: c.interaction,
      listOptions: c.listOptions,
      skipLocalValidation: values["skip-local-validation"] === true,
      noTool: (name, fallback) => this.#noTool(c.target, values, name, fallback),
    };
    if (sub === "call") return await callCommand(calls, rest[0], c.callArgs!, this.#output);
    // run: JSONL of {"name","arguments"}; one tools/call each, in order, never a batch.
    return await runCommand(calls, rest[0], values["keep-going"] === true);
  }

  /** `resources list|templates|read`, `prompts list|get` and `ping` (client_resources.ts). */
  async #more(key: string, values: ClientValues, rest: string[], c: Connected): Promise<number> {
    const more: MoreContext = {
      session: c.session,
      output: this.#output,
      listOptions: c.listOptions,
      returnInputRequired: !c.interaction.advertisesElicitation,
    };
    if (key === "resources read") return await readCommand(more, rest[0]);
    if (key === "ping") return await pingCommand(more);
    if (key === "prompts get") {
      return await getCommand(more, rest[0], c.callArgs!.values, {
        withheld: c.callArgs!.withheld,
        skipLocalValidation: values["skip-local-validation"] === true,
        noPrompt: (error) => {
          // An unknown prompt points at the list, as an unknown tool does.
          this.#pointer = `see \`${this.#prog} prompts list\``;
          return error;
        },
      });
    }
    return await listCommand(more, key, {
      singlePage: values["single-page"] === true,
      cursor: values.cursor,
    });
  }

  /**
   * `tools call NAME --help`: NAME's arguments as the server lists them. Its example carries the
   * connection flags given, so pasted it calls the same server; the server's words are
   * shell-quoted there and made safe for a terminal everywhere.
   */
  async #toolHelp(c: Connected, values: ClientValues, name: string): Promise<number> {
    const { tool } = await this.#findTool(c, values, name);
    await writeStdout(this.#toolText(tool, TOOLS_CALL));
    return CLIENT_EXIT.ok;
  }

  /**
   * One tool for people: its arguments table, annotations, the keys of its structured result,
   * and an example call carrying the connection flags of this command line (read by `decl`).
   */
  #toolText(tool: Record<string, unknown>, decl: CommandDecl): string {
    const output = tool.outputSchema as { properties?: Record<string, unknown> } | undefined;
    const keys = output?.properties ? Object.keys(output.properties) : [];
    return terminalSafe(
      schemaHelp({
        usage: `${this.#prog} tools call ${shellQuote(String(tool.name))}`,
        name: String(tool.name),
        title: typeof tool.title === "string" ? tool.title : undefined,
        description: typeof tool.description === "string" ? tool.description : undefined,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations as Record<string, unknown> | undefined,
        flags: connectionWords(decl, this.#argv),
      }) + (keys.length > 0 ? `\nStructured result: ${keys.join(", ")}\n` : ""),
    );
  }

  /** NAME from every page; a name the server does not list is #noTool's error. */
  #findTool(c: Connected, values: ClientValues, name: string): ReturnType<typeof showTool> {
    return showTool(c.session, name, c.listOptions).catch((err) => {
      if (err instanceof ClientError && err.failure === "usage") {
        throw this.#noTool(c.target, values, name, () => err);
      }
      throw err;
    });
  }

  /**
   * A tool the server does not list: the error points at the list, not at help. A write tool of
   * the bundled read-only server says to pass --write (as `op` does) and points at the list
   * with it.
   */
  #noTool(
    target: Target,
    values: ClientValues,
    name: string,
    fallback: () => ClientError,
  ): ClientError {
    const reason = readOnlyReason(target, values, name);
    this.#pointer = reason === undefined
      ? `see \`${this.#prog} tools list\``
      : `see \`${this.#prog} tools list --write\``;
    return reason === undefined
      ? fallback()
      : new ClientError("usage", `no tool named ${JSON.stringify(name)}: ${reason}`);
  }

  /** Reports what ended the run on stderr, in the run's output; returns the exit code. */
  failed(err: unknown): number {
    // The reader of stdout went away (`| head`): end quietly, exit 0 (INTERFACES.md).
    if (err instanceof StdoutClosed) return CLIENT_EXIT.ok;
    // A response over the message cap ended the connection: that, not "connection closed".
    const e = this.#session?.failure() ?? asClientError(err);
    const interrupted = this.#abort.signal.aborted && e.failure !== "usage";
    reportError(
      interrupted
        ? new ClientError("timeout", `interrupted: ${e.message}`)
        : e.failure === "usage"
        ? this.#pointed(e)
        : e,
      this.#output,
    );
    return interrupted ? CLIENT_EXIT.timeout : e.exitCode;
  }

  /** A usage error with a `key:=` hint when it fits, pointing at the tool list or the help. */
  #pointed(e: ClientError): ClientError {
    return new ClientError(
      "usage",
      withPointer(
        e.message + shorthandTypeHint(e.message, shorthandWords(this.#argv)),
        this.#pointer ?? seeHelp(this.#path, this.#prog),
      ),
      {
        details: e.details,
        cause: e,
      },
    );
  }

  /** Releases what the run holds: the interrupt listener, then the session, the authorization. */
  async close(): Promise<void> {
    this.#interrupt?.dispose();
    await this.#session?.close();
    await this.#authorization?.close();
  }
}

/** Any error as a client error: readArguments (shared with `op`) throws UsageError. */
function asClientError(err: unknown): ClientError {
  return err instanceof ClientError
    ? err
    : err instanceof UsageError
    ? new ClientError("usage", err.message)
    : new ClientError("protocol", (err as Error).message);
}

/**
 * The subcommand word of `tools`, `resources` or `prompts` and its index in argv; an unknown or
 * missing one is a usage error.
 */
function subcommandOf(command: string, argv: readonly string[]): { sub: string; subAt: number } {
  const subAt = wordIndices(familyDecl(command), argv)[0];
  const sub = subAt === undefined ? undefined : argv[subAt];
  const subs = SUBCOMMANDS[command];
  if (sub === undefined || !subs.includes(sub)) {
    throw new ClientError(
      "usage",
      sub === undefined
        ? `${command} takes ${subs.join(", ")}`
        : `unknown subcommand ${command} ${JSON.stringify(sub)}${
          didYouMean(sub, subs)
        }; ${command} takes ${subs.join(", ")}`,
    );
  }
  return { sub, subAt };
}

/** The commands that take one word (a name, a URI, a file). */
const ONE_WORD: ReadonlySet<string> = new Set(["tools show", "tools run", "resources read"]);
/** The commands that take a name and its `key=value` argument shorthand. */
const NAME_AND_ARGUMENTS: ReadonlySet<string> = new Set(["tools call", "prompts get"]);

/**
 * The words after the subcommand: a name and its `key=value` argument shorthand for `tools call`
 * and `prompts get`, one for `tools show`, `tools run` and `resources read`, none for the rest.
 */
function checkArity(key: string, rest: readonly string[]): void {
  const ok = NAME_AND_ARGUMENTS.has(key)
    ? rest.length >= 1
    : rest.length === (ONE_WORD.has(key) ? 1 : 0);
  if (!ok) throw new ClientError("usage", `wrong number of arguments for ${key}`);
}

/** The `key=value` shorthand words of argv (for the `key:=` hint of a type mismatch). */
function shorthandWords(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).filter((w) => !w.startsWith("-") && w.includes("="));
}
