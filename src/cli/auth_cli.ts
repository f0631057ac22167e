/**
 * The `auth login|status|logout` commands: MCP authorization (OAuth 2.1) for remote servers.
 * This file reads the subcommand and its flags, re-launches when the credentials directory is
 * out of reach, runs the subcommand (auth_subcommands.ts) and reports a failure.
 */
import { streams, writeTextSync } from "../std_streams.ts";
import { AUTH_LOGIN, AUTH_LOGOUT, AUTH_STATUS } from "./commands.ts";
import { type CommandDecl, parseCommand, wordIndices } from "./declare.ts";
import { UsageError } from "../config.ts";
import { CLIENT_EXIT, ClientError } from "../client/errors.ts";
import { fileStore } from "../client/auth/store.ts";
import { authFailure } from "../client/auth/failure.ts";
import { StdoutClosed } from "./output.ts";
import { programName, seeHelp, SUBCOMMANDS } from "./help.ts";
import { didYouMean } from "./suggest.ts";
import { relaunchWithCredentials } from "./auth_relaunch.ts";
import {
  authLogin,
  authLogout,
  authStatus,
  type AuthSubcommand,
  type AuthValues,
  jsonLine,
} from "./auth_subcommands.ts";

// Their homes are client/auth/failure.ts and sign_in.ts; tests import them from here.
export { authFailure } from "../client/auth/failure.ts";
export { storeProvider } from "../client/auth/sign_in.ts";

/** Each `auth` subcommand: its declaration and its work. */
const AUTH_COMMANDS: Readonly<Record<string, { decl: CommandDecl; run: AuthSubcommand }>> = {
  login: { decl: AUTH_LOGIN, run: authLogin },
  status: { decl: AUTH_STATUS, run: authStatus },
  logout: { decl: AUTH_LOGOUT, run: authLogout },
};

/** The command a usage error points to, from the words as typed (before parsing can fail). */
function helpPath(argv: string[]): string[] {
  const typed = argv.find((w) => !w.startsWith("-"));
  return typed !== undefined && SUBCOMMANDS.auth.includes(typed) ? ["auth", typed] : ["auth"];
}

/** The subcommand named in `argv` and its flag values; usage errors for anything else. */
async function parseAuth(argv: string[]): Promise<{ sub: string; values: AuthValues }> {
  const subAt = wordIndices(AUTH_LOGIN, argv)[0];
  const sub = subAt === undefined ? undefined : argv[subAt];
  const subs = SUBCOMMANDS.auth;
  if (sub === undefined || !subs.includes(sub)) {
    throw new ClientError(
      "usage",
      sub !== undefined
        ? `unknown subcommand auth ${JSON.stringify(sub)}${didYouMean(sub, subs)}; auth takes ${
          subs.join(", ")
        }`
        : `auth takes ${subs.join(", ")}`,
    );
  }
  try {
    const parsed = await parseCommand(AUTH_COMMANDS[sub].decl, argv.toSpliced(subAt!, 1));
    return { sub, values: parsed.values as unknown as AuthValues };
  } catch (err) {
    if (err instanceof UsageError) throw new ClientError("usage", err.message);
    throw err;
  }
}

/** Whether output is JSON: `--output` when given, else `json` (stdout is not a terminal). */
function outputIsJson(values: AuthValues, json: boolean): boolean {
  if (values.output === undefined) return json;
  if (values.output !== "json" && values.output !== "pretty") {
    throw new ClientError("usage", "--output must be json or pretty");
  }
  return values.output === "json";
}

/** Reports a failure on stderr (a usage error points to the help); returns its exit code. */
function reportFailure(err: unknown, path: string[], useJson: boolean): number {
  // The reader of stdout went away (`| head`): end quietly, exit 0 (INTERFACES.md).
  if (err instanceof StdoutClosed) return CLIENT_EXIT.ok;
  let e = authFailure(err);
  if (e.failure === "usage") {
    e = new ClientError("usage", `${e.message}; ${seeHelp(path, programName())}`, {
      details: e.details,
      cause: e,
    });
  }
  writeTextSync(
    streams().stderr,
    useJson ? jsonLine({ error: e.toJSON() }) : `error (${e.failure}): ${e.message}\n`,
  );
  return e.exitCode;
}

/** Runs `auth login|status|logout`; returns the exit code (INTERFACES.md). */
export async function runAuth(argv: string[]): Promise<number> {
  let useJson = !streams().stdout.isTerminal();
  const path = helpPath(argv);
  try {
    const { sub, values } = await parseAuth(argv);
    useJson = outputIsJson(values, useJson);
    const relaunched = await relaunchWithCredentials(argv);
    if (relaunched !== undefined) return relaunched;
    const store = fileStore();
    return await AUTH_COMMANDS[sub].run(values, store, useJson);
  } catch (err) {
    return reportFailure(err, path, useJson);
  }
}
