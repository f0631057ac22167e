/**
 * stdio MCP server on one workspace: `serve_stdio.ts [--root DIR] [--write] [--limit name=N]`.
 * stdout carries only protocol messages; logs go to stderr.
 */
import { parseArgs } from "node:util";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import {
  assertPermissions,
  invocationDirectory,
  parseLimitFlags,
  UsageError,
} from "./src/config.ts";
import { Workspace } from "./src/workspace/workspace.ts";
import { createServerFactory } from "./src/server/factory.ts";

async function main(): Promise<number> {
  try {
    const { values } = parseArgs({
      args: Deno.args,
      options: {
        root: { type: "string" },
        write: { type: "boolean" },
        limit: { type: "string", multiple: true },
      },
      strict: true,
    });
    const write = values.write === true;
    const workspace = await Workspace.open({
      root: values.root ?? invocationDirectory(),
      writable: write,
      limits: parseLimitFlags(values.limit ?? []),
    });
    assertPermissions(
      { root: workspace.policy.rootReal, write, limits: {} },
      workspace.policy.rootReal,
    );
    serveStdio(createServerFactory({ workspace }), {
      onerror: (err) => console.error(`wmcp: ${err.message}`),
    });
    console.error(
      `wmcp: serving ${workspace.policy.rootReal} over stdio (${
        write ? "read-write" : "read-only"
      })`,
    );
    return 0;
  } catch (err) {
    console.error(
      `wmcp: ${err instanceof UsageError ? "" : "cannot start: "}${(err as Error).message}`,
    );
    return 2;
  }
}

if (import.meta.main) {
  const code = await main();
  if (code !== 0) Deno.exit(code);
}
